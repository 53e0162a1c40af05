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

/** The bundle's `__name`: the export of esbuild's runtime chunk (one without modules) that names. */
async function nameHelper(): Promise<NameHelper> {
  const dir = path.join(ROOT, "dist/bundle");
  const inputs = JSON.parse(
    readFileSync(path.join(ROOT, "dist/bundle-inputs.json"), "utf8"),
  ) as Record<string, string[]>;
  const chunks = readdirSync(dir).filter((f) => inputs[f]?.length === 0);
  const helpers: NameHelper[] = [];
  for (const chunk of chunks) {
    const mod = (await import(pathToFileURL(path.join(dir, chunk)).href)) as Record<
      string,
      unknown
    >;
    for (const value of Object.values(mod)) {
      if (typeof value !== "function" || value.length !== 2) continue;
      const probe = function probe() {};
      try {
        if ((value as NameHelper)(probe, "renamed") === probe && probe.name === "renamed")
          helpers.push(value as NameHelper);
      } catch {
        // not the helper
      }
    }
  }
  expect(helpers).toHaveLength(1);
  return helpers[0]!;
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
