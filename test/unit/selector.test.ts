/**
 * `select` within its budget (src/compression/selector.ts): the expressions of issue 24 that
 * took the proxy down are answered with the limit they hit, in a worker thread, while other
 * callers' selects and this thread go on; a caller's line of selects does not hold up another's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Selector } from "../../src/compression/selector.js";
import { FairQueue } from "../../src/fair-queue.js";
import { createLogger } from "../../src/logger.js";
import { lateReadies } from "../helpers/late-ready.js";

/** 185 characters that doubled the value 23 times: 4.3 GB and a heap crash, on the main thread. */
const DOUBLING = "@" + " | [@,@]".repeat(23);
/** Small in memory, long in time: 2^22 elements flattened 22 times (~40 s on the main thread). */
const FLATTENING = "@" + " | [@,@]".repeat(22) + " | []".repeat(22) + " | length(@)";
const WEATHER = { temperature: 33, conditions: "Cloudy", humidity: 82 };

let selectors: Selector[] = [];
afterEach(async () => {
  await Promise.all(selectors.map((s) => s.close()));
  selectors = [];
});
function selector(...args: ConstructorParameters<typeof Selector>): Selector {
  const s = new Selector(...args);
  selectors.push(s);
  return s;
}

describe("Selector", () => {
  it("evaluates an expression: a value as JSON, a string as itself, nothing said so", async () => {
    const s = selector();
    expect(await s.apply({ items: [{ id: 1 }, { id: 2 }] }, "items[].id")).toEqual({
      text: "[1,2]",
      nothing: false,
    });
    expect(await s.apply(WEATHER, "conditions")).toEqual({ text: "Cloudy", nothing: false });
    expect(await s.apply(WEATHER, "wind")).toEqual({ text: "null", nothing: true });
    expect(await s.apply(WEATHER, "items[")).toMatchObject({
      error: expect.any(String) as unknown,
    });
  });

  it("refuses a value that repeats its data past the size limit, without building it", async () => {
    const s = selector();
    await s.apply(WEATHER, "@"); // the worker is up
    const started = performance.now();
    const out = await s.apply(WEATHER, DOUBLING);
    expect(out).toEqual({
      error:
        "its value would be 472 MB as JSON, more than the 4 MB a select may make (the larger of 4 MB and the result itself). An expression that repeats its data (such as [@, @]) multiplies its size",
    });
    // Measured, not built: far below the time budget even on a loaded machine.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("stops an expression past its time budget in its worker, and the next select runs", async () => {
    const s = selector({ timeMs: 300, maxWorkers: 1 });
    // This thread stays free meanwhile: a timer set now fires long before the budget is over.
    let lag = Number.POSITIVE_INFINITY;
    const set = performance.now();
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        lag = performance.now() - set;
        resolve();
      }, 10),
    );
    const out = await s.apply([1, 2, 3, 4], FLATTENING);
    await timer;
    expect(out).toMatchObject({
      error: expect.stringMatching(
        /^it (ran longer than 300 ms, the most mcpx gives one select|needed more than the 256 MB of memory a select may use), and was stopped\./,
      ) as unknown,
    });
    expect(lag).toBeLessThan(250);
    expect(await s.apply(WEATHER, "humidity")).toEqual({ text: "82", nothing: false });
  });

  it("replaces a worker that does not start within startMs once, then fails the select naming the wait", async () => {
    // No worker loads in 1 ms: both tries miss their start.
    const logs: string[] = [];
    const s = selector({
      startMs: 1,
      maxWorkers: 1,
      logger: createLogger({ level: "warn", write: (l) => logs.push(l) }),
    });
    expect(await s.apply(WEATHER, "conditions")).toEqual({
      error: "the worker evaluating it did not start within 1 ms; running it again may work",
    });
    expect(logs.filter((l) => l.includes("did not start"))).toEqual([
      expect.stringContaining("a select worker did not start within 1 ms; starting another"),
      expect.stringContaining(
        "a select worker did not start within 1 ms; failing the select that waits for it",
      ),
    ]);
  });

  it("a worker heard from after it was ended for a missed start does not count as started", async () => {
    const late = lateReadies();
    const s = selector({ startMs: 200, maxWorkers: 1, logger: late.logger });
    const out = await late.begin(() => s.apply(WEATHER, "conditions"));
    // Both workers missed their start; the first one's late "ready" did not make the second
    // miss a first one again (which would start a third, and evaluate the select).
    expect(await out.value).toEqual({
      error: "the worker evaluating it did not start within 200 ms; running it again may work",
    });
    expect(late.logs.filter((l) => l.includes("did not start within 200 ms"))).toHaveLength(2);
  });

  it("a caller's line of slow selects holds up another caller's by one at most", async () => {
    const s = selector({ timeMs: 300, maxWorkers: 1 });
    const order: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then(() => order.push(name));
    const first = track("a1", s.apply([1, 2, 3, 4], FLATTENING, "a"));
    const rest = [2, 3].map((i) => track(`a${i}`, s.apply([1, 2, 3, 4], FLATTENING, "a")));
    const other = track("b", s.apply(WEATHER, "humidity", "b"));
    await Promise.all([first, ...rest, other]);
    expect(order.indexOf("b")).toBeLessThanOrEqual(1);
  });
});

describe("FairQueue", () => {
  it("serves the caller served least recently first, newcomers before those just served", () => {
    const q = new FairQueue<string>();
    q.push("a", "a1");
    expect(q.shift()).toBe("a1");
    for (const item of ["a2", "a3", "a4"]) q.push("a", item);
    q.push("b", "b1");
    q.push("b", "b2");
    q.push("c", "c1");
    const order = Array.from({ length: 7 }, () => q.shift());
    expect(order).toEqual(["b1", "c1", "a2", "b2", "a3", "a4", undefined]);
  });

  it("skips callers that may not run now, and drops items no longer wanted", () => {
    const q = new FairQueue<{ id: string; live: boolean }>();
    q.push("a", { id: "a1", live: true });
    q.push("b", { id: "b1", live: false });
    q.push("b", { id: "b2", live: true });
    const live = (x: { live: boolean }) => x.live;
    expect(q.count(undefined, live)).toBe(2);
    expect(q.shift((k) => k !== "a", live)?.id).toBe("b2");
    expect(q.shift((k) => k !== "a", live)).toBeUndefined();
    expect(q.count("a")).toBe(1);
  });
});
