/**
 * How many spare sessions an isolated pool keeps: `prewarm` at rest; one more each time a call
 * finds no spare ready (a burst outran the pool), up to `maxSessions`; back to `prewarm` once
 * `idleMs` pass without such a call. Time comes from an injected clock.
 */
import { errorMessage } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { UpstreamSession } from "../upstream/types.js";

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

export interface SpareSessionsOptions {
  /** Open a new session (the pool's, which tracks it). */
  open: () => Promise<UpstreamSession>;
  /** Close a session, off the caller's path. */
  dispose: (session: UpstreamSession) => void;
  /** Whether spares are kept now (isolated and client pools, not for a stateless upstream). */
  wanted: () => boolean;
  /** Whether the pool closed: no new spares then. */
  closed: () => boolean;
  logger: Logger;
  target: Omit<SpareTargetOptions, "onShrink">;
}

/**
 * The spare sessions of a pool: opened ahead of the calls that take them, so a call skips spawn
 * and initialize. How many follows the adaptive `SpareTarget`.
 */
export class SpareSessions {
  private readonly spares: Promise<UpstreamSession>[] = [];
  /** Spares whose session is initialized (the others are still starting). */
  private readonly ready = new WeakSet<Promise<UpstreamSession>>();
  private readonly target: SpareTarget;

  constructor(private readonly options: SpareSessionsOptions) {
    this.target = new SpareTarget({ ...options.target, onShrink: () => this.trim() });
  }

  /** Spares ready to take, and spares still starting. */
  counts(): { ready: number; warming: number } {
    const ready = this.spares.filter((p) => this.ready.has(p)).length;
    return { ready, warming: this.spares.length - ready };
  }

  /** A call is about to take one: when none is ready, the burst outran the spares, keep one more. */
  taking(): void {
    if (!this.spares.some((p) => this.ready.has(p))) this.target.missed();
  }

  /** A spare, or a new session when none is left. */
  async take(): Promise<UpstreamSession> {
    const spare = this.spares.shift();
    if (spare) {
      // A spare that failed to open or died while waiting is skipped, never handed out.
      const ready = await spare.catch(() => undefined);
      if (ready && !ready.closed) return ready;
    }
    return this.options.open();
  }

  /** A session no call used (a health check, a listing) goes back, when spares are short. */
  giveBack(session: UpstreamSession): boolean {
    if (this.spares.length >= this.target.value) return false;
    const back = Promise.resolve(session);
    this.ready.add(back);
    this.spares.push(back);
    return true;
  }

  /** Open spares up to the target. */
  refill(): void {
    if (!this.options.wanted()) return;
    while (!this.options.closed() && this.spares.length < this.target.value) {
      const p = this.options.open();
      p.then(
        () => {
          this.ready.add(p);
          // The burst that asked for it passed while it started: it is surplus now.
          if (this.spares.length > this.target.value) this.trim();
        },
        // A failing spare is reported by the call that takes it; here it must not go unhandled.
        (err: unknown) => this.options.logger.debug(`spare session failed: ${errorMessage(err)}`),
      );
      this.spares.push(p);
    }
  }

  /** Hand over every spare (to close): the pool resets or closes. */
  drain(): Promise<UpstreamSession>[] {
    return this.spares.splice(0);
  }

  /** Stop the shrink timer (the pool closes). */
  stop(): void {
    this.target.stop();
  }

  /** Close the ready spares beyond the target (the burst that grew it has passed). */
  private trim(): void {
    const surplus = this.spares.length - this.target.value;
    if (surplus <= 0 || this.options.closed()) return;
    // Ready ones only: a spare still starting is left to finish and serve the next call.
    const extra = new Set(this.spares.filter((p) => this.ready.has(p)).slice(0, surplus));
    const kept = this.spares.filter((p) => !extra.has(p));
    this.spares.length = 0;
    this.spares.push(...kept);
    for (const p of extra) void p.then((session) => this.options.dispose(session));
  }
}
