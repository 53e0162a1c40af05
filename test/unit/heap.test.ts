/**
 * The V8 flags mcpx sets before serving (src/heap.ts): run in a child node, since V8 flags are
 * per process. With them, a churn of objects that live long enough to be promoted leaves the
 * heap far smaller than V8's defaults do, and hot code is optimized sooner; a user's own setting
 * is left alone.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { IDLE_CHECK_MS, IdleTrim, QUIET_LOOKS, YOUNG_CAP_BYTES, YoungCap } from "../../src/heap.js";
import { FakeClock } from "../helpers/clock.js";
import { ROOT } from "../helpers/proxy.js";

const HEAP = path.join(ROOT, "dist/heap.js");

/**
 * In a fresh node with `nodeArgs` (tuneHeap called when `tune`): the flags applied and the largest
 * old generation V8 reserved while ~20 MB stay live and batches of promoted objects come and go.
 */
function run(
  nodeArgs: string[],
  tune: boolean,
  rounds = 15,
): { applied: string[]; peakMb: number } {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
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
      const old = getHeapSpaceStatistics().find((s) => s.space_name === "old_space");
      peak = Math.max(peak, old.space_size);
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
    expect(tuned.applied).toEqual([
      "--heap-growing-percent=50",
      "--semi-space-growth-factor=8",
      "--interrupt-budget=4096",
    ]);
    expect(defaults.applied).toEqual([]);
    // Measured: 38–43 MB against 51–81 MB (V8's growth varies from run to run).
    expect(tuned.peakMb).toBeLessThan(defaults.peakMb * 0.9);
  });

  it("leaves a setting the user gave on node's command line alone", () => {
    const mine = run(["--heap-growing-percent=50"], true, 0);
    expect(mine.applied).toEqual(["--semi-space-growth-factor=8", "--interrupt-budget=4096"]);
    // Any semi-space setting of the user's: the young generation is theirs.
    const young = run(["--max-semi-space-size=4"], true, 0);
    expect(young.applied).toEqual(["--heap-growing-percent=50", "--interrupt-budget=4096"]);
    const all = run(
      ["--heap-growing-percent=50", "--semi-space-growth-factor=2", "--interrupt-budget=9000"],
      true,
      0,
    );
    expect(all.applied).toEqual([]);
  });
});

/** Calls of a small function, in a fresh node, until V8 marks it for optimization (or 100,000). */
function callsUntilOptimized(tune: boolean): number {
  const script = `
    const { tuneHeap } = await import(${JSON.stringify(HEAP)});
    if (${tune}) tuneHeap();
    function work(o) { let s = 0; for (const k in o) s += String(o[k]).length; return s + JSON.stringify(o).length; }
    // Marked for optimization, optimizing, or optimized (V8's OptimizationStatus bits).
    const optimized = () => (eval("%GetOptimizationStatus(work)") & (16 | 64 | 256 | 512 | 1024)) !== 0;
    let n = 0;
    while (n < 100000 && !optimized()) work({ a: n, b: "x" + n, c: [n++] });
    process.stdout.write(String(n));
  `;
  const out = execFileSync(
    process.execPath,
    ["--allow-natives-syntax", "--input-type=module", "-e", script],
    { env: { PATH: process.env.PATH ?? "" }, encoding: "utf8" },
  );
  return Number(out);
}

describe("the interrupt budget", () => {
  it("has hot code optimized after a few dozen calls, where V8's default waits for ~2,000", () => {
    const tuned = callsUntilOptimized(true);
    const defaults = callsUntilOptimized(false);
    // Measured: 71 against 1,841.
    expect(defaults).toBeGreaterThan(1_000);
    expect(tuned).toBeLessThan(200);
  });
});

/**
 * The young generation's sizes (MB) seen while a churn keeps a few thousand objects alive, in
 * slices between which the event loop turns (as a server's calls do, for the cap's GC observer).
 */
function youngSizes(tune: boolean): number[] {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    const { tuneHeap, YoungCap } = await import(${JSON.stringify(HEAP)});
    if (${tune}) { tuneHeap(); YoungCap.observe(); }
    const size = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
    const seen = new Set([size()]);
    let live = [];
    for (let i = 0; i < 2000000; i++) {
      live.push({ i, s: "x" + i });
      if (live.length > 3000) live = live.slice(1500);
      if (i % 5000 === 0) { seen.add(size()); await new Promise((r) => setImmediate(r)); }
    }
    seen.add(size());
    process.stdout.write(JSON.stringify([...seen].map((b) => b / 1048576)));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "" },
    encoding: "utf8",
  });
  return JSON.parse(out) as number[];
}

