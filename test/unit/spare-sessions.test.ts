/**
 * When spare sessions are opened: a replacement waits while a call runs (REFILL_DEFER_MS at
 * most) and starts on the next turn once none does; spares past prewarm need 10 % of the
 * machine's memory available. Sessions are plain stand-ins (this is counting, no upstream is
 * spoken to); time is a FakeClock.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { REFILL_DEFER_MS, SpareSessions } from "../../src/registry/spares.js";
import type { UpstreamSession } from "../../src/upstream/types.js";
import { FakeClock } from "../helpers/clock.js";

function spares(options: { calls?: () => number; free?: number; min?: number } = {}) {
  const clock = new FakeClock();
  let opened = 0;
  const s = new SpareSessions({
    open: () => {
      opened += 1;
      return Promise.resolve({ closed: false } as unknown as UpstreamSession);
    },
    dispose: () => {},
    wanted: () => true,
    closed: () => false,
    room: () => Infinity,
    calls: options.calls ?? (() => 0),
    memory: () => ({ free: options.free ?? 1_000, total: 1_000 }),
    logger: createLogger({ level: "error" }),
    target: { min: options.min ?? 1, max: 8, idleMs: 60_000, clock },
  });
  return { s, clock, opened: () => opened };
}

describe("spare sessions", () => {
  it("replaces a taken spare on the next turn when no call runs", async () => {
    const { s, opened } = spares();
    s.refill();
    await nextTurn();
    expect(opened()).toBe(1);
    expect(s.shift()?.ready).toBe(true);
    s.soon();
    // Not synchronously: an answer on its way goes out first.
    expect(opened()).toBe(1);
    await nextTurn();
    expect(opened()).toBe(2);
  });

  it("waits while a call runs: until it ends, or REFILL_DEFER_MS at most", async () => {
    let calls = 1;
    const { s, clock, opened } = spares({ calls: () => calls });
    s.refill();
    await nextTurn();
    expect(s.shift()?.ready).toBe(true);
    s.soon();
    await nextTurn();
    await clock.advance(REFILL_DEFER_MS - 1);
    expect(opened()).toBe(1);
    await clock.advance(1);
    expect(opened()).toBe(2);

    // Another take; this time the call ends before the timer: the replacement starts then.
    expect(s.shift()?.ready).toBe(true);
    s.soon();
    await nextTurn();
    expect(opened()).toBe(2);
    calls = 0;
    s.released();
    await nextTurn();
    expect(opened()).toBe(3);
    // The timer was cleared: nothing more opens when it would have fired.
    await clock.advance(REFILL_DEFER_MS);
    expect(opened()).toBe(3);
  });

  it("opens spares past prewarm only while 10 % of memory is available", async () => {
    for (const [free, size] of [
      [99, 1],
      [100, 2],
    ] as const) {
      const { s } = spares({ free });
      s.refill();
      await nextTurn();
      // The ready spare is taken, then a call finds none: the target grows to 2 (prewarm 1 + 1).
      expect(s.shift()?.ready).toBe(true);
      expect(s.shift()).toBeUndefined();
      s.refill();
      expect(s.size).toBe(size);
    }
  });
});
