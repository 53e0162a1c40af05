/**
 * The registry: the catalog of every upstream, one `ServerGroup` per spec (group.ts) behind the
 * servers that share it, one `ServerState` per server name (types.ts). Discovery fetches the
 * catalogs (discovery.ts), the persistent cache answers before it lands (catalog-cache.ts), lazy
 * groups start on first use (lazy.ts); reloads swap the set of servers in one tick.
 */
import type { Config, ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { RelayHub } from "../upstream/asker.js";
import { loginCommand } from "../errors.js";
import { TokenStore, type SignInStore } from "../upstream/oauth/store.js";
import { createClientFactory } from "../upstream/factory.js";
import type { StderrRing } from "../upstream/stderr.js";
import type { ChildTracker } from "../upstream/transport.js";
import type { ClientFactory, ListKind, UpstreamSession } from "../upstream/types.js";
import { launchKey, type CatalogCache } from "./catalog-cache.js";
import { fetchCatalog, fetchList } from "./discovery.js";
import { fingerprint } from "./fingerprint.js";
import { ServerGroup } from "./group.js";
import { LazyServers } from "./lazy.js";
import type { PoolStats, SessionPool } from "./pool.js";
import { ServerStates } from "./states.js";
import type { TrustPins } from "./trust.js";
import type { ServerHealth, ServerState, ServerStatus } from "./types.js";

import { lookedAt, NeedsLooks } from "./capability-tools.js";
import type { OptionalMethod } from "./notes.js";

export type { OptionalMethod, ServerHealth, ServerState, ServerStatus } from "./types.js";

export interface RegistryOptions {
  logger: Logger;
  /** Tracks spawned upstream processes for a last-resort kill. */
  tracker?: ChildTracker;
  /** Injectable connector: tests supply in-memory factories. */
  factoryFor?: (server: ServerConfig) => ClientFactory;
  now?: () => number;
  /** Time for the pools' spare shrink and lazy servers' idle close (tests inject a fake clock). */
  clock?: Clock;
  /** The persistent catalog cache; none: every start discovers from scratch. */
  cache?: CatalogCache;
  /** Pinned definitions each catalog is checked against (src/registry/trust.ts); none: no pins. */
  trust?: TrustPins;
  /** mcpx's state folder, where OAuth sign-ins are kept; none: a protected server needs sign-in. */
  stateDir?: string;
  /** Where sign-ins are kept when not in `stateDir` (Redis, sealed: src/upstream/oauth/shared-store.ts). */
  signIns?: SignInStore;
}

type UpdateListener = (server: string, uri: string) => void;

/**
 * The catalog of every upstream and the session pools behind it. Identical specs (same
 * fingerprint) share one group: one pool and one discovery, whatever their names. The catalog is
 * discovered in parallel at startup, cached, and refreshed when any session of a pool announces
 * `list_changed`.
 */
export class Registry {
  /** server name → what is known of it, in config order. */
  private readonly states: ServerStates;
  /** fingerprint → the group of the servers with that spec. */
  private readonly groupsByKey = new Map<string, ServerGroup>();
  /** server name → its group. */
  private readonly groupOf = new Map<string, ServerGroup>();
  /** Pools a reload left behind, finishing their calls before they close. */
  private readonly retiring = new Set<SessionPool>();
  private readonly updateListeners = new Set<UpdateListener>();
  private closed = false;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly clock: Clock | undefined;
  private readonly factoryFor: (server: ServerConfig, stderr: StderrRing) => ClientFactory;
  /** Sessions whose upstream hears a client's roots/list_changed (see asker.ts). */
  private readonly relayHub = new RelayHub();
  private readonly cache: CatalogCache | undefined;
  /** Groups of `start: "lazy"` servers: woken by use, put to sleep when idle. */
  private readonly lazy: LazyServers;
  private readonly needsLooks: NeedsLooks;
  /** The trust pins (src/registry/trust.ts); none when mcpx keeps no state. */
  readonly trustPins: TrustPins | undefined;
  /** Sign-ins to OAuth-protected upstreams (none without a state folder): the dashboard's Sign in. */
  readonly signIns: SignInStore | undefined;

  constructor(
    private config: Config,
    options: RegistryOptions,
  ) {
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.states = new ServerStates(this.log, this.now, options.trust);
    this.trustPins = options.trust;
    this.clock = options.clock;
    this.cache = options.cache;
    this.needsLooks = new NeedsLooks(this.log, options.clock);
    this.lazy = new LazyServers({
      ...(options.clock && { clock: options.clock }),
      logger: this.log,
      pool: (print) => this.groupsByKey.get(print)?.pool,
      onRunning: (print, running) => this.states.setRunning(this.namesOf(print), running),
    });
    const { factoryFor, tracker } = options;
    const tokens =
      options.signIns ??
      (options.stateDir === undefined ? undefined : new TokenStore(options.stateDir));
    this.signIns = tokens;
    this.factoryFor = factoryFor
      ? (s) => factoryFor(s)
      : (s, stderr) =>
          createClientFactory(s, {
            logger: this.log,
            connectTimeoutMs: this.config.discoveryTimeoutMs,
            stderr,
            hub: this.relayHub,
            ...(tracker && { tracker }),
            ...(this.config.trust === "untrusted" && { publicOnly: {} }),
            oauth: {
              ...(tokens && { store: tokens }),
              command: loginCommand(this.config.file, s.name),
            },
          });
    for (const server of config.servers) this.add(server);
  }

  /** A new server: state "starting", in the group of its spec (a new one when none has it). */
  private add(server: ServerConfig): void {
    // Read at once (a few small files): the first tools/list, however early, names their tools.
    const cached = this.cache?.load(launchKey(server), server.name);
    this.states.add(server, cached);
    const print = fingerprint(server);
    if (cached?.look) this.needsLooks.remember(print, cached.look);
    let group = this.groupsByKey.get(print);
    if (!group) {
      group = new ServerGroup(print, server, {
        factory: (stderr) => this.factoryFor(server, stderr),
        logger: this.log.child(server.name),
        ...(this.clock && { clock: this.clock }),
        onSession: (g, session) => {
          this.watch(g, session);
          if (g.lazy) {
            this.lazy.opened(g.key);
            this.refreshCached(g);
          }
        },
        onIdle: (g) => this.lazy.idle(g.key, server.session.idleTimeoutMs),
        timeoutMs: () => this.states.get(server.name)?.config.timeoutMs ?? server.timeoutMs,
        onNote: (method, why) => this.noteOptional(server.name, method, why),
      });
      this.groupsByKey.set(print, group);
    }
    group.names.push(server.name);
    this.groupOf.set(server.name, group);
  }

  /**
   * Apply a reloaded config. The swap of servers is synchronous (a request sees the old set or
   * the new one); the promise covers closing pools no server uses any more and discovering new
   * and changed servers (each announced through onChange when ready). Servers whose spec is
   * unchanged keep their sessions and catalog and only take their new settings.
   */
  async reconcile(next: Config): Promise<void> {
    if (this.closed) return;
    const before = new Map(this.states);
    const groupBefore = new Map(this.groupOf);
    this.config = next;
    this.states.clear();
    this.groupOf.clear();
    // Names are added back in the new config's order.
    for (const group of this.groupsByKey.values()) group.names = [];
    const fresh: string[] = [];
    for (const server of next.servers) {
      const old = before.get(server.name);
      const group = groupBefore.get(server.name);
      if (old && group?.key === fingerprint(server)) {
        // The same object, updated in place: a discovery or health check holding it must land
        // its result where requests will read it.
        old.config = server;
        this.states.set(server.name, old);
        group.names.push(server.name);
        this.groupOf.set(server.name, group);
      } else {
        this.add(server);
        fresh.push(server.name);
      }
    }
    const stale = [...this.groupsByKey.values()].filter((group) => group.names.length === 0);
    // Pools of removed and changed servers retire now, in the same tick they leave the groups:
    // their running calls finish (up to the shutdown grace), then their sessions and processes
    // end. Tracked in `retiring` from this moment, so a close() at any later point ends them.
    for (const { key, pool, subscriptions } of stale) {
      this.groupsByKey.delete(key);
      subscriptions.close();
      this.retiring.add(pool);
      void pool
        .retire(this.config.shutdownGraceMs)
        .catch((err: unknown) => this.log.debug(`retiring a pool failed: ${errorMessage(err)}`))
        .finally(() => this.retiring.delete(pool));
    }
    const removed = [...before.keys()].filter((name) => !this.states.has(name));
    if (fresh.length + removed.length > 0) {
      this.log.info(
        `config reload: ${fresh.length > 0 ? `starting ${fresh.join(", ")}` : ""}${fresh.length > 0 && removed.length > 0 ? "; " : ""}${removed.length > 0 ? `stopping ${removed.join(", ")}` : ""}`,
      );
    }
    await Promise.all(
      fresh.filter((name) => this.needsDiscovery(name)).map((n) => this.discover(n)),
    );
    for (const name of fresh) {
      const group = this.groupOf.get(name);
      if (group && this.states.get(name)?.status === "ready") this.settle(group);
    }
  }

  /** Servers that share one spec, and so one pool, discovery and health; in config order. */
  groups(): { key: string; names: string[] }[] {
    const seen = new Set<ServerGroup>(this.groupOf.values());
    return [...seen].map((group) => ({ key: group.key, names: [...group.names] }));
  }

  /**
   * Discover a group again (a down server coming back): fresh sessions, fresh catalog. Throws
   * when it still fails; the caller (the health monitor) schedules the next attempt.
   */
  async rediscover(key: string): Promise<void> {
    const group = this.groupsByKey.get(key);
    if (!group) return;
    // Whatever sessions the pool still holds belong to the broken upstream.
    await group.pool.reset();
    await Promise.all(this.namesOf(key).map((name) => this.discover(name)));
    const failed = this.namesOf(key).find((n) => this.states.get(n)?.status === "down");
    if (failed) throw new Error(this.states.get(failed)?.error ?? "discovery failed");
    this.settle(group);
    // Subscriptions clients still hold were on sessions of the upstream that went down.
    group.subscriptions.restore();
  }

  /** Counts of the stderr lines a server wrote (kept and dropped), for status output. */
  stderrCounts(name: string): { total: number; dropped: number } | undefined {
    return this.groupOf.get(name)?.stderr.counts();
  }

  /** The status of a group (its servers share one). */
  statusOf(key: string): ServerStatus | undefined {
    const name = this.namesOf(key)[0];
    return name === undefined ? undefined : this.states.get(name)?.status;
  }

  /** Ping a group's upstream: the round trip in ms, or "busy" (see ServerGroup.ping). */
  async ping(key: string, timeoutMs: number): Promise<number | "busy"> {
    const group = this.groupsByKey.get(key);
    if (!group) throw new Error("no such server");
    return group.ping(timeoutMs);
  }

  /** Record a health result for every server of a group; emits a change when the status changes. */
  updateHealth(
    key: string,
    status: ServerStatus,
    patch: Partial<ServerHealth>,
    error?: string,
  ): void {
    this.states.updateHealth(this.namesOf(key), status, patch, error);
  }

  /** The names of a group's servers, in config order. */
  private namesOf(key: string): readonly string[] {
    return this.groupsByKey.get(key)?.names ?? [];
  }

  /**
   * Discover every upstream in parallel (a lazy one only when the cache has no catalog of it),
   * then warm spare sessions of the eager ones and close the lazy ones. Never rejects.
   */
  async start(): Promise<void> {
    const discoveries = [...this.states.keys()]
      .filter((n) => this.needsDiscovery(n))
      .map((n) => this.discover(n));
    this.states.began();
    await Promise.all(discoveries);
    for (const group of this.groupsByKey.values()) {
      if (group.names.some((name) => this.states.get(name)?.status === "ready")) {
        this.settle(group);
      }
    }
  }

  /** A lazy server started with a catalog from the cache: discover it live, in the background. */
  private refreshCached(group: ServerGroup): void {
    for (const name of group.names) {
      if (this.states.get(name)?.catalogFrom === "cache" && !this.states.isDiscovering(name)) {
        void this.discover(name);
      }
    }
  }

  /** A lazy server whose catalog came from the cache is not started to discover it. */
  private needsDiscovery(name: string): boolean {
    const state = this.states.get(name);
    return !(state?.config.start === "lazy" && state.catalogFrom === "cache");
  }

  /** After a discovery: an eager group warms its spares, a lazy one closes what it opened. */
  private settle(group: ServerGroup): void {
    if (this.isLazy(group.key)) this.lazy.sleep(group.key);
    else group.pool.warm();
  }

  private isLazy(key: string): boolean {
    const group = this.groupsByKey.get(key);
    return group !== undefined && group.names.length > 0 && group.lazy;
  }

  /**
   * Whether a group is a lazy one with no session open: health checks leave it alone (pinging
   * would start it), and it is not down.
   */
  asleep(key: string): boolean {
    return this.isLazy(key) && !this.lazy.running(key);
  }

  /** Every server, in config order. */
  servers(): readonly ServerState[] {
    return [...this.states.values()];
  }

  server(name: string): ServerState | undefined {
    return this.states.get(name);
  }

  /** The session pool behind `server` (shared with identical specs). */
  pool(server: string): SessionPool | undefined {
    return this.groupOf.get(server)?.pool;
  }

  /** Sessions per server, for status output and tests. */
  poolStats(): Record<string, PoolStats> {
    const out: Record<string, PoolStats> = {};
    for (const name of this.states.keys()) {
      const pool = this.pool(name);
      if (pool) out[name] = pool.stats();
    }
    return out;
  }

  /**
   * Subscribe upstream to `uri` on `server` until the returned function is called; counted
   * across clients (one upstream subscription per URI and group). Rejects when the upstream
   * refuses it.
   */
  async subscribeResource(server: string, uri: string): Promise<() => void> {
    const subs = this.groupOf.get(server)?.subscriptions;
    if (!subs) throw new Error(`no server "${server}"`);
    return subs.acquire(uri);
  }

  /** Called with (server, uri) for each notifications/resources/updated an upstream sends. */
  onResourceUpdated(listener: UpdateListener): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  /**
   * A downstream client left (its stdio connection closed, its 2025-era HTTP session ended):
   * the upstream sessions it held under the `client` policy close.
   */
  clientLeft(clientId: string): void {
    for (const group of this.groupsByKey.values()) group.pool.leave(clientId);
  }

  /**
   * A client said its roots changed: the upstream sessions its calls are running on are told,
   * so they ask again. Returns how many were. (Idle sessions learn at the next call, which
   * compares the roots it brings with those the upstream last read.)
   */
  rootsChanged(clientId: string): number {
    return this.relayHub.rootsChanged(clientId);
  }

  /** The pin file of launch `key` changed (an approval): check its servers against it again. */
  repin(key: string): void {
    this.states.repin(key);
  }

  /** Called with a server's name whenever its part of the catalog or its status changes. */
  onChange(listener: (server: string) => void): () => void {
    return this.states.onChange(listener);
  }

  /**
   * Close every pool, and so every upstream session and process: the live ones, the ones a
   * reload is retiring, and sessions still starting.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.lazy.close();
    await this.needsLooks.close();
    const groups = [...this.groupsByKey.values()];
    for (const group of groups) group.subscriptions.close();
    const pools = [...groups.map((g) => g.pool), ...this.retiring];
    await Promise.allSettled(pools.map((p) => p.close()));
    await this.cache?.flush();
  }

  /**
   * Resolves once `name` is no longer starting (ready or down), at once when it is not starting;
   * rejects only when `signal` aborts first. Lets a call to a server that is still starting wait
   * for it (discovery is bounded by discoveryTimeout) instead of failing.
   */
  started(name: string, signal?: AbortSignal): Promise<void> {
    return this.states.started(name, signal);
  }

  /** start() comes later (serve): until it has begun, a call to a server starting waits for it. */
  holdUntilStart(): void {
    this.states.holdUntilStart();
  }

  /** start() will not come (shutdown): calls held for it go on (and find no session). */
  releaseStartHold(): void {
    this.states.began();
  }

  /**
   * Whether a first look at `name` (tools/list, describe) should wait for it: it is starting
   * and has no catalog yet, live or cached. A server answered from a cached catalog is not.
   */
  awaitsFirstCatalog(name: string): boolean {
    return this.states.awaitsFirstCatalog(name);
  }

  /**
   * Wait until none of `names` awaits its first catalog, for at most `startupWait`, or until
   * `signal` aborts. Never rejects: the caller answers with what is ready, and names the servers
   * still starting. Only this request waits; nothing else is held up.
   */
  firstLook(names: readonly string[], signal?: AbortSignal): Promise<void> {
    return this.states.firstLook(names, this.config.startupWaitMs, this.clock, signal);
  }

  private discover(name: string): Promise<void> {
    return this.states.discovering(name, this.discoverOnce(name));
  }

  private async discoverOnce(name: string): Promise<void> {
    const state = this.states.get(name);
    const group = this.groupOf.get(name);
    if (!state || !group || this.closed) return;
    const started = this.now();
    try {
      const pending = group.catalog(() =>
        fetchCatalog(group.pool, this.config.discoveryTimeoutMs, this.log),
      );
      const catalog = await pending;
      this.states.discovered(state, catalog, started);
      // One write per group: its names share the launch, and so the entry.
      if (group.names[0] === name) this.lookForNeeds(group, state);
    } catch (err) {
      // Cut short by mcpx's own shutdown: not a failure of the server.
      if (this.closed) return this.log.debug(`${name}: start cut short by the shutdown`);
      this.states.failed(state, err);
    }
  }

  /**
   * In the background, one group at a time: which of `state`'s tools the upstream lists only to
   * clients declaring sampling, elicitation or roots (see capability-tools.ts). Lazy servers are
   * not started for it.
   */
  private lookForNeeds(group: ServerGroup, state: ServerState): void {
    const of = lookedAt(state.identity, state.tools);
    // The catalog is written now, with the finding when it was made on these tools: a look
    // under way (or none to make) must not cost the entry the catalog.
    const known = this.needsLooks.knownFor(group.key, of);
    this.cache?.saveState(state, known);
    if (!group.factory.declares || group.lazy || state.tools.length === 0) {
      // No look: a finding on these very tools stands (the cache's), any other is cleared.
      this.states.needs(group.names, known?.needs ?? {});
      return;
    }
    this.needsLooks.request(
      group.key,
      state.name,
      group.factory,
      state.tools,
      of,
      this.config.discoveryTimeoutMs * 4,
      (look) => {
        this.states.needs(group.names, look.needs);
        // Written again with a new finding (a known one is in the entry already).
        if (look !== known && !this.closed) this.cache?.saveState(state, look);
      },
    );
  }

  /**
   * Note (or clear, `why` undefined) a relayed optional request's failure on every server of
   * `name`'s group (completion/complete, resources/subscribe and unsubscribe).
   */
  noteOptional(name: string, method: OptionalMethod, why: string | undefined): void {
    const group = this.groupOf.get(name);
    if (group) this.states.note(group.names, method, why);
  }

  /** Every session a pool opens reports list changes here. */
  private watch(group: ServerGroup, session: UpstreamSession): void {
    session.onListChanged(
      (kind) => void group.refresh(session, kind, (s) => this.refreshList(group, s, kind)),
    );
    session.onResourceUpdated((uri) => {
      for (const name of group.names) {
        for (const l of this.updateListeners) {
          try {
            l(name, uri);
          } catch (err) {
            this.log.error(`resource update listener failed: ${errorMessage(err)}`);
          }
        }
      }
    });
  }

  /** Fetch one list again after list_changed and land it on every server of the group. */
  private async refreshList(
    group: ServerGroup,
    session: UpstreamSession,
    kind: ListKind,
  ): Promise<void> {
    if (this.closed || session.closed) return;
    const names = [...group.names];
    try {
      const list = await fetchList(session, kind, this.config.discoveryTimeoutMs, this.log);
      this.states.listed(names, list, kind);
      const first = this.states.get(names[0] ?? "");
      // The catalog is written with the look's finding (lookForNeeds) when the tools changed.
      if (first && kind === "tools") this.lookForNeeds(group, first);
      // Other lists leave the tools as they were: the last finding goes with them (an entry
      // whose finding is not of its tools is read without it: states.ts).
      else if (first) this.cache?.saveState(first, this.needsLooks.last(group.key));
    } catch (err) {
      this.log.warn(`${names.join(", ")}: refreshing ${kind} failed: ${errorMessage(err)}`);
    }
  }
}
