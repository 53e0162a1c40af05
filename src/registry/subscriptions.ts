/**
 * Resource subscriptions of one group of upstreams, counted across every client: the upstream is
 * subscribed to a URI while at least one client is, and unsubscribed when the last one goes.
 * Legacy upstreams get `resources/subscribe` on one long-lived session of the pool (the shared
 * one under the shared policy, else one of its own); modern ones get the URIs on the group's
 * `subscriptions/listen` stream (listwatch.ts).
 */
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { UpstreamSession } from "../upstream/types.js";
import type { WatchSession } from "./listwatch.js";
import type { RelayedOptional } from "./notes.js";
import type { SessionPool } from "./pool.js";

interface Entry {
  /** Clients holding the URI. */
  count: number;
  /** Settles once the upstream took the subscription (or refused it). */
  ready: Promise<void>;
}

/** A session that lived this long was fine: the next loss restores after the shortest delay. */
const STABLE_MS = 10_000;
const RESTORE_DELAYS_MS = [1_000, 5_000, 15_000, 60_000];

export interface SubscriptionOptions {
  logger: Logger;
  /** Bound on one subscribe or unsubscribe request. */
  timeoutMs: () => number;
  /**
   * The upstream failed (`why`) or answered (undefined) a subscribe or unsubscribe: a note on
   * the server, which stays up.
   */
  onNote?: (method: RelayedOptional, why: string | undefined) => void;
}

export class ResourceSubscriptions {
  private readonly uris = new Map<string, Entry>();
  /** Legacy: the long-lived session subscriptions live on. */
  private session: Promise<WatchSession> | undefined;
  private restoreTimer: NodeJS.Timeout | undefined;
  private losses = 0;
  private closed = false;

  constructor(
    private readonly pool: SessionPool,
    private readonly options: SubscriptionOptions,
  ) {}

  /** URIs subscribed upstream now. */
  get size(): number {
    return this.uris.size;
  }

  /**
   * Hold a subscription to `uri` until the returned function is called. Rejects when the
   * upstream refuses it (the count is not kept then).
   */
  async acquire(uri: string): Promise<() => void> {
    if (this.closed) throw new Error("the server was removed by a config reload");
    let entry = this.uris.get(uri);
    if (!entry) {
      const fresh: Entry = { count: 0, ready: Promise.resolve() };
      this.uris.set(uri, fresh);
      fresh.ready = this.subscribe(uri);
      // Nobody may be waiting when it fails (all gave up): the entry still goes.
      fresh.ready.catch(() => {
        if (this.uris.get(uri) === fresh) this.uris.delete(uri);
      });
      entry = fresh;
    }
    entry.count += 1;
    try {
      await entry.ready;
    } catch (err) {
      entry.count -= 1;
      throw err;
    }
    const held = entry;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(uri, held);
    };
  }

  /** Subscribe again to every URI held (after the upstream was down and came back). */
  restore(): void {
    clearTimeout(this.restoreTimer);
    if (this.closed || this.uris.size === 0) return;
    if (this.pool.era === "modern") {
      void this.pool.watchResources([...this.uris.keys()]);
      return;
    }
    if (this.session) return;
    const uris = [...this.uris.keys()];
    void (async () => {
      const session = await this.longLived();
      await Promise.all(uris.map((uri) => session.subscribeResource(uri, this.request())));
    })().catch((err: unknown) =>
      this.options.logger.warn(
        `resource subscriptions not restored (${uris.length}): ${errorMessage(err)}`,
      ),
    );
  }

  /** Forget every subscription (the pool is closing or retired). */
  close(): void {
    this.closed = true;
    clearTimeout(this.restoreTimer);
    this.uris.clear();
    const session = this.session;
    this.session = undefined;
    void session
      ?.then((w) => (w.own ? w.session.close() : undefined))
      .catch(() => {
        /* closing anyway */
      });
  }

  private async subscribe(uri: string): Promise<void> {
    if (this.pool.era === "modern") {
      // The listen stream carries the whole set; taken once a stream with it is acknowledged.
      await this.pool.watchResources([...this.uris.keys()]);
      return;
    }
    const session = await this.longLived();
    await this.noted("resources/subscribe", session.subscribeResource(uri, this.request()));
  }

  /** `request`, its failure (or success) reported as a note on the server. */
  private async noted(method: RelayedOptional, request: Promise<void>): Promise<void> {
    try {
      await request;
    } catch (err) {
      this.options.onNote?.(method, errorMessage(err));
      throw err;
    }
    this.options.onNote?.(method, undefined);
  }

  private release(uri: string, entry: Entry): void {
    entry.count -= 1;
    if (entry.count > 0 || this.uris.get(uri) !== entry) return;
    this.uris.delete(uri);
    if (this.closed) return;
    if (this.pool.era === "modern") {
      void this.pool.watchResources([...this.uris.keys()]);
      return;
    }
    const current = this.session;
    if (!current) return;
    const last = this.uris.size === 0;
    if (last) this.session = undefined;
    void current
      .then(async (w) => {
        await this.noted(
          "resources/unsubscribe",
          w.session.unsubscribeResource(uri, this.request()),
        );
        if (last && w.own) await w.session.close();
      })
      .catch((err: unknown) =>
        this.options.logger.debug(`unsubscribing ${uri} failed: ${errorMessage(err)}`),
      );
  }

  /** The session legacy subscriptions live on, opened on first use. */
  private async longLived(): Promise<UpstreamSession> {
    if (!this.session) {
      const opening = this.pool.watchSession();
      this.session = opening;
      opening.then(
        (w) => this.onLoss(opening, w),
        () => {
          if (this.session === opening) this.session = undefined;
        },
      );
    }
    return (await this.session).session;
  }

  /** When the session ends under its subscriptions (the upstream died), restore them later. */
  private onLoss(opening: Promise<WatchSession>, watched: WatchSession): void {
    const opened = performance.now();
    watched.session.onClosed(() => {
      if (this.session !== opening) return;
      this.session = undefined;
      if (this.closed || this.uris.size === 0) return;
      this.losses = performance.now() - opened >= STABLE_MS ? 0 : this.losses + 1;
      const delay = RESTORE_DELAYS_MS[Math.min(this.losses, RESTORE_DELAYS_MS.length - 1)];
      this.options.logger.info(
        `the session holding ${this.uris.size} resource subscription(s) ended; subscribing again in ${delay} ms`,
      );
      clearTimeout(this.restoreTimer);
      this.restoreTimer = setTimeout(() => this.restore(), delay);
      this.restoreTimer.unref();
    });
  }

  private request() {
    return { timeoutMs: this.options.timeoutMs() };
  }
}
