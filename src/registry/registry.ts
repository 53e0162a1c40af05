import type { Config, ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Clock } from "../health/clock.js";
import type { Logger } from "../logger.js";
import type { PromptDef, ResourceDef, ResourceTemplateDef, ToolDef } from "../types.js";
import {
  createClientFactory,
  type ClientFactory,
  type ListKind,
  type ServerIdentity,
  type UpstreamSession,
} from "../upstream/connection.js";
import { RelayHub } from "../upstream/asker.js";
import { launchKey, type CatalogCache } from "./catalog-cache.js";
import { fingerprint } from "./fingerprint.js";
import { LazyServers } from "./lazy.js";
import { SessionPool, type PoolStats } from "./pool.js";
import { StderrRing } from "../upstream/stderr.js";
import { ResourceSubscriptions } from "./subscriptions.js";
import type { ChildTracker } from "../upstream/transport.js";
import {
  afterDiscovery,
  logNotes,
  withNote,
  type OptionalList,
  type OptionalMethod,
} from "./notes.js";

import { NeedsLooks, type ToolNeeds } from "./capability-tools.js";

export type { OptionalMethod } from "./notes.js";

/**
 * starting: discovery under way; ready: answering; degraded: recent health checks failed, not
 * yet `failureThreshold` in a row; down: failed to start or to answer, retried with backoff.
 */
export type ServerStatus = "starting" | "ready" | "degraded" | "down";

/** What health checks learned about a server (see src/health/monitor.ts). */
export interface ServerHealth {
  consecutiveFailures: number;
  /** ms since epoch of the last successful discovery or ping. */
  lastSuccessAt?: number;
  /** Round trip of the last successful ping, in ms. */
  latencyMs?: number;
  /** ms since epoch of the last health check, whatever its outcome. */
  lastCheckAt?: number;
  /** ms since epoch when the server went down. */
  downSince?: number;
  /** ms since epoch of the next reconnect attempt while down. */
  nextRetryAt?: number;
}

/** What the registry knows about one upstream: renderable, no live handles. */
export interface ServerState {
  readonly name: string;
  /** Replaced on reload when only settings changed (same spec). */
  config: ServerConfig;
  status: ServerStatus;
  /** The last error (messages come from the SDK/OS; logs and /healthz redact secrets anyway). */
  error?: string;
  health: ServerHealth;
  identity?: ServerIdentity;
  tools: ToolDef[];
  resources: ResourceDef[];
  resourceTemplates: ResourceTemplateDef[];
  prompts: PromptDef[];
  /** When the catalog of this server was last fetched (ms since epoch). */
  updatedAt?: number;
  /**
   * Where the catalog came from: "cache" when loaded from disk (discovery may still be under way:
   * the server is usable while "starting"), "live" once discovery landed; undefined: no catalog
   * yet (see `awaitsFirstCatalog`).
   */
  catalogFrom?: "live" | "cache";
  /**
   * Optional requests the upstream failed (method → why, redacted): treated as empty or
   * unsupported for this server, which stays up with its tools. Absent when none failed.
   */
  notes?: Partial<Record<OptionalMethod, string>>;
  /** `start: "lazy"` servers only: whether a session (a process, for stdio) of it is open. */
  running?: boolean;
  /**
   * Tools the upstream lists only to a client declaring sampling, elicitation or roots, and
   * which (src/registry/capability-tools.ts). Absent: none, or not looked at yet.
   */
  needs?: ToolNeeds;
}

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
}

type ChangeListener = (server: string) => void;
type UpdateListener = (server: string, uri: string) => void;

/** The catalog part of a state, as one discovery produces it. */
type Catalog = Pick<
  ServerState,
  "identity" | "tools" | "resources" | "resourceTemplates" | "prompts" | "notes"
>;

/**
 * The catalog of every upstream and the session pools behind it. Identical specs (same
 * fingerprint) share one pool and one discovery, whatever their names. The catalog is
 * discovered in parallel at startup, cached, and refreshed when any session of a pool announces
 * `list_changed`.
 */
