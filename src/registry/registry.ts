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
} from "./connection.js";
import { RelayHub } from "./asker.js";
import { fingerprint } from "./fingerprint.js";
import { SessionPool, type PoolStats } from "./pool.js";
import { StderrRing } from "./stderr.js";
import { ResourceSubscriptions } from "./subscriptions.js";
import type { ChildTracker } from "./transport.js";

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
}

export interface RegistryOptions {
  logger: Logger;
  /** Tracks spawned upstream processes for a last-resort kill. */
  tracker?: ChildTracker;
  /** Injectable connector: tests supply in-memory factories. */
  factoryFor?: (server: ServerConfig) => ClientFactory;
  now?: () => number;
  /** Time for the pools' spare shrink (tests inject a fake clock). */
  clock?: Clock;
}

type ChangeListener = (server: string) => void;
type UpdateListener = (server: string, uri: string) => void;

/** The catalog part of a state, as one discovery produces it. */
type Catalog = Pick<
  ServerState,
  "identity" | "tools" | "resources" | "resourceTemplates" | "prompts"
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
  private closed = false;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly clock: Clock | undefined;
  private readonly factoryFor: (server: ServerConfig) => ClientFactory;
  /** Sessions whose upstream hears a client's roots/list_changed (see asker.ts). */
  private readonly relayHub = new RelayHub();

  constructor(
    private config: Config,
    options: RegistryOptions,
  ) {
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.clock = options.clock;
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
    this.states.set(server.name, {
      name: server.name,
      config: server,
      status: "starting",
      health: { consecutiveFailures: 0 },
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
    });
    const print = fingerprint(server);
    this.prints.set(server.name, print);
    if (!this.pools.has(print)) {
      const pool = new SessionPool(this.factoryFor(server), {
        ...server.session,
        ...(this.clock && { clock: this.clock }),
        logger: this.log.child(server.name),
        onSession: (session) => this.watch(print, session),
      });
      this.pools.set(print, pool);
      this.subscriptions.set(
        print,
        new ResourceSubscriptions(pool, {
          logger: this.log.child(server.name),
          timeoutMs: () => this.states.get(server.name)?.config.timeoutMs ?? server.timeoutMs,
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
    await Promise.all(fresh.map((name) => this.discover(name)));
    for (const name of fresh) {
      if (this.states.get(name)?.status === "ready") this.pool(name)?.warm();
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
    pool.warm();
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

  /** Discover every upstream in parallel, then warm spare sessions. Never rejects. */
  async start(): Promise<void> {
    await Promise.all([...this.states.keys()].map((name) => this.discover(name)));
    for (const [print, pool] of this.pools) {
      if (
        [...this.prints].some(
          ([name, p]) => p === print && this.states.get(name)?.status === "ready",
        )
      )
        pool.warm();
    }
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
    for (const subs of this.subscriptions.values()) subs.close();
    const pools = [...this.pools.values(), ...this.retiring];
    await Promise.allSettled(pools.map((p) => p.close()));
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
      Object.assign(state, await pending, { status: "ready", updatedAt: this.now() });
      delete state.error;
      state.health = { consecutiveFailures: 0, lastSuccessAt: this.now() };
      this.log.info(
        `${name}: ready, ${state.tools.length} tools, ${state.resources.length} resources in ${this.now() - started} ms`,
      );
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

  private async fetchCatalog(print: string): Promise<Catalog> {
    const pool = this.pools.get(print);
    if (!pool) throw new Error("no pool");
    const timeoutMs = this.config.discoveryTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const work = pool.inspect(async (session) => {
      const opts = { timeoutMs, signal: deadline };
      const [tools, resources, resourceTemplates, prompts] = await Promise.all([
        session.listTools(opts),
        session.listResources(opts),
        session.listResourceTemplates(opts),
        session.listPrompts(opts),
      ]);
      return { identity: session.identity, tools, resources, resourceTemplates, prompts };
    });
    // The connect timeout bounds spawn + initialize and each list request its own time; this
    // bounds the whole discovery, so one slow upstream never holds up startup for longer.
    return await new Promise<Catalog>((resolve, reject) => {
      const onTimeout = () => reject(new Error(`did not start within ${timeoutMs} ms`));
      deadline.addEventListener("abort", onTimeout, { once: true });
      work.then(resolve, reject).finally(() => deadline.removeEventListener("abort", onTimeout));
    });
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

  private async refresh(print: string, session: UpstreamSession, kind: ListKind): Promise<void> {
    if (this.closed || session.closed) return;
    const names = this.namesOf(print);
    const opts = { timeoutMs: this.config.discoveryTimeoutMs };
    try {
      // Listed on the session that announced the change: it is the one known to see it.
      const update: Partial<Catalog> = {};
      switch (kind) {
        case "tools":
          update.tools = await session.listTools(opts);
          break;
        case "resources":
          [update.resources, update.resourceTemplates] = await Promise.all([
            session.listResources(opts),
            session.listResourceTemplates(opts),
          ]);
          break;
        case "prompts":
          update.prompts = await session.listPrompts(opts);
          break;
        default: {
          const never: never = kind;
          throw new Error(`unknown list kind ${String(never)}`);
        }
      }
      for (const name of names) {
        const state = this.states.get(name);
        if (!state) continue;
        Object.assign(state, update, { updatedAt: this.now() });
        this.log.info(`${name}: ${kind} list changed; catalog refreshed`);
        this.emit(name);
      }
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
