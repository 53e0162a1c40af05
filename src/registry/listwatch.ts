import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ListSubscription, UpstreamSession } from "../upstream/types.js";

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
 * is enough (sessions of a stateless upstream are per call). It also carries the updates of the
 * resources clients subscribed to. Re-opened when the upstream ends it, with growing delays
 * while that keeps failing, and at once for a new set of resources.
 */
export class ListWatch {
  /** Bumped by stop(): a run that started before it ends without touching anything. */
  private generation = 0;
  private running = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private current: WatchState | undefined;
  /** Resource URIs the stream also asks updates for (clients subscribed to them). */
  private resources: readonly string[] = [];
  /** Bumped when `resources` changes: a stream opened with an older set is re-opened. */
  private revision = 0;
  /** The last stream ended for a new filter: open the next one at once. */
  private reopenNow = false;
  /** The upstream had nothing to listen for: running, but no stream and no retry. */
  private idle = false;
  /** Who waits for a stream carrying at least this revision of `resources`. */
  private waiters: { revision: number; resolve: () => void }[] = [];

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

  /**
   * Ask for updates of these resource URIs too (the whole set, replacing the last one): the
   * stream is re-opened with the new filter at once.
   */
  watchResources(uris: readonly string[]): Promise<void> {
    this.resources = [...uris];
    this.revision += 1;
    const acknowledged = new Promise<void>((resolve) =>
      this.waiters.push({ revision: this.revision, resolve }),
    );
    if (this.idle) {
      this.idle = false;
      this.running = false;
    }
    if (!this.running) {
      this.start();
      return acknowledged;
    }
    const sub = this.current?.sub;
    if (sub) {
      this.reopenNow = true;
      void sub.close().catch(() => {});
    }
    // No stream yet: the one being opened compares revisions once it is acknowledged.
    return acknowledged;
  }

  /** Resolve who waited for `revision` or an older one (a stream with it is open, or failed). */
  private settle(revision: number): void {
    const ready = this.waiters.filter((w) => w.revision <= revision);
    this.waiters = this.waiters.filter((w) => w.revision > revision);
    for (const w of ready) w.resolve();
  }

  /** Stop watching: close the stream (and the session it owns). start() may follow. */
  async stop(): Promise<void> {
    this.generation += 1;
    this.running = false;
    this.idle = false;
    this.reopenNow = false;
    this.attempt = 0;
    this.settle(Infinity);
    clearTimeout(this.timer);
    const current = this.current;
    this.current = undefined;
    await current?.sub?.close().catch(() => {});
    if (current?.watched?.own) await current.watched.session.close().catch(() => {});
  }

  private async run(generation: number, reuse?: WatchSession): Promise<void> {
    const live = () => generation === this.generation;
    const state: WatchState = {};
    this.current = state;
    let lasted = 0;
    try {
      state.watched = reuse ?? (await this.open());
      const asked = this.revision;
      if (live())
        state.sub = await state.watched.session.listen(
          { timeoutMs: ACK_TIMEOUT_MS },
          this.resources,
        );
      // Acknowledged (or nothing to ask): those waiting for this set may go on.
      if (live()) this.settle(asked);
      if (live() && !state.sub) {
        // The upstream says none of its lists change and nothing is subscribed: nothing to
        // watch until a subscription comes (watchResources starts over).
        this.idle = true;
        this.release(state);
        return;
      }
      if (live() && state.sub && asked !== this.revision) {
        // The subscribed set changed while this stream opened: open one with the new set.
        this.reopenNow = true;
        void state.sub.close().catch(() => {});
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
      // Nobody waits for a retry: updates flow once one succeeds.
      if (live()) this.settle(this.revision);
    }
    if (live() && this.reopenNow && state.watched && !state.watched.session.closed) {
      // A new filter on a session that is fine: listen again on it, at once.
      this.reopenNow = false;
      const watched = state.watched;
      void state.sub?.close().catch(() => {});
      if (this.current === state) this.current = undefined;
      void this.run(generation, watched);
      return;
    }
    this.release(state);
    if (!live()) return;
    if (lasted >= HEALTHY_MS) this.attempt = 0;
    this.reopenNow = false;
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