export class Registry {
  private readonly states = new Map<string, ServerState>();
  private readonly pools = new Map<string, SessionPool>();
  /** Pools a reload left behind, finishing their calls before they close. */
  private readonly retiring = new Set<SessionPool>();
  /** server name → fingerprint of its spec. */
  private readonly prints = new Map<string, string>();
  private readonly discoveries = new Map<string, Promise<Catalog>>();
  /** server name → its discovery under way (settles, never rejects). */
  private readonly discovering = new Map<string, Promise<void>>();
  /** fingerprint → the upstream's recent stderr lines. */
  private readonly stderrRings = new Map<string, StderrRing>();
  private readonly listeners = new Set<ChangeListener>();
  /** fingerprint → the resource subscriptions clients hold on that group. */
  private readonly subscriptions = new Map<string, ResourceSubscriptions>();
  private readonly updateListeners = new Set<UpdateListener>();
  /** "fingerprint\nlist kind" → the refresh under way, and the session to refresh from next. */
  private readonly refreshing = new Map<string, { next?: UpstreamSession }>();
  private closed = false;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly clock: Clock | undefined;
  private readonly factoryFor: (server: ServerConfig) => ClientFactory;
  /** Sessions whose upstream hears a client's roots/list_changed (see asker.ts). */
  private readonly relayHub = new RelayHub();
  private readonly cache: CatalogCache | undefined;
  /** Groups of `start: "lazy"` servers: woken by use, put to sleep when idle. */
  private readonly lazy: LazyServers;
  /** fingerprint → the client factory of its pool (looks for tools' needs open sessions too). */
  private readonly factories = new Map<string, ClientFactory>();
  private readonly needsLooks: NeedsLooks;

  constructor(
    private config: Config,
    options: RegistryOptions,
  ) {
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.clock = options.clock;
    this.cache = options.cache;
    this.needsLooks = new NeedsLooks(this.log);
    this.lazy = new LazyServers({
      ...(options.clock && { clock: options.clock }),
      logger: this.log,
      pool: (print) => this.pools.get(print),
      onRunning: (print, running) => {
        for (const name of this.namesOf(print)) {
          const state = this.states.get(name);
          if (state && state.running !== running) {
            state.running = running;
            this.emit(name);
          }
        }
      },
    });
    this.factoryFor =
      options.factoryFor ??
      ((s: ServerConfig) =>
        createClientFactory(s, {
          logger: this.log,
          connectTimeoutMs: this.config.discoveryTimeoutMs,
          stderr: this.ringFor(fingerprint(s)),
          hub: this.relayHub,
          ...(options.tracker && { tracker: options.tracker }),
          ...(this.config.trust === "untrusted" && { publicOnly: {} }),
        }));
    for (const server of config.servers) this.add(server);
  }

