/**
 * How many spare sessions an isolated pool keeps, and the spares themselves. The target is
 * `prewarm` at rest; it grows by one each time a call finds no spare ready (a burst outran the
 * pool), and to what the observed arrival rate needs: spares enough to cover the calls that
 * arrive while one spare is being replaced (spawn + initialize). Never past `maxSessions`; back to
 * `prewarm` once `idleMs` pass without demand. Time comes from an injected clock.
 */
import { errorMessage } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { UpstreamSession } from "../upstream/types.js";

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
  /** Moving average of a spare's spawn + initialize. */
  private openMs = 0;
  private opens = 0;

  constructor(private readonly options: SpareTargetOptions) {
    this.grown = options.min;
  }

  /** How many spares the pool should hold now. */
  get value(): number {
    return Math.min(this.options.max, Math.max(this.grown, this.paced()));
  }

  /**
   * Spares the arrival rate needs: a taken spare is replaced after `openMs`; the calls arriving
   * meanwhile (`openMs / gapMs`) each need one ready. At least `min`; `min` 0 asks for none.
   */
  private paced(): number {
    const { min } = this.options;
    if (min === 0 || this.gaps < MIN_GAPS || this.opens === 0) return min;
    const need = Math.ceil((this.openMs * MARGIN) / Math.max(1, this.gapMs));
    return Math.max(min, need);
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

  /** A spare finished opening after `ms` (spawn + initialize). */
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

export interface SpareSessionsOptions {
  /** Open a new session (the pool's, which tracks it). */
  open: () => Promise<UpstreamSession>;
  /** Close a session, off the caller's path. */
  dispose: (session: UpstreamSession) => void;
  /** Whether spares are kept now (isolated and client pools, not for a stateless upstream). */
  wanted: () => boolean;
  /** Whether the pool closed: no new spares then. */
  closed: () => boolean;
  /** Sessions the pool may still open now (isolated: maxSessions less what it holds). */
  room: () => number;
  logger: Logger;
  target: Omit<SpareTargetOptions, "onShrink">;
}

/** A spare taken off the list: ready (initialized) or still starting. */
export interface TakenSpare {
  session: Promise<UpstreamSession>;
  ready: boolean;
}

/**
 * The spare sessions of a pool: opened ahead of the calls that take them, so a call skips spawn
 * and initialize. How many follows the adaptive `SpareTarget`, within the pool's room.
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

  /** Spares held, ready or starting. */
  get size(): number {
    return this.spares.length;
  }

  /**
   * Isolated: take a spare off the list for a call, synchronously (a ready one first, else the
   * one that started first), and tell the target (`demand`: a call, not a health check or a
   * listing); undefined when there is none.
   */
  shift(demand = true): TakenSpare | undefined {
    const i = this.spares.findIndex((p) => this.ready.has(p));
    const [session] = this.spares.splice(Math.max(0, i), 1);
    if (demand) this.target.took(i >= 0);
    return session && { session, ready: i >= 0 };
  }

  /** A taken spare's session, or a new one when it failed to open or died while waiting. */
  async settle(spare: TakenSpare | undefined): Promise<UpstreamSession> {
    const session = await spare?.session.catch(() => undefined);
    if (session && !session.closed) return session;
    if (session) this.options.dispose(session);
    return this.options.open();
  }

  /** A spare, or a new session when none is left (client pools, inspection). */
  async take(): Promise<UpstreamSession> {
    const spare = this.spares.shift();
    return this.settle(spare && { session: spare, ready: this.ready.has(spare) });
  }

  /** A session no call used (a health check, a listing) goes back, when spares are short. */
  giveBack(session: UpstreamSession): boolean {
    if (this.spares.length >= this.target.value) return false;
    const back = Promise.resolve(session);
    this.ready.add(back);
    this.spares.push(back);
    return true;
  }

  /** Open spares up to the target, within the pool's room. */
  refill(): void {
    if (!this.options.wanted()) return;
    const { clock } = this.options.target;
    while (
      !this.options.closed() &&
      this.spares.length < this.target.value &&
      this.options.room() > 0
    ) {
      const started = clock.now();
      const p = this.options.open();
      p.then(
        () => {
          this.ready.add(p);
          this.target.opened(clock.now() - started);
          // The demand that asked for it passed while it started: it is surplus now.
          if (this.spares.length > this.target.value) this.trim();
        },
        (err: unknown) => {
          // It holds no room while it is not there to take; the next call opens its own.
          const i = this.spares.indexOf(p);
          if (i >= 0) void this.spares.splice(i, 1);
          // A failing spare is reported by the call that opens the next one.
          this.options.logger.debug(`spare session failed: ${errorMessage(err)}`);
        },
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

  /** Close the ready spares beyond the target (the demand that grew it has passed). */
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