describe("the young generation under load", () => {
  it("grows straight to the cap and stays there, where V8 doubles it to 32 MB", () => {
    const tuned = youngSizes(true);
    const defaults = youngSizes(false);
    // Measured: [1, 2, 16] against [1, 2, 4, 8, 16, 32] (MB).
    const cap = YOUNG_CAP_BYTES / 1048576;
    expect(Math.max(...tuned)).toBe(cap);
    expect(Math.max(...defaults)).toBeGreaterThan(cap);
    const between = (sizes: number[]) => sizes.filter((mb) => mb > 2 && mb < cap);
    expect(between(tuned)).toEqual([]);
    expect(between(defaults).length).toBeGreaterThan(0);
  });
});

describe("YoungCap", () => {
  it("sets the growth that reaches the cap from the size now, and none past it", () => {
    const MB = 1048576;
    let size = 2 * MB;
    const flags: string[] = [];
    const cap = new YoungCap({ size: () => size, setFlag: (f) => flags.push(f), cap: 16 * MB });
    cap.check();
    expect(flags).toEqual([]); // 2 MB × tuneHeap's 8: the cap in one step, as set
    size = 16 * MB;
    cap.check();
    cap.check();
    expect(cap.factor).toBe(1);
    expect(flags).toEqual(["--semi-space-growth-factor=1"]);
    size = 1 * MB; // an idle trim's GC gave it back
    cap.check();
    expect(flags.at(-1)).toBe("--semi-space-growth-factor=16");
    size = 3 * MB; // V8 shrank it to twice what lives: 3 × 5 = 15 MB, not 3 × 16
    cap.check();
    expect(flags.at(-1)).toBe("--semi-space-growth-factor=5");
    size = 32 * MB; // grown past the cap before the cap was kept (start-up): held where it is
    cap.check();
    expect(flags.at(-1)).toBe("--semi-space-growth-factor=1");
    size = 0; // no new space reported: nothing changes
    cap.check();
    expect(flags).toHaveLength(4);
  });
});

describe("IdleTrim", () => {
  /** A trim over a fake clock and a heap the test moves by hand. */
  function trim() {
    const clock = new FakeClock();
    const loop = { busy: 1_000 };
    let collected = 0;
    const t = new IdleTrim({
      clock,
      busyMs: () => loop.busy,
      collect: () => {
        collected += 1;
        // The collection's own time.
        loop.busy += 30;
      },
    });
    return { clock, loop, t, collected: () => collected };
  }

  it("collects once after QUIET_LOOKS quiet looks, never while work runs, again after activity", async () => {
    const { clock, loop, t, collected } = trim();
    // Busy: the event loop worked 3 % of the time between looks.
    for (let i = 0; i < 6; i++) {
      loop.busy += IDLE_CHECK_MS * 0.03;
      await clock.advance(IDLE_CHECK_MS);
    }
    expect(collected()).toBe(0);
    // Quiet: a pause shorter than QUIET_LOOKS looks is part of the burst; the last one collects.
    await clock.advance(IDLE_CHECK_MS * (QUIET_LOOKS - 1));
    expect(collected()).toBe(0);
    await clock.advance(IDLE_CHECK_MS);
    expect(collected()).toBe(1);
    // Still quiet: nothing more to give back, no more collections.
    await clock.advance(IDLE_CHECK_MS * 10);
    expect(collected()).toBe(1);
    // Under 1 % is quiet still (a health check); more arms it again.
    loop.busy += 20;
    await clock.advance(IDLE_CHECK_MS * 3);
    expect(collected()).toBe(1);
    loop.busy += 500;
    await clock.advance(IDLE_CHECK_MS);
    await clock.advance(IDLE_CHECK_MS * QUIET_LOOKS);
    expect(collected()).toBe(2);
    t.stop();
    expect(clock.pending).toBe(0);
  });

  it("collects with V8's own gc, and leaves no gc global behind", () => {
    const script = `
      import { runInNewContext } from "node:vm";
      const { IdleTrim } = await import(${JSON.stringify(HEAP)});
      let look;
      const clock = { now: () => 0, setTimeout: (fn) => { look = fn; return 1; }, clearTimeout() {} };
      let junk = [];
      for (let i = 0; i < 300000; i++) junk.push({ i, s: "junk" + i });
      junk = null;
      const trim = new IdleTrim({ clock });
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 8; i++) look();
      const after = process.memoryUsage().heapUsed;
      process.stdout.write(JSON.stringify({
        count: trim.count, freedMb: (before - after) / 1048576,
        leaked: runInNewContext("typeof gc"),
      }));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      env: { PATH: process.env.PATH ?? "" },
      encoding: "utf8",
    });
    const r = JSON.parse(out) as { count: number; freedMb: number; leaked: string };
    expect(r.count).toBe(1);
    // ~300,000 dead objects: well over 10 MB.
    expect(r.freedMb).toBeGreaterThan(10);
    expect(r.leaked).toBe("undefined");
  });
});