  /** A new server: state "starting", and a pool unless an identical spec already has one. */
  private add(server: ServerConfig): void {
    // Read at once (a few small files): the first tools/list, however early, names their tools.
    const cached = this.cache?.load(launchKey(server), server.name);
    const lazy = server.start === "lazy";
    this.states.set(server.name, {
      name: server.name,
      config: server,
      // A lazy server with a catalog is ready: its first use starts it.
      status: lazy && cached ? "ready" : "starting",
      health: { consecutiveFailures: 0 },
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
      ...cached,
      ...(cached && { catalogFrom: "cache" as const }),
      ...(lazy && { running: false }),
    });
    const print = fingerprint(server);
    this.prints.set(server.name, print);
    if (!this.pools.has(print)) {
      const factory = this.factoryFor(server);
      this.factories.set(print, factory);
      const pool = new SessionPool(factory, {
        ...server.session,
        ...(this.clock && { clock: this.clock }),
        logger: this.log.child(server.name),
        onSession: (session) => {
          this.watch(print, session);
          if (lazy) {
            this.lazy.opened(print);
            this.refreshCached(print);
          }
        },
        ...(lazy && { onIdle: () => this.lazy.idle(print, server.session.idleTimeoutMs) }),
      });
      this.pools.set(print, pool);
      this.subscriptions.set(
        print,
        new ResourceSubscriptions(pool, {
          logger: this.log.child(server.name),
          timeoutMs: () => this.states.get(server.name)?.config.timeoutMs ?? server.timeoutMs,
          onNote: (method, why) => this.noteOptional(server.name, method, why),
        }),
      );
    }
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
    const printsBefore = new Map(this.prints);
    this.config = next;
    this.states.clear();
    this.prints.clear();
    const fresh: string[] = [];
    for (const server of next.servers) {
      const print = fingerprint(server);
      const old = before.get(server.name);
      if (old && printsBefore.get(server.name) === print) {
        // The same object, updated in place: a discovery or health check holding it must land
        // its result where requests will read it.
        old.config = server;
        this.states.set(server.name, old);
        this.prints.set(server.name, print);
      } else {
        this.add(server);
        fresh.push(server.name);
      }
    }
    const used = new Set(this.prints.values());
    const stale = [...this.pools].filter(([print]) => !used.has(print));
    // Pools of removed and changed servers retire now, in the same tick they leave `pools`:
    // their running calls finish (up to the shutdown grace), then their sessions and processes
    // end. Tracked in `retiring` from this moment, so a close() at any later point ends them.
    for (const [print, pool] of stale) {
      this.pools.delete(print);
      this.factories.delete(print);
      this.subscriptions.get(print)?.close();
      this.subscriptions.delete(print);
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
      const print = this.prints.get(name);
      if (print !== undefined && this.states.get(name)?.status === "ready") this.settle(print);
    }
  }

  /** Servers that share one spec, and so one pool, discovery and health. */
  groups(): { key: string; names: string[] }[] {
    const byKey = new Map<string, string[]>();
    for (const [name, print] of this.prints) byKey.set(print, [...(byKey.get(print) ?? []), name]);
    return [...byKey].map(([key, names]) => ({ key, names }));
  }

  /**
   * Discover a group again (a down server coming back): fresh sessions, fresh catalog. Throws
   * when it still fails; the caller (the health monitor) schedules the next attempt.
   */
  async rediscover(key: string): Promise<void> {
    const pool = this.pools.get(key);
    if (!pool) return;
    // Whatever sessions the pool still holds belong to the broken upstream.
    await pool.reset();
    await Promise.all(this.namesOf(key).map((name) => this.discover(name)));
    const failed = this.namesOf(key).find((n) => this.states.get(n)?.status === "down");
    if (failed) throw new Error(this.states.get(failed)?.error ?? "discovery failed");
    this.settle(key);
    // Subscriptions clients still hold were on sessions of the upstream that went down.
    this.subscriptions.get(key)?.restore();
  }

  /** Counts of the stderr lines a server wrote (kept and dropped), for status output. */
  stderrCounts(name: string): { total: number; dropped: number } | undefined {
    const print = this.prints.get(name);
    return print === undefined ? undefined : this.stderrRings.get(print)?.counts();
  }

  private ringFor(print: string): StderrRing {
    let ring = this.stderrRings.get(print);
    if (!ring) {
      ring = new StderrRing();
      this.stderrRings.set(print, ring);
    }
    return ring;
  }

  /** The status of a group (its servers share one). */
  statusOf(key: string): ServerStatus | undefined {
    const name = this.namesOf(key)[0];
    return name === undefined ? undefined : this.states.get(name)?.status;
  }

  /**
   * Ping a group's upstream through its pool (a spare, the shared session, or a short one):
   * the round trip in ms, or "busy" when the ping failed on a session that is running our own
   * calls (a single-threaded upstream busy with a call cannot answer; that is not an outage).
   */
  async ping(key: string, timeoutMs: number): Promise<number | "busy"> {
    const pool = this.pools.get(key);
    if (!pool) throw new Error("no such server");
    const started = performance.now();
    let pinged: UpstreamSession | undefined;
    try {
      await pool.inspect((session) => {
        pinged = session;
        return session.ping({ timeoutMs });
      });
    } catch (err) {
      if (pinged && pool.busy(pinged)) return "busy";
      throw err;
    }
    return performance.now() - started;
  }

