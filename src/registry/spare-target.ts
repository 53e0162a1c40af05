/**
 * How many spare sessions an isolated pool keeps. The target is `prewarm` at rest; it grows by
 * one each time a call finds no spare ready (a burst outran the pool), and to what the observed
 * arrival rate needs: as many spares as calls arrive within one replacement time (from the take
 * that asks for a replacement to that replacement being initialized). The rate decays while
 * calls stop coming; never past `max`; back to `prewarm` once `idleMs` pass without demand. Time
 * comes from an injected clock.
 */
import type { Clock } from "../clock.js";

export interface SpareTargetOptions {
  /** Spares kept at rest (the server's `prewarm`). */
  min: number;
  /** Spares demand may grow the pool to (the server's `maxSessions`). */
  max: number;
  /** Time without demand (a miss, or calls paced closer than a refill), then back to `min`. */
  idleMs: number;
  clock: Clock;
  /** Called when the target drops: the pool closes the spares beyond it. */
  onShrink: () => void;
}

/** Weight of the newest sample in the moving averages of gaps and open times. */
const ALPHA = 0.3;
/** Gaps between takes seen before the arrival rate sizes the spares (one gap is no pattern). */
const MIN_GAPS = 2;
/** Headroom over the average open time: a refill under load takes longer than the average. */
const MARGIN = 1.5;
/**
 * A silence this many average gaps long means the calls slowed down or stopped: the time since
 * the last call replaces the average (a single late call, under it, changes nothing).
 */
const SLOWING = 2;

/** The adaptive number of spares of one isolated pool. */
export class SpareTarget {
  /** Grown by misses. */
  private grown: number;
  private lastDemand = 0;
  private timer: unknown;
  private lastTake: number | undefined;
  /** Moving average of the time between two takes, once `MIN_GAPS` were seen. */
  private gapMs = 0;
  private gaps = 0;
  /** Moving average of a replacement's time, from the take that asked for it to initialized. */
  private openMs = 0;
  private opens = 0;

  constructor(private readonly options: SpareTargetOptions) {
    this.grown = options.min;
  }

  /** How many spares the pool should hold now. */
  get value(): number {
    return Math.min(this.options.max, Math.max(this.grown, this.paced()));
  }

  /** The moving average of a replacement's time so far (0 before the first). */
  get replaceMs(): number {
    return this.openMs;
  }

  /**
   * Spares the arrival rate needs: a taken spare is back after `openMs`; the calls arriving
   * meanwhile (`openMs / gap`) each need one ready. The gap is the moving average, or the time
   * since the last call once that is past `SLOWING` average gaps: the need decays while calls
   * stop coming (no new spares for a pattern that ended). At least `min`; `min` 0 asks for none.
   */
  private paced(): number {
    const { min } = this.options;
    if (min === 0 || this.gaps < MIN_GAPS || this.opens === 0 || this.lastTake === undefined)
      return min;
    const since = this.options.clock.now() - this.lastTake;
    const gap = Math.max(1, since > SLOWING * this.gapMs ? since : this.gapMs);
    return Math.max(min, Math.ceil((this.openMs * MARGIN) / gap));
  }

  /**
   * A call took a spare (`ready`: one was initialized). A call that found none ready grows the
   * target by one; every take feeds the arrival rate. Only a pool that keeps spares grows
   * (prewarm 0 asks for none), and never past `max`.
   */
  took(ready: boolean): void {
    if (this.options.min === 0) return;
    const now = this.options.clock.now();
    if (this.lastTake !== undefined) {
      const gap = now - this.lastTake;
      if (gap >= this.options.idleMs) {
        // A pause longer than idleTimeout: a new pattern starts.
        this.gaps = 0;
      } else {
        this.gapMs = this.gaps === 0 ? gap : ALPHA * gap + (1 - ALPHA) * this.gapMs;
        this.gaps += 1;
      }
    }
    this.lastTake = now;
    if (!ready && this.grown < this.options.max) this.grown += 1;
    if (!ready || this.paced() > this.options.min) {
      this.lastDemand = now;
      if (this.value > this.options.min) this.schedule(this.options.idleMs);
    }
  }

  /** A replacement was initialized `ms` after the take that asked for it. */
  opened(ms: number): void {
    this.openMs = this.opens === 0 ? ms : ALPHA * ms + (1 - ALPHA) * this.openMs;
    this.opens += 1;
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
      const quiet = this.options.clock.now() - this.lastDemand;
      if (quiet < this.options.idleMs) {
        // Demand since the timer was set: wait out the rest of its quiet period.
        this.schedule(this.options.idleMs - quiet);
        return;
      }
      this.grown = this.options.min;
      this.gaps = 0;
      this.lastTake = undefined;
      this.options.onShrink();
    }, ms);
  }
}
