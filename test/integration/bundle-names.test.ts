/**
 * The bundle names constructors, not closures (scripts/build-bin.mjs, nameOnlyConstructors):
 * esbuild's `__name` helper, run each time a named function is created, sets `.name` on classes
 * and `function`s, and leaves arrow and async functions as they are (a `defineProperty` per
 * closure per call otherwise). Read from the built runtime chunk itself.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/proxy.js";

type NameHelper = <T extends object>(target: T, name: string) => T;

/**
 * The bundle's `__name`, found by its text (as patched or as esbuild writes it) and the name its
 * chunk exports it under: nothing else of the bundle is run.
 */
async function nameHelper(): Promise<NameHelper> {
  const dir = path.join(ROOT, "dist/bundle");
  const helper = /(\w+)=\((\w+),(\w+)\)=>[^;]*?"name",\{value:\3,configurable:!0\}\)/;
  const found = readdirSync(dir)
    .filter((f) => f.endsWith(".js"))
    .flatMap((file) => {
      const code = readFileSync(path.join(dir, file), "utf8");
      const local = helper.exec(code)?.[1];
      const exported = local && new RegExp(`export\\{[^}]*\\b${local} as (\\w+)`).exec(code)?.[1];
      return exported ? [{ file, exported }] : [];
    });
  expect(found).toHaveLength(1);
  const { file, exported } = found[0]!;
  const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as Record<string, unknown>;
  return mod[exported] as NameHelper;
}

describe("the bundle's names", () => {
  it("names classes and functions, and leaves arrow and async functions as they are", async () => {
    const name = await nameHelper();
    const Klass = name(class {}, "ProxyError");
    expect(Klass.name).toBe("ProxyError");
    expect(new Klass().constructor.name).toBe("ProxyError");
    expect(name(function () {}, "legacy").name).toBe("legacy");
    const arrow = (
      () => () =>
        1
    )();
    const before = Object.getOwnPropertyDescriptor(arrow, "name");
    expect(name(arrow, "onAbort")).toBe(arrow);
    expect(Object.getOwnPropertyDescriptor(arrow, "name")).toEqual(before);
    const asyncFn = (
      () => async () =>
        await Promise.resolve(1)
    )();
    expect(name(asyncFn, "send").name).toBe("");
  });
});