  /** Record a health result for every server of a group; emits a change when the status changes. */
  updateHealth(
    key: string,
    status: ServerStatus,
    patch: Partial<ServerHealth>,
    error?: string,
  ): void {
    for (const name of this.namesOf(key)) {
      const state = this.states.get(name);
      if (!state) continue;
      const changed = state.status !== status;
      state.status = status;
      Object.assign(state.health, patch);
      if (error !== undefined) state.error = this.log.redact(error);
      else if (status === "ready") delete state.error;
      if (changed) {
        this.log.warn(`${name}: ${status}${error ? `: ${error}` : ""}`);
        this.emit(name);
      }
    }
  }

  private namesOf(key: string): string[] {
    return [...this.prints].filter(([, p]) => p === key).map(([n]) => n);
  }

  /**
   * Discover every upstream in parallel (a lazy one only when the cache has no catalog of it),
   * then warm spare sessions of the eager ones and close the lazy ones. Never rejects.
   */
  async start(): Promise<void> {
    await Promise.all(
      [...this.states.keys()].filter((n) => this.needsDiscovery(n)).map((n) => this.discover(n)),
    );
    for (const print of this.pools.keys()) {
      if (this.namesOf(print).some((name) => this.states.get(name)?.status === "ready")) {
        this.settle(print);
      }
    }
  }

