import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

// Made while the file is collected: kept until the file's last test is done.
const fileDir = tempDir();

describe("tempDir", () => {
  let testDir = "";

  it("makes folders under the run's own temp root", () => {
    testDir = tempDir();
    expect(existsSync(testDir)).toBe(true);
    expect(path.basename(path.dirname(testDir))).toMatch(/^mcpx-run-/);
    expect(path.dirname(testDir)).toBe(path.dirname(fileDir));
  });

  it("removes a folder made in a test when that test finishes, and keeps the file's", () => {
    expect(testDir).not.toBe("");
    expect(existsSync(testDir)).toBe(false);
    expect(existsSync(fileDir)).toBe(true);
  });
});

describe("tempDir outside vitest (bench/, npm run load and soak)", () => {
  it("removes the folders it made when the process exits: no mcpx-cache-* left behind", () => {
    // What `StdioRpc.start` without `env` does in bench/reliability/load.ts: a fresh
    // XDG_CACHE_HOME from cacheEnv(), in a process no test finishes and no run's root holds.
    const tmp = tempDir();
    const script = [
      'const { existsSync } = await import("node:fs");',
      'const { cacheEnv } = await import("./test/helpers/proxy.ts");',
      "const home = cacheEnv().XDG_CACHE_HOME;",
      "console.log(JSON.stringify({ home, existed: existsSync(home) }));",
    ].join("\n");
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
    for (const key of Object.keys(env)) if (key.startsWith("VITEST")) delete env[key];
    const out = execFileSync(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { cwd: ROOT, encoding: "utf8", env },
    );
    const { home, existed } = JSON.parse(out) as { home: string; existed: boolean };
    expect(existed).toBe(true);
    expect(home.startsWith(tmp + path.sep)).toBe(true);
    expect(existsSync(home)).toBe(false);
    // tsx keeps its compile cache in TMPDIR (tsx-<uid>); nothing else may stay.
    expect(readdirSync(tmp).filter((name) => !name.startsWith("tsx-"))).toEqual([]);
  });
});
