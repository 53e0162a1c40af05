/**
 * The spare sessions of a pool, opened ahead of the calls that take them (how many: the adaptive
 * `SpareTarget`), and when a taken spare is replaced. Opening a stdio session spawns a process,
 * and node's spawn() holds the event loop until the child has exec'd (tens of ms on a loaded
 * machine): a replacement opened while a call runs delays that call's answer. So a replacement
 * waits until no call holds a session of the pool, or `deferMs` at most (a long call, or calls
 * overlapping without end); the time it waited counts in the replacement time that sizes spares.
 */
import os from "node:os";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { UpstreamSession } from "../upstream/types.js";
import { SpareTarget, type SpareTargetOptions } from "./spare-target.js";

/** The longest a replacement waits for no call to be running. */
export const REFILL_DEFER_MS = 200;
/**
 * Spares past `prewarm` are opened only while the machine has this share of its memory
 * available: a burst's spares never push it into swap or the OOM killer.
 */
const MIN_FREE_SHARE = 0.1;

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
  /** Calls holding a session of the pool now (a replacement waits for none, or deferMs). */
  calls: () => number;
  /** Bytes of memory available (default `os.freemem()`) and in all (`os.totalmem()`). */
  memory?: () => { free: number; total: number };
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
  /** When the oldest replacement not yet started was asked for (undefined: none waits). */
  private askedAt: number | undefined;
  /** Starts the waiting replacements after `REFILL_DEFER_MS` (a call still runs). */
  private deferTimer: unknown;
  /** A refill is queued for the next turn of the event loop. */
  private immediate = false;
  /** Calls that found no spare ready (each waited for a session to start). */
  private missed = 0;

  constructor(private readonly options: SpareSessionsOptions) {
    this.target = new SpareTarget({ ...options.target, onShrink: () => this.trim() });
  }

  /** Spares ready to take, spares still starting, and calls that found none ready. */
  counts(): { ready: number; warming: number; missed: number } {
    const ready = this.spares.filter((p) => this.ready.has(p)).length;
    return { ready, warming: this.spares.length - ready, missed: this.missed };
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
    if (demand && i < 0) this.missed += 1;
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

  /**
   * A spare was taken or a slot freed: replace spares once no call runs (after this turn of the
   * event loop, so an answer already on its way goes out first), or `REFILL_DEFER_MS` after the
   * first ask at the latest.
   */
  soon(): void {
    if (!this.options.wanted() || this.options.closed()) return;
    const { clock } = this.options.target;
    this.askedAt ??= clock.now();
    if (this.options.calls() === 0) {
      this.nextTurn();
      return;
    }
    this.deferTimer ??= clock.setTimeout(() => {
      this.deferTimer = undefined;
      this.refill();
    }, REFILL_DEFER_MS);
  }

  /** A call ended: replacements waiting for a quiet moment start when it is one. */
  released(): void {
    if (this.askedAt !== undefined && this.options.calls() === 0) this.nextTurn();
  }

  private nextTurn(): void {
    if (this.immediate) return;
    this.immediate = true;
    setImmediate(() => {
      this.immediate = false;
      this.refill();
    });
  }

  /** Open spares up to the target, within the pool's room and the machine's memory. */
  refill(): void {
    const { clock } = this.options.target;
    // Every replacement asked for so far starts now: the time waited counts as replacing.
    const started = this.askedAt ?? clock.now();
    this.askedAt = undefined;
    if (this.deferTimer !== undefined) clock.clearTimeout(this.deferTimer);
    this.deferTimer = undefined;
    if (!this.options.wanted()) return;
    while (
      !this.options.closed() &&
      this.spares.length < this.target.value &&
      this.options.room() > 0 &&
      (this.spares.length < this.options.target.min || this.memoryLeft())
    ) {
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

  /** Whether the machine has memory for one more spare past `prewarm`. */
  private memoryLeft(): boolean {
    const { free, total } = this.options.memory?.() ?? {
      free: os.freemem(),
      total: os.totalmem(),
    };
    return free >= total * MIN_FREE_SHARE;
  }

  /** Hand over every spare (to close): the pool resets or closes. */
  drain(): Promise<UpstreamSession>[] {
    return this.spares.splice(0);
  }

  /** Stop the timers (the pool closes). */
  stop(): void {
    this.target.stop();
    if (this.deferTimer !== undefined) this.options.target.clock.clearTimeout(this.deferTimer);
    this.deferTimer = undefined;
    this.askedAt = undefined;
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