  /** A lazy server started with a catalog from the cache: discover it live, in the background. */
  private refreshCached(print: string): void {
    for (const name of this.namesOf(print)) {
      if (this.states.get(name)?.catalogFrom === "cache" && !this.discovering.has(name)) {
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
  private settle(print: string): void {
    if (this.isLazy(print)) this.lazy.sleep(print);
    else this.pools.get(print)?.warm();
  }

  private isLazy(print: string): boolean {
    const name = this.namesOf(print)[0];
    return name !== undefined && this.states.get(name)?.config.start === "lazy";
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
    const print = this.prints.get(server);
    return print === undefined ? undefined : this.pools.get(print);
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
    const print = this.prints.get(server);
    const subs = print === undefined ? undefined : this.subscriptions.get(print);
    if (!subs) throw new Error(`no server "${server}"`);
    return subs.acquire(uri);
  }

  /** Called with (server, uri) for each notifications/resources/updated an upstream sends. */
  onResourceUpdated(listener: UpdateListener): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  /** Called with a server's name whenever its part of the catalog or its status changes. */
  /**
   * A client said its roots changed: the upstream sessions its calls are running on are told,
   * so they ask again. Returns how many were. (Idle sessions learn at the next call, which
   * compares the roots it brings with those the upstream last read.)
   */
  /**
   * A downstream client left (its stdio connection closed, its 2025-era HTTP session ended):
   * the upstream sessions it held under the `client` policy close.
   */
  clientLeft(clientId: string): void {
    for (const pool of this.pools.values()) pool.leave(clientId);
  }

  rootsChanged(clientId: string): number {
    return this.relayHub.rootsChanged(clientId);
  }

  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Close every pool, and so every upstream session and process: the live ones, the ones a
   * reload is retiring, and sessions still starting.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.lazy.close();
    await this.needsLooks.close();
    for (const subs of this.subscriptions.values()) subs.close();
    const pools = [...this.pools.values(), ...this.retiring];
    await Promise.allSettled(pools.map((p) => p.close()));
    await this.cache?.flush();
  }

  /**
   * Resolves once `name` is no longer starting (ready or down), at once when it is not starting;
   * rejects only when `signal` aborts first. Lets a call to a server that is still starting wait
   * for it (discovery is bounded by discoveryTimeout) instead of failing.
   */
  async started(name: string, signal?: AbortSignal): Promise<void> {
    const pending = this.discovering.get(name);
    if (!pending) return;
    if (!signal) return pending;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason as Error);
      signal.addEventListener("abort", onAbort, { once: true });
      void pending.then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  /**
   * Whether a first look at `name` (tools/list, describe) should wait for it: it is starting
   * and has no catalog yet, live or cached. A server answered from a cached catalog is not.
   */
  awaitsFirstCatalog(name: string): boolean {
    const state = this.states.get(name);
    return state?.status === "starting" && state.catalogFrom === undefined;
  }

  /**
   * Wait until none of `names` awaits its first catalog, for at most `startupWait`, or until
   * `signal` aborts. Never rejects: the caller answers with what is ready, and names the servers
   * still starting. Only this request waits; nothing else is held up.
   */
  async firstLook(names: readonly string[], signal?: AbortSignal): Promise<void> {
    const waiting = () => names.some((n) => this.awaitsFirstCatalog(n));
    const bound = this.config.startupWaitMs;
    if (bound <= 0 || signal?.aborted || !waiting()) return;
    await new Promise<void>((resolve) => {
      let timer: unknown;
      const done = () => {
        off();
        signal?.removeEventListener("abort", done);
        if (this.clock) this.clock.clearTimeout(timer);
        else clearTimeout(timer as NodeJS.Timeout);
        resolve();
      };
      // Discovery (and a cached catalog) announce themselves through onChange.
      const off = this.onChange(() => {
        if (!waiting()) done();
      });
      signal?.addEventListener("abort", done, { once: true });
      if (this.clock) timer = this.clock.setTimeout(done, bound);
      else timer = setTimeout(done, bound).unref();
    });
  }

  private discover(name: string): Promise<void> {
    const running = this.discoverOnce(name).finally(() => {
      if (this.discovering.get(name) === running) this.discovering.delete(name);
    });
    this.discovering.set(name, running);
    return running;
  }

  private async discoverOnce(name: string): Promise<void> {
    const state = this.states.get(name);
    const print = this.prints.get(name);
    if (!state || print === undefined || this.closed) return;
    const started = this.now();
    try {
      let pending = this.discoveries.get(print);
      if (!pending) {
        pending = this.fetchCatalog(print);
        this.discoveries.set(print, pending);
        // Later rediscoveries (issue: health) must fetch anew, not reuse this answer.
        void pending.finally(() => this.discoveries.delete(print)).catch(() => {});
      }
      const catalog = await pending;
      const notesBefore = state.notes;
      Object.assign(state, catalog, {
        status: "ready",
        updatedAt: this.now(),
        catalogFrom: "live",
      });
      const notes = afterDiscovery(notesBefore, catalog.notes);
      if (notes) state.notes = notes;
      else delete state.notes;
      delete state.error;
      // One write per group: its names share the launch, and so the entry.
      if (this.namesOf(print)[0] === name) {
        this.saveCatalog(state);
        this.lookForNeeds(print, state);
      }
      state.health = { consecutiveFailures: 0, lastSuccessAt: this.now() };
      this.log.info(
        `${name}: ready, ${state.tools.length} tools, ${state.resources.length} resources in ${this.now() - started} ms`,
      );
      this.logNotes(name, notesBefore, state.notes);
    } catch (err) {
      const wasDown = state.status === "down";
      state.status = "down";
      // Stored redacted: this text reaches clients (describe, tools/list) as well as logs.
      state.error = this.log.redact(errorMessage(err));
      state.health.downSince ??= this.now();
      // Failed starts and reconnects count, as failed health checks do.
      state.health.consecutiveFailures += 1;
      if (wasDown) {
        // Nothing changed for clients: no list_changed for another failed attempt.
        this.log.debug(`${name}: still down: ${state.error}`);
        return;
      }
      this.log.warn(`${name}: failed to start: ${state.error}`);
    }
    this.emit(name);
  }

  /** Keep a server's catalog in the persistent cache (when there is one). */
  private saveCatalog(state: ServerState): void {
    const { identity, tools, resources, resourceTemplates, prompts } = state;
    this.cache?.save(launchKey(state.config), state.name, {
      ...(identity && { identity }),
      tools,
      resources,
      resourceTemplates,
      prompts,
    });
  }

  private async fetchCatalog(print: string): Promise<Catalog> {
    const pool = this.pools.get(print);
    if (!pool) throw new Error("no pool");
    const timeoutMs = this.config.discoveryTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    // Once tools are in, the deadline no longer fails the discovery: optional lists still
    // unanswered then end as notes (the deadline aborts them too).
    let listed = false;
    let opened = false;
    const work = pool.inspect(async (session) => {
      opened = true;
      const opts = { timeoutMs, signal: deadline };
      const notes: NonNullable<ServerState["notes"]> = {};
      const optional = <T>(method: OptionalList, list: () => Promise<T[]>) =>
        this.optionalList(method, list, notes, deadline, timeoutMs);
      const tools = session.listTools(opts).then(
        (t) => {
          listed = true;
          return t;
        },
        (err: unknown) => {
          // Only tools/list is required: say which request failed, not just how.
          throw new Error(`tools/list failed: ${errorMessage(err)}`, { cause: err });
        },
      );
      const [toolDefs, resources, resourceTemplates, prompts] = await Promise.all([
        tools,
        optional("resources/list", () => session.listResources(opts)),
        optional("resources/templates/list", () => session.listResourceTemplates(opts)),
        optional("prompts/list", () => session.listPrompts(opts)),
      ]);
      return {
        identity: session.identity,
        tools: toolDefs,
        resources,
        resourceTemplates,
        prompts,
        ...(Object.keys(notes).length > 0 && { notes }),
      };
    });
    // The connect timeout bounds spawn + initialize and each list request its own time; this
    // bounds the whole discovery, so one slow upstream never holds up startup for longer.
    return await new Promise<Catalog>((resolve, reject) => {
      const onTimeout = () => {
        const waitingFor = opened ? "tools/list" : "its connection and initialize";
        if (!listed) reject(new Error(`did not start within ${timeoutMs} ms (${waitingFor})`));
      };
      deadline.addEventListener("abort", onTimeout, { once: true });
      work.then(resolve, reject).finally(() => deadline.removeEventListener("abort", onTimeout));
    });
  }

  /**
   * One optional list: its items, or, whatever the failure (method not found, invalid params,
   * internal error, timeout), none, with the reason kept in `notes` under its method.
   */
  private async optionalList<T>(
    method: OptionalList,
    list: () => Promise<T[]>,
    notes: NonNullable<ServerState["notes"]>,
    deadline?: AbortSignal,
    timeoutMs?: number,
  ): Promise<T[]> {
    try {
      return await list();
    } catch (err) {
      notes[method] = this.log.redact(
        deadline?.aborted ? `no answer within ${timeoutMs} ms` : errorMessage(err),
      );
      return [];
    }
  }

  private logNotes(name: string, before: ServerState["notes"], after: ServerState["notes"]): void {
    logNotes(this.log, name, before, after);
  }

  /**
   * Note (or clear, `why` undefined) a relayed optional request's failure on every server of
   * `name`'s group: the server stays up; the note shows in describe, /healthz and the dashboard.
   */
  noteOptional(name: string, method: OptionalMethod, why: string | undefined): void {
    const print = this.prints.get(name);
    if (print === undefined) return;
    const redacted = why === undefined ? undefined : this.log.redact(why);
    for (const n of this.namesOf(print)) {
      const state = this.states.get(n);
      if (!state || state.notes?.[method] === redacted) continue;
      const before = state.notes;
      const next = withNote(before, method, redacted);
      if (next) state.notes = next;
      else delete state.notes;
      this.logNotes(n, before, state.notes);
      this.emit(n);
    }
  }

  /**
   * In the background, one group at a time: which of `state`'s tools the upstream lists only to
   * clients declaring sampling, elicitation or roots (see capability-tools.ts). Lazy servers are
   * not started for it.
   */
  private lookForNeeds(print: string, state: ServerState): void {
    const factory = this.factories.get(print);
    if (!factory?.declares || this.isLazy(print) || state.tools.length === 0) return;
    this.needsLooks.request(
      print,
      state.name,
      factory,
      state.tools,
      this.config.discoveryTimeoutMs * 4,
      (needs) => {
        for (const name of this.namesOf(print)) {
          const s = this.states.get(name);
          if (!s || JSON.stringify(s.needs ?? {}) === JSON.stringify(needs)) continue;
          if (Object.keys(needs).length > 0) s.needs = needs;
          else delete s.needs;
          this.emit(name);
        }
      },
    );
  }

  /** Every session a pool opens reports list changes here. */
  private watch(print: string, session: UpstreamSession): void {
    session.onListChanged((kind) => void this.refresh(print, session, kind));
    session.onResourceUpdated((uri) => {
      for (const name of this.namesOf(print)) {
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

  /**
   * Refresh one list after list_changed. Coalesced per group and list: announcements arriving
   * while one refresh runs (every session of a pool may send one, servers send them in bursts)
   * make one more refresh after it, not one each.
   */
  private async refresh(print: string, session: UpstreamSession, kind: ListKind): Promise<void> {
    const key = `${print}\n${kind}`;
    const running = this.refreshing.get(key);
    if (running) {
      running.next = session;
      return;
    }
    const slot: { next?: UpstreamSession } = { next: session };
    this.refreshing.set(key, slot);
    try {
      for (let s = slot.next; s; s = slot.next) {
        delete slot.next;
        await this.refreshOnce(print, s, kind);
      }
    } finally {
      this.refreshing.delete(key);
    }
  }

  private async refreshOnce(
    print: string,
    session: UpstreamSession,
    kind: ListKind,
  ): Promise<void> {
    if (this.closed || session.closed) return;
    const names = this.namesOf(print);
    const opts = { timeoutMs: this.config.discoveryTimeoutMs };
    const notes: NonNullable<ServerState["notes"]> = {};
    const optional = <T>(method: OptionalList, list: () => Promise<T[]>) =>
      this.optionalList(method, list, notes);
    let methods: OptionalList[] = [];
    try {
      // Listed on the session that announced the change: it is the one known to see it.
      const update: Partial<Catalog> = {};
      switch (kind) {
        case "tools":
          update.tools = await session.listTools(opts);
          break;
        case "resources":
          methods = ["resources/list", "resources/templates/list"];
          [update.resources, update.resourceTemplates] = await Promise.all([
            optional("resources/list", () => session.listResources(opts)),
            optional("resources/templates/list", () => session.listResourceTemplates(opts)),
          ]);
          break;
        case "prompts":
          methods = ["prompts/list"];
          update.prompts = await optional("prompts/list", () => session.listPrompts(opts));
          break;
        default: {
          const never: never = kind;
          throw new Error(`unknown list kind ${String(never)}`);
        }
      }
      for (const name of names) {
        const state = this.states.get(name);
        if (!state) continue;
        const before = state.notes;
        const next = { ...state.notes };
        for (const m of methods) {
          if (notes[m] === undefined) delete next[m];
          else next[m] = notes[m];
        }
        const changed =
          JSON.stringify(pickCatalog(state, update)) !== JSON.stringify(update) ||
          JSON.stringify(before ?? {}) !== JSON.stringify(next);
        Object.assign(state, update, { updatedAt: this.now() });
        if (Object.keys(next).length > 0) state.notes = next;
        else delete state.notes;
        this.logNotes(name, before, state.notes);
        if (!changed) {
          this.log.debug(`${name}: ${kind} list changed; nothing new`);
          continue;
        }
        this.log.info(`${name}: ${kind} list changed; catalog refreshed`);
        this.emit(name);
      }
      const first = this.states.get(names[0] ?? "");
      if (first) this.saveCatalog(first);
      if (first && kind === "tools") this.lookForNeeds(print, first);
    } catch (err) {
      this.log.warn(`${names.join(", ")}: refreshing ${kind} failed: ${errorMessage(err)}`);
    }
  }

  private emit(name: string): void {
    for (const l of this.listeners) {
      try {
        l(name);
      } catch (err) {
        this.log.error(`change listener failed: ${errorMessage(err)}`);
      }
    }
  }
}

/** The fields of `state` that `update` sets, to tell whether a refresh changed anything. */
function pickCatalog(state: ServerState, update: Partial<Catalog>): Partial<Catalog> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(update)) out[key] = state[key as keyof Catalog];
  return out;
}
