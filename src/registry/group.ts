/**
 * One server group: the servers whose specs are identical (one fingerprint, see fingerprint.ts)
 * share one session pool, one discovery, one stderr ring, the resource subscriptions clients hold
 * and the list refreshes after `list_changed`, whatever their names.
 */
import type { ServerConfig } from "../config/load.js";
import { ProxyError } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { StderrRing } from "../upstream/stderr.js";
import type { ClientFactory, ListKind, UpstreamSession } from "../upstream/types.js";
import { SessionPool } from "./pool.js";
import type { RelayedOptional } from "./notes.js";
import { ResourceSubscriptions } from "./subscriptions.js";
import type { Catalog } from "./types.js";

export interface GroupOptions {
  /** The client factory of the group's upstream, which keeps its stderr in `stderr`. */
  factory: (stderr: StderrRing) => ClientFactory;
  logger: Logger;
  clock?: Clock;
  /** Every session the pool opens, once open. */
  onSession: (group: ServerGroup, session: UpstreamSession) => void;
  /** Lazy groups: the pool has had no call for `idleTimeout`. */
  onIdle?: (group: ServerGroup) => void;
  /** The timeout of a subscribe request (a reload may change it). */
  timeoutMs: () => number;
  /** A subscribe/unsubscribe failed (a note on the servers), or works again (`why` undefined). */
  onNote?: (method: RelayedOptional, why: string | undefined) => void;
}

export class ServerGroup {
  /** Its servers' names, in config order (empty once a reload removed them all). */
  names: string[] = [];
  /** `start: "lazy"` (part of the fingerprint, so the same for all its servers). */
  readonly lazy: boolean;
  /** The upstream's recent stderr lines. */
  readonly stderr = new StderrRing();
  readonly pool: SessionPool;
  /** The pool's client factory (a look for tools' needs opens sessions with it too). */
  readonly factory: ClientFactory;
  /** The resource subscriptions clients hold on this group. */
  readonly subscriptions: ResourceSubscriptions;
  /** The discovery under way, shared by its servers. */
  private discovery: Promise<Catalog> | undefined;
  /** List kind → the refresh under way, and the session to refresh from next. */
  private readonly refreshing = new Map<ListKind, { next?: UpstreamSession }>();

  constructor(
    /** The fingerprint of the spec its servers share. */
    readonly key: string,
    server: ServerConfig,
    options: GroupOptions,
  ) {
    this.lazy = server.start === "lazy";
    const { onIdle } = options;
    this.factory = options.factory(this.stderr);
    this.pool = new SessionPool(this.factory, {
      ...server.session,
      ...(options.clock && { clock: options.clock }),
      logger: options.logger,
      onSession: (session) => options.onSession(this, session),
      ...(this.lazy && onIdle && { onIdle: () => onIdle(this) }),
    });
    this.subscriptions = new ResourceSubscriptions(this.pool, {
      logger: options.logger,
      timeoutMs: options.timeoutMs,
      ...(options.onNote && { onNote: options.onNote }),
    });
  }

  /**
   * The catalog from `fetch`, or from the discovery already under way: the group's servers
   * share one. Later discoveries (after an outage) fetch anew.
   */
  catalog(fetch: () => Promise<Catalog>): Promise<Catalog> {
    if (this.discovery) return this.discovery;
    const pending = fetch();
    this.discovery = pending;
    void pending
      .finally(() => {
        if (this.discovery === pending) this.discovery = undefined;
      })
      .catch(() => {});
    return pending;
  }

  /**
   * Ping the upstream through the pool (a spare, the shared session, or a short one): the round
   * trip in ms, or "busy" when the ping failed on a session that is running our own calls (a
   * single-threaded upstream busy with a call cannot answer; that is not an outage).
   */
  async ping(timeoutMs: number): Promise<number | "busy"> {
    const started = performance.now();
    let pinged: UpstreamSession | undefined;
    try {
      await this.pool.inspect((session) => {
        pinged = session;
        return session.ping({ timeoutMs });
      });
    } catch (err) {
      if (pinged && this.pool.busy(pinged)) return "busy";
      // isolated: every session it may hold is running our calls.
      if (err instanceof ProxyError && err.code === "UPSTREAM_BUSY") return "busy";
      throw err;
    }
    return performance.now() - started;
  }

  /**
   * Refresh one list after list_changed with `refresh`, coalesced per list: announcements
   * arriving while one refresh runs (every session of a pool may send one, servers send them in
   * bursts) make one more refresh after it, from the last session that announced, not one each.
   */
  async refresh(
    session: UpstreamSession,
    kind: ListKind,
    refresh: (session: UpstreamSession) => Promise<void>,
  ): Promise<void> {
    const running = this.refreshing.get(kind);
    if (running) {
      running.next = session;
      return;
    }
    const slot: { next?: UpstreamSession } = { next: session };
    this.refreshing.set(kind, slot);
    try {
      for (let s = slot.next; s; s = slot.next) {
        delete slot.next;
        await refresh(s);
      }
    } finally {
      this.refreshing.delete(kind);
    }
  }
}
