/**
 * How many spare sessions an isolated pool keeps: `prewarm` at rest; one more each time a call
 * finds no spare ready (a burst outran the pool), up to `maxSessions`; back to `prewarm` once
 * `idleMs` pass without such a call. Time comes from an injected clock.
 */
import type { Clock } from "../clock.js";

export interface SpareTargetOptions {
  /** Spares kept at rest (the server's `prewarm`). */
  min: number;
  /** Spares a burst may grow the pool to (the server's `maxSessions`). */
  max: number;
  /** Time without a call that found no spare, after which the pool shrinks back to `min`. */
  idleMs: number;
  clock: Clock;
  /** Called when the target drops: the pool closes the spares beyond it. */
  onShrink: () => void;
}

/** The adaptive number of spares of one isolated pool. */
export class SpareTarget {
  private current: number;
  private lastMiss = 0;
  private timer: unknown;

  constructor(private readonly options: SpareTargetOptions) {
    this.current = options.min;
  }

  /** How many spares the pool should hold now. */
  get value(): number {
    return this.current;
  }

  /**
   * A call found no ready spare. Only a pool that keeps spares grows (prewarm 0 asks for none),
   * and never past `max`.
   */
  missed(): void {
    if (this.options.min === 0) return;
    this.lastMiss = this.options.clock.now();
    if (this.current < this.options.max) this.current += 1;
    if (this.current > this.options.min) this.schedule(this.options.idleMs);
  }

  /** Stop the shrink timer (the pool closes). */
  stop(): void {
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      const quiet = this.options.clock.now() - this.lastMiss;
      if (quiet < this.options.idleMs) {
        // A miss since the timer was set: wait out the rest of its quiet period.
        this.schedule(this.options.idleMs - quiet);
        return;
      }
      this.current = this.options.min;
      this.options.onShrink();
    }, ms);
  }
}
