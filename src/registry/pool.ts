import { errorMessage, ProxyError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { SessionPolicy } from "../config/load.js";
import type { ClientFactory, UpstreamSession } from "../upstream/types.js";
import { IsolatedSlots, type InspectWait } from "./isolated.js";
import { KeyedSessions } from "./keyed.js";
import { clientKey, LOST, type AcquireOptions, type Lease } from "./lease.js";
import { Leases } from "./leases.js";
import { ListWatch, type WatchSession } from "./listwatch.js";
import { WaitQueue } from "./queue.js";
import { SharedSession } from "./shared.js";
import { SpareSessions } from "./spares.js";
import { systemClock, type Clock } from "../clock.js";

/**
 * How calls to one upstream map onto sessions (SessionPolicy, from the config):
 * - client: one long-lived session per downstream client, opened on its first call (from a
 *   spare), closed when the client leaves or after `idleTimeoutMs` without calls (default);
 * - isolated: every call gets a fresh session no other call has used;
 * - shared: one long-lived session multiplexes every call (stateful, expensive servers);
 * - caller: one long-lived session per caller, closed after `idleTimeoutMs` without calls.
 * A modern upstream over HTTP is stateless: its sessions cost nothing to open or close, so a
 * pool keeps no spares for it. When a long-lived session a client used is replaced, the
 * client's next lease says why (`Lease.restarted`).
 */

export type { AcquireOptions, Lease } from "./lease.js";
export type { InspectWait } from "./isolated.js";

export interface PoolOptions {
  policy: SessionPolicy;
  /**
   * isolated: initialized spare sessions kept ready, so a call skips spawn + initialize. A call
   * that finds none ready grows the spares by one, up to `maxSessions`. client: spares a new
   * client's first call takes.
   */
  prewarm: number;
  /**
   * isolated: concurrent calls (and spares a burst grows to); client, caller: concurrent
   * client (caller) sessions. Further calls queue.
   */
  maxSessions: number;
  /**
   * client, caller: close a client's (caller's) session after this long without calls.
   * isolated: spares a burst added close after this long without another call finding none ready.
   */
  idleTimeoutMs: number;
  /** Time for the spares' shrink (tests inject a fake clock). */
  clock?: Clock;
  logger: Logger;
  /** Sees every session the pool opens before anyone uses it (e.g. to hear list_changed). */
  onSession?: (session: UpstreamSession) => void;
  /** Called when the last call holding a session ends (lazy servers start their idle timer). */
  onIdle?: () => void;
}

/** What a pool holds right now; rendered by status pages and asserted by tests. */
export interface PoolStats {
  policy: SessionPolicy;
  /** Live sessions: spares, leased, shared or per caller. */
  open: number;
  /** Calls holding a session. */
  leased: number;
  /** Calls waiting for a slot. */
  waiting: number;
  /** Spares initialized and ready (isolated). */
  spares: number;
  /** Spares still starting (isolated). */
  warming: number;
  /** Calls that found no spare ready and waited for a session to start (isolated), so far. */
  missed: number;
}

/** Why a pool takes no more calls. */
const CLOSED_MESSAGE = {
  retired: "the server was reconfigured by a config reload while the call waited; call it again",
  closed: "mcpx is shutting down",
} as const;

/**
 * The sessions of one upstream spec. Every session it opens is tracked until it is closed, so
 * close() leaves no process behind whatever state calls were in.
 */
export class SessionPool {
  private readonly open = new Set<UpstreamSession>();
  /** isolated, client: sessions opened ahead of the calls that take them. */
  private readonly spares: SpareSessions;
  /** Calls waiting for a free session (isolated: under maxSessions; client, caller: a slot). */
  private readonly queue: WaitQueue;
  /** client, caller: the long-lived session of each client (caller). */
  private readonly keyed: KeyedSessions | undefined;
  /** shared: the one session every call uses. */
  private readonly shared = new SharedSession(() => this.openSession());
  /** Calls holding sessions, and the sessions reset() dropped under them. */
  private readonly leases: Leases;
  /** isolated: slots within maxSessions (calls, inspect(), spares, sessions closing). */
  private readonly isolated: IsolatedSlots | undefined;
  /** Sessions being opened now: close() ends them too instead of leaving them to start. */
  private readonly opening = new Set<Promise<UpstreamSession>>();
  /** Aborted by close(): a session still starting is torn down at once. */
  private readonly lifetime = new AbortController();
  /** Why the pool takes no calls; unset while it does. */
  private closedBecause: keyof typeof CLOSED_MESSAGE | undefined;
  /** The last session opened was modern over HTTP: opening one costs nothing, keep no spares. */
  private stateless = false;
  /** Modern upstreams' list_changed stream, one per pool, started by their first session. */
  private readonly listWatch: ListWatch;
  /** The era of the last session opened (undefined before the first). */
  private lastEra: UpstreamSession["era"] | undefined;

  constructor(
    private readonly factory: ClientFactory,
    private readonly options: PoolOptions,
  ) {
    this.listWatch = new ListWatch(() => this.watchSession(), { logger: options.logger });
    this.queue = new WaitQueue(options.maxSessions);
    this.leases = new Leases({
      dispose: (session) => this.dispose(session),
      ...(options.onIdle && { onIdle: options.onIdle }),
    });
    this.spares = new SpareSessions({
      open: () => this.openSession(),
      dispose: (session) => this.dispose(session),
      wanted: () => this.keepsSpares && !this.stateless,
      closed: () => this.closed,
      room: () => this.isolated?.room() ?? Infinity,
      calls: () => this.leases.calls,
      logger: options.logger,
      // isolated: how many spares to keep, grown by bursts and shrunk when they pass.
      target: {
        min: options.prewarm,
        max: Math.max(options.prewarm, options.maxSessions),
        idleMs: options.idleTimeoutMs,
        clock: options.clock ?? systemClock,
      },
    });
    const { policy } = options;
    if (policy === "isolated") {
      this.isolated = new IsolatedSlots({
        maxSessions: options.maxSessions,
        queue: this.queue,
        spares: this.spares,
        leases: this.leases,
        dispose: (session) => this.dispose(session, true),
      });
    }
    if (policy === "client" || policy === "caller") {
      this.keyed = new KeyedSessions(
        {
          // A new client takes a spare: its first call skips spawn + initialize.
          open: () => (policy === "client" ? this.spares.take() : this.openSession()),
          dispose: (session) => this.dispose(session),
          lease: (session, onRelease, restarted) =>
            this.leases.take(
              session,
              () => {
                onRelease();
                // The spare a client took is replaced after its call, never during it.
                if (policy === "client") setImmediate(() => this.spares.refill());
              },
              restarted,
            ),
          queue: this.queue,
        },
        {
          kind: policy,
          maxSessions: options.maxSessions,
          idleTimeoutMs: options.idleTimeoutMs,
          evictIdle: policy === "caller",
        },
      );
    }
  }

  get policy(): SessionPolicy {
    return this.options.policy;
  }

  /** The protocol era the upstream spoke on the last session opened, once one was. */
  get era(): UpstreamSession["era"] | undefined {
    return this.lastEra;
  }

  /**
   * Modern upstreams: the resource URIs clients subscribed to, carried by the pool's listen
   * stream (the whole set; the stream is re-opened with it). Resolves once a stream with them
   * is acknowledged (or failed: updates flow once a retry succeeds).
   */
  watchResources(uris: readonly string[]): Promise<void> {
    return this.listWatch.watchResources(uris);
  }

  stats(): PoolStats {
    const spares = this.spares.counts();
    return {
      policy: this.options.policy,
      open: this.open.size,
      leased: this.leases.calls,
      waiting: this.queue.length,
      spares: spares.ready,
      warming: spares.warming,
      missed: spares.missed,
    };
  }

  /** Start the spare sessions of an isolated pool (after discovery, off the startup path). */
  warm(): void {
    this.spares.refill();
  }

  private get closed(): boolean {
    return this.closedBecause !== undefined;
  }

  /** The error a call gets from a pool that takes no more calls, saying why. */
  private closedError(): ProxyError {
    const why = this.closedBecause ?? "closed";
    return new ProxyError(
      why === "retired" ? "POOL_RETIRED" : "SHUTTING_DOWN",
      CLOSED_MESSAGE[why],
    );
  }

  /**
   * Whether `session` is serving calls now. A health check that times out on such a session
   * says the upstream is busy with our own work, not that it is gone.
   */
  busy(session: UpstreamSession): boolean {
    return this.leases.busy(session);
  }

  /** Lend a session for one call, per the pool's policy. */
  async acquire(options: AcquireOptions): Promise<Lease> {
    if (this.closed) throw this.closedError();
    switch (this.options.policy) {
      case "isolated":
        return this.isolatedSlots().acquire(options);
      case "shared":
        return this.acquireShared(options);
      case "client":
        return this.keyedSessions().acquire(clientKey(options), options);
      case "caller":
        return this.keyedSessions().acquire(options.caller, options);
      default: {
        const never: never = this.options.policy;
        throw new Error(`unknown session policy ${String(never)}`);
      }
    }
  }

  /**
   * The downstream client `client` left (its connection closed, its HTTP session ended): the
   * session it held under `client` closes, and nothing is owed to it any more.
   */
  leave(client: string): void {
    this.shared.forget(client);
    if (this.options.policy === "client") this.keyed?.leave(client);
  }

  private isolatedSlots(): IsolatedSlots {
    if (!this.isolated) throw new Error(`no isolated slots under ${this.options.policy}`);
    return this.isolated;
  }

  private keyedSessions(): KeyedSessions {
    if (!this.keyed) throw new Error(`no keyed sessions under ${this.options.policy}`);
    return this.keyed;
  }

  /** Whether the pool keeps spare sessions (isolated, client). */
  private get keepsSpares(): boolean {
    return this.options.policy === "isolated" || this.options.policy === "client";
  }

  /**
   * Run proxy-internal requests (listing, ping) on a session without spending it: a spare
   * session used only for this stays a valid spare, since no call has used it.
   */
  async inspect<T>(
    fn: (session: UpstreamSession) => Promise<T>,
    wait: InspectWait = {},
  ): Promise<T> {
    if (this.closed) throw this.closedError();
    if (this.options.policy === "shared") return fn(await this.shared.session());
    const { isolated } = this;
    const session = isolated
      ? await isolated.borrow(wait)
      : this.keepsSpares
        ? await this.spares.take()
        : await this.openSession();
    let healthy = false;
    try {
      const result = await fn(session);
      healthy = true;
      return result;
    } finally {
      // Only a session that just answered goes back: one whose ping or listing failed is
      // suspect, and a call must not inherit it.
      const back =
        healthy &&
        this.keepsSpares &&
        !session.stateless &&
        !session.closed &&
        !this.closed &&
        this.spares.giveBack(session);
      if (!back) this.dispose(session);
      // Its slot (or the spare it became) is free for a waiting call.
      isolated?.returned();
    }
  }

  /**
   * Drop every session so the next use opens fresh ones: after an upstream failed, what the
   * pool holds is suspect. Sessions lent to calls are not cut under them: the shared session
   * and busy clients' ones close when their running calls end (or fail on their own). Clients
   * whose session is dropped are told on their next call.
   */
  async reset(options: { keepEra?: boolean } = {}): Promise<void> {
    await this.listWatch.stop();
    // The upstream may come back as another server (upgraded, replaced): learn its era again.
    // (Not when an idle lazy server is closed: it is the same upstream when it starts again.)
    if (!options.keepEra) this.factory.forgetEra?.();
    this.stateless = false;
    const spares = this.spares.drain();
    const shared = this.shared.drop(LOST.reset);
    this.keyed?.reset();
    const settled = await Promise.allSettled([...spares, ...(shared ? [shared] : [])]);
    const sessions = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    await Promise.allSettled(
      sessions.filter((s) => !this.leases.detach(s)).map((s) => this.closeSession(s)),
    );
  }

  /**
   * For a pool a config reload left without servers: take no new calls, let the running ones
   * finish for up to `graceMs`, then close everything.
   */
  async retire(graceMs: number): Promise<void> {
    this.closedBecause ??= "retired";
    this.queue.rejectAll(this.closedError());
    await this.leases.idle(graceMs);
    await this.close();
  }

  /** Close every session this pool opened: spares, leased, shared, per client or caller. */
  async close(): Promise<void> {
    this.closedBecause ??= "closed";
    this.spares.stop();
    this.queue.rejectAll(this.closedError());
    await this.listWatch.stop();
    // Sessions still starting are torn down now (their processes killed), not left to finish.
    this.lifetime.abort();
    await Promise.allSettled([...this.opening]);
    const shared = this.shared.drop();
    const pending = [
      ...this.spares.drain(),
      ...(shared ? [shared] : []),
      ...(this.keyed?.clear() ?? []),
    ];
    const settled = await Promise.allSettled(pending);
    for (const r of settled) if (r.status === "fulfilled") this.open.add(r.value);
    await Promise.allSettled([...this.open].map((s) => this.closeSession(s)));
  }

  // ---- shared ---------------------------------------------------------------------------

  private async acquireShared(options: AcquireOptions): Promise<Lease> {
    const { session, restarted } = await this.shared.acquire(clientKey(options));
    return this.leases.take(session, () => {}, restarted);
  }

  // ---- plumbing -------------------------------------------------------------------------

  private async openSession(): Promise<UpstreamSession> {
    const opening = this.factory(this.lifetime.signal);
    this.opening.add(opening);
    let session: UpstreamSession;
    try {
      session = await opening;
    } finally {
      this.opening.delete(opening);
    }
    if (this.closed) {
      await session.close();
      throw this.closedError();
    }
    this.open.add(session);
    session.onClosed(() => this.open.delete(session));
    this.stateless = session.stateless;
    this.lastEra = session.era;
    this.options.onSession?.(session);
    if (session.era === "modern") this.listWatch.start();
    return session;
  }

  /**
   * A long-lived session to listen or subscribe on: the shared one (not owned: never close it),
   * else a new one the caller owns and must close.
   */
  async watchSession(): Promise<WatchSession> {
    if (this.closed) throw this.closedError();
    if (this.options.policy === "shared")
      return { session: await this.shared.session(), own: false };
    return { session: await this.openSession(), own: true };
  }

  /**
   * Close a session off the caller's path. Until its process is gone it counts against an
   * isolated pool's `maxSessions`; then the slot goes to a waiting call, else to a spare.
   * (`counted`: the caller already counted it as closing.)
   */
  private dispose(session: UpstreamSession, counted = false): void {
    if (!counted) this.isolated?.closingOne();
    void this.closeSession(session).finally(() => this.isolated?.closedOne());
  }

  private async closeSession(session: UpstreamSession): Promise<void> {
    try {
      await session.close();
    } catch (err) {
      this.options.logger.debug(`closing a session failed: ${errorMessage(err)}`);
    } finally {
      this.open.delete(session);
      this.leases.forget(session);
    }
  }
}
