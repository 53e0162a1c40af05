import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ProxyError } from "../../src/errors.js";
import { installChangedDetail, lazyImport, onInstallChanged } from "../../src/install.js";

const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** The errors node's ESM loader throws (messages as node 20 words them). */
function missing(file: string): Error {
  return Object.assign(new Error(`Cannot find module '${file}' imported from ${ROOT}/dist/x.js`), {
    code: "ERR_MODULE_NOT_FOUND",
  });
}
const renamedExport = () =>
  new SyntaxError("The requested module './chunk-ABC.js' does not provide an export named 'a'");

describe("installChangedDetail", () => {
  it("names a file of this package that is gone, or a chunk that lost an export", () => {
    const gone = path.join(ROOT, "dist/bundle/chunk-GONE.js");
    expect(installChangedDetail(missing(gone))).toBe(`${gone} is gone`);
    expect(installChangedDetail(renamedExport())).toBe("./chunk-ABC.js no longer exports a");
  });

  it("leaves every other failure alone", () => {
    expect(installChangedDetail(missing("/elsewhere/gone.js"))).toBeUndefined();
    const pkg = Object.assign(new Error("Cannot find package 'ioredis' imported from /x.js"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    expect(installChangedDetail(pkg)).toBeUndefined();
    expect(installChangedDetail(new SyntaxError("Unexpected token"))).toBeUndefined();
    expect(installChangedDetail(new Error("boom"))).toBeUndefined();
    expect(installChangedDetail("text")).toBeUndefined();
  });
});

describe("lazyImport", () => {
  it("passes a module and any other failure through as they are", async () => {
    await expect(lazyImport(() => Promise.resolve({ a: 1 }))).resolves.toEqual({ a: 1 });
    const boom = new Error("boom");
    await expect(lazyImport(() => Promise.reject(boom))).rejects.toBe(boom);
  });

  it("says an install that changed as such; the listeners hear of it only once another version is installed", async () => {
    const told: string[] = [];
    const off = onInstallChanged((detail) => told.push(detail));
    const gone = path.join(ROOT, "dist/bundle/chunk-GONE.js");
    for (let i = 0; i < 2; i++) {
      const err: unknown = await lazyImport(() => Promise.reject(missing(gone))).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProxyError);
      expect((err as ProxyError).code).toBe("INSTALL_CHANGED");
      expect((err as ProxyError).message).toContain("restart mcpx");
    }
    off();
    // This checkout's package.json is the version running: a file gone is a broken install,
    // not an upgrade, and a restart would not mend it.
    expect(told).toEqual([]);
  });
});
