import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ListSubscription, UpstreamSession } from "./connection.js";

/** Waits before re-opening a listen stream that ended; the next one after each failure. */
const RETRY_DELAYS_MS = [100, 1_000, 5_000, 15_000, 30_000];
/** A stream that lasted this long was healthy: the next drop starts the delays over. */
const HEALTHY_MS = 10_000;
/** Bound on the upstream's acknowledgement of a listen request. */
const ACK_TIMEOUT_MS = 30_000;

/** A session to listen on, and whether the watch owns it (closes it when done). */
export interface WatchSession {
  session: UpstreamSession;
  own: boolean;
}

/**
 * The one subscriptions/listen stream of a group of modern upstreams. Legacy upstreams announce
 * list changes on every session unasked; modern ones only on a listen stream, and one per group
 * is enough (sessions of a stateless upstream are per call). Re-opened when the upstream ends it,
 * with growing delays while that keeps failing.
 */
export class ListWatch {
  /** Bumped by stop(): a run that started before it ends without touching anything. */
  private generation = 0;
  private running = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private current: WatchState | undefined;

  constructor(
    /** Opens (or lends) the session to listen on. */
    private readonly open: () => Promise<WatchSession>,
    private readonly options: { logger: Logger },
  ) {}

  /** Start watching unless already watching. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.run(this.generation);
  }

  /** Stop watching: close the stream (and the session it owns). start() may follow. */
  async stop(): Promise<void> {
    this.generation += 1;
    this.running = false;
    this.attempt = 0;
    clearTimeout(this.timer);
    const current = this.current;
    this.current = undefined;
    await current?.sub?.close().catch(() => {});
    if (current?.watched?.own) await current.watched.session.close().catch(() => {});
  }

  private async run(generation: number): Promise<void> {
    const live = () => generation === this.generation;
    const state: WatchState = {};
    this.current = state;
    let lasted = 0;
    try {
      state.watched = await this.open();
      if (live()) state.sub = await state.watched.session.listen({ timeoutMs: ACK_TIMEOUT_MS });
      if (live() && !state.sub) {
        // The upstream says none of its lists change: nothing to watch while it runs.
        this.release(state);
        return;
      }
      if (live() && state.sub) {
        const opened = performance.now();
        const session = state.watched.session;
        let stopWaiting = () => {};
        const closed = new Promise<"closed">((resolve) => {
          stopWaiting = session.onClosed(() => resolve("closed"));
        });
        // The shared session outlives many streams: no close handler left behind per stream.
        const why = await Promise.race([state.sub.ended, closed]).finally(stopWaiting);
        lasted = performance.now() - opened;
        if (live()) this.options.logger.debug(`list_changed stream ended (${why}); reopening`);
      }
    } catch (err) {
      if (live()) this.options.logger.debug(`list_changed stream failed: ${errorMessage(err)}`);
    }
    this.release(state);
    if (!live()) return;
    if (lasted >= HEALTHY_MS) this.attempt = 0;
    const delay = RETRY_DELAYS_MS[Math.min(this.attempt, RETRY_DELAYS_MS.length - 1)];
    this.attempt += 1;
    this.timer = setTimeout(() => {
      if (live()) void this.run(generation);
    }, delay);
    this.timer.unref();
  }

  /** Close the stream and the session the watch owns; idempotent. */
  private release(state: WatchState): void {
    void state.sub?.close().catch(() => {});
    if (state.watched?.own) void state.watched.session.close().catch(() => {});
    if (this.current === state) this.current = undefined;
  }
}

interface WatchState {
  sub?: ListSubscription | undefined;
  watched?: WatchSession;
}
