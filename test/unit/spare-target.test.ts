/**
 * How many spares an isolated pool keeps: sized from the observed arrival rate and the time a
 * spare takes to open, grown by calls that find none ready, bounded by maxSessions, and back to
 * prewarm after idleTimeout without demand. Time is a FakeClock; no timing is measured.
 */
import { describe, expect, it } from "vitest";
import { SpareTarget } from "../../src/registry/spare-target.js";
import { FakeClock } from "../helpers/clock.js";

const IDLE_MS = 60_000;

function target(min: number, max: number) {
  const clock = new FakeClock();
  let shrinks = 0;
  const t = new SpareTarget({ min, max, idleMs: IDLE_MS, clock, onShrink: () => shrinks++ });
  /** `n` calls `gapMs` apart, each finding a spare ready; each refill opened in `openMs`. */
  const paced = async (n: number, gapMs: number, openMs: number) => {
    for (let i = 0; i < n; i++) {
      t.took(true);
      t.opened(openMs);
      await clock.advance(gapMs);
    }
  };
  return { t, clock, paced, shrinks: () => shrinks };
}

describe("spare target", () => {
  it("covers calls arriving while a spare is replaced: 400 ms apart, 300 ms to open, keeps 2", async () => {
    const { t, paced } = target(1, 8);
    await paced(6, 400, 300);
    // ceil(300 ms × 1.5 headroom / 400 ms) = 2: one ready while the other is being replaced.
    expect(t.value).toBe(2);
  });

  it("keeps prewarm when a spare is back before the next call (1 s apart, 300 ms to open)", async () => {
    const { t, paced } = target(1, 8);
    await paced(6, 1_000, 300);
    expect(t.value).toBe(1);
  });

  it("follows a slower machine: the same 400 ms pattern with 1 s opens keeps 4", async () => {
    const { t, paced } = target(1, 8);
    await paced(8, 400, 1_000);
    expect(t.value).toBe(4);
  });

  it("never sizes past maxSessions, however fast the calls", async () => {
    const { t, paced } = target(1, 3);
    await paced(10, 10, 500);
    expect(t.value).toBe(3);
  });

  it("needs a pattern: one gap between two calls sizes nothing", async () => {
    const { t, paced } = target(1, 8);
    await paced(2, 100, 1_000);
    expect(t.value).toBe(1);
    await paced(1, 100, 1_000);
    expect(t.value).toBeGreaterThan(1);
  });

  it("grows by one for each call that finds no spare ready, up to max", () => {
    const { t } = target(1, 3);
    t.took(false);
    expect(t.value).toBe(2);
    t.took(false);
    t.took(false);
    t.took(false);
    expect(t.value).toBe(3);
  });

  it("decays once calls stop: past two average gaps of silence the silence is the gap", async () => {
    const { t, clock, paced, shrinks } = target(1, 8);
    await paced(6, 400, 1_000);
    // ceil(1,000 ms × 1.5 / 400 ms) = 4.
    expect(t.value).toBe(4);
    // One late call (under two gaps) changes nothing.
    await clock.advance(400);
    expect(t.value).toBe(4);
    // Then the need follows the silence: ceil(1,500 / 801) = 2, ceil(1,500 / 1,500) = 1.
    await clock.advance(1);
    expect(t.value).toBe(2);
    await clock.advance(699);
    expect(t.value).toBe(1);
    expect(shrinks()).toBe(0);
  });

  it("goes back to prewarm after idleTimeout without demand, and forgets the rate", async () => {
    const { t, clock, paced, shrinks } = target(1, 8);
    await paced(6, 400, 300);
    expect(t.value).toBe(2);
    // A miss (prewarm 1 + 1) holds the size until idleTimeout, however long the silence.
    t.took(false);
    await clock.advance(IDLE_MS - 1);
    expect(t.value).toBe(2);
    expect(shrinks()).toBe(0);
    await clock.advance(1);
    expect(t.value).toBe(1);
    expect(shrinks()).toBe(1);
    // A lone call after the pause is no pattern.
    t.took(true);
    expect(t.value).toBe(1);
  });

  it("keeps the size while the pattern goes on, whatever idleTimeout", async () => {
    const { t, paced, shrinks } = target(1, 8);
    await paced(Math.ceil((IDLE_MS * 2) / 400), 400, 300);
    expect(t.value).toBe(2);
    expect(shrinks()).toBe(0);
  });

  it("keeps no spares for prewarm 0, whatever the rate or misses", async () => {
    const { t, paced } = target(0, 8);
    await paced(6, 100, 1_000);
    t.took(false);
    expect(t.value).toBe(0);
  });
});
