import type { Clock } from "../../src/clock.js";

/** A clock tests drive by hand: timers fire only inside advance(). */
export class FakeClock implements Clock {
  private time = 1_700_000_000_000;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  /** Every delay ever scheduled, in order (to check backoff). */
  readonly delays: number[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.delays.push(ms);
    this.timers.push({ at: this.time + ms, fn, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Move time forward, firing due timers in order, and let their async work settle. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = next.at;
      next.fn();
      await settle();
    }
    this.time = until;
    await settle();
  }
}

/** Let promise chains and in-memory transports finish (real macrotask turns, bounded). */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}
