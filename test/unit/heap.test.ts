/**
 * The V8 heap flags mcpx sets before serving (src/heap.ts): run in a child node, since V8 flags
 * are per process. With them the young generation stays at its initial size while a burst of
 * short-lived objects is allocated; a user's own semi-space setting is left alone.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/proxy.js";

const HEAP = path.join(ROOT, "dist/heap.js");

/** In a fresh node with `nodeArgs`: the flags tuneHeap applied and the new space after a burst. */
function run(nodeArgs: string[]): { applied: string[]; newSpaceMb: number } {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    const { tuneHeap } = await import(${JSON.stringify(HEAP)});
    const applied = tuneHeap();
    const kept = [];
    for (let i = 0; i < 2e6; i++) { const o = { i, s: "x" + i }; if (i % 1000 === 0) kept.push(o); }
    const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    process.stdout.write(JSON.stringify({ applied, newSpaceMb: space.space_size / 1048576, kept: kept.length }));
  `;
  const out = execFileSync(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "" },
    encoding: "utf8",
  });
  return JSON.parse(out) as { applied: string[]; newSpaceMb: number };
}

describe("tuneHeap", () => {
  it("keeps the young generation small through an allocation burst", () => {
    const tuned = run([]);
    expect(tuned.applied).toEqual(["--semi-space-growth-factor=1", "--heap-growing-percent=20"]);
    expect(tuned.newSpaceMb).toBeLessThanOrEqual(2);
  });

  it("without it the same burst grows the young generation (the check above can fail)", () => {
    const script = `
      import { getHeapSpaceStatistics } from "node:v8";
      const kept = [];
      for (let i = 0; i < 2e6; i++) { const o = { i, s: "x" + i }; if (i % 1000 === 0) kept.push(o); }
      const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
      process.stdout.write(String(space.space_size / 1048576 + kept.length * 0));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(Number(out)).toBeGreaterThan(2);
  });

  it("leaves a setting the user gave on node's command line alone", () => {
    const mine = run(["--max-semi-space-size=8"]);
    expect(mine.applied).toEqual(["--heap-growing-percent=20"]);
  });
});
