/**
 * The V8 heap flag mcpx sets before serving (src/heap.ts): run in a child node, since V8 flags
 * are per process. With it, a churn of objects that live long enough to be promoted leaves the
 * heap far smaller than V8's defaults do; a user's own setting is left alone.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/proxy.js";

const HEAP = path.join(ROOT, "dist/heap.js");

/**
 * In a fresh node with `nodeArgs` (tuneHeap called when `tune`): the flags applied and the largest
 * heap V8 reserved while ~20 MB stay live and batches of promoted objects come and go.
 */
function run(
  nodeArgs: string[],
  tune: boolean,
  rounds = 15,
): { applied: string[]; peakMb: number } {
  const script = `
    import { getHeapStatistics } from "node:v8";
    const { tuneHeap } = await import(${JSON.stringify(HEAP)});
    const applied = ${tune} ? tuneHeap() : [];
    const live = [];
    for (let i = 0; i < 200000; i++) live.push({ i, s: "live" + i });
    let peak = 0;
    for (let round = 0; round < ${rounds}; round++) {
      let batch = [];
      for (let i = 0; i < 100000; i++) batch.push({ i, s: "tmp" + i, a: [i, i + 1] });
      for (let k = 0; k < 3; k++) { const junk = []; for (let j = 0; j < 50000; j++) junk.push({ j }); }
      batch = null;
      peak = Math.max(peak, getHeapStatistics().total_heap_size);
    }
    process.stdout.write(JSON.stringify({ applied, peakMb: peak / 1048576, live: live.length }));
  `;
  const out = execFileSync(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "" },
    encoding: "utf8",
  });
  return JSON.parse(out) as { applied: string[]; peakMb: number };
}

describe("tuneHeap", () => {
  it("keeps the old generation near what is live, where V8's defaults let it grow", () => {
    const tuned = run([], true);
    const defaults = run([], false);
    expect(tuned.applied).toEqual(["--heap-growing-percent=20"]);
    expect(defaults.applied).toEqual([]);
    // Measured: ~93 MB against ~140–180 MB.
    expect(tuned.peakMb).toBeLessThan(defaults.peakMb * 0.8);
  });

  it("leaves a setting the user gave on node's command line alone", () => {
    const mine = run(["--heap-growing-percent=50"], true, 0);
    expect(mine.applied).toEqual([]);
  });
});
