/**
 * The composition root: builds registry, executor and schema compiler for one config. Tests build
 * whole proxies in-process with it; src/index.ts adds the CLI, transports and signals.
 */
import type { Config } from "./config/load.js";
import { SchemaCompiler } from "./compression/schema.js";
import { Selector } from "./compression/selector.js";
import { Executor } from "./executor/executor.js";
import type { Logger } from "./logger.js";
import type { ClientFactory } from "./upstream/types.js";
import { CatalogCache } from "./registry/catalog-cache.js";
import { TrustPins } from "./registry/trust.js";
import { PinStore } from "./registry/trust-store.js";
import { SharedPins } from "./registry/trust-shared.js";
import { launchKey } from "./registry/catalog-cache.js";
import { Registry } from "./registry/registry.js";
import { ChildTracker } from "./upstream/transport.js";
import type { Clock } from "./clock.js";
import { HealthMonitor } from "./health/monitor.js";
import { watchSignIns } from "./upstream/oauth/store.js";
import { CatalogViews } from "./registry/view.js";
import { createSandbox } from "./sandbox/index.js";
import { errorMessage } from "./errors.js";
import { LIMITS } from "./limits.js";
import type { ServerConfig } from "./config/load.js";
import type { ProxyContext } from "./server/context.js";
import { PendingCalls } from "./server/pending.js";
import { sessionKey } from "./server/session-token.js";
import { openShared } from "./shared/index.js";
import type { SharedState } from "./shared/types.js";
import { SharedSignIns, SIGN_IN_TOPIC } from "./upstream/oauth/shared-store.js";

export interface ProxyOptions {
  logger: Logger;
  /** Time for the health monitor (tests inject a fake one). */
  clock?: Clock;
  /** Replace how upstream sessions are opened (in-memory upstreams in tests). */
  factoryFor?: (server: ServerConfig) => ClientFactory;
  /** Folder of the persistent catalog cache (see registry/catalog-cache.ts); none: no cache. */
  cacheDir?: string;
  /**
   * mcpx's state folder (src/state-dir.ts): trust pins (src/registry/trust.ts) and OAuth sign-ins
   * (src/upstream/oauth/store.ts); none: no pins kept and no sign-in read.
   */
  stateDir?: string;
}

export interface Proxy {
  readonly context: ProxyContext;
  /** Discover every upstream, then start health checks. Never rejects: failures are statuses. */
  start(): Promise<void>;
  /** Refuse new calls; give running ones `graceMs`, then cancel them. */
  drain(graceMs: number): Promise<void>;
  /**
   * Apply a new, already validated config: servers started, restarted or stopped by spec, and
   * profiles, callers and auth swapped at once. Resolves when new servers are discovered.
   */
  reload(next: Config): Promise<void>;
  /** Stop health checks, close every upstream session and process. Idempotent. */
  close(): Promise<void>;
  /** Last resort when exit cannot wait: SIGKILL every upstream process group now. */
  killNow(): void;
}

export function createProxy(config: Config, options: ProxyOptions): Proxy {
  const logger = options.logger;
  logger.addSecrets(config.secrets);
  const tracker = new ChildTracker();
  const clock = options.clock;
  // Every credential any config of this run held: none of them is ever written to the cache.
  const secrets = new Set(config.secrets);
  const cache =
    options.cacheDir === undefined
      ? undefined
      : new CatalogCache({
          dir: options.cacheDir,
          logger: logger.child("cache"),
          secrets: () => secrets,
        });
  // Result handles (and what else replicas share): this process, or Redis with `redis`.
  const shared = openShared({
    ...(config.redis !== undefined && { redis: config.redis }),
    deployment: sessionKey(config),
    logger,
    ...(clock && { now: () => clock.now() }),
  });
  // Sign-ins in Redis, sealed, with `redis.encryptionKey`; else in the state folder.
  const signIns = sharedSignIns(config, shared, logger);
  const pinStore = options.stateDir === undefined ? undefined : new PinStore(options.stateDir);
  const trust =
    pinStore &&
    new TrustPins({
      store: pinStore,
      logger: logger.child("trust"),
      configFile: config.file,
      secrets: () => secrets,
    });
  // Pins in Redis too (sealed), with `redis.encryptionKey`: one approval serves every replica.
  const sharedPins =
    pinStore && signIns && config.redisKey !== undefined
      ? new SharedPins(pinStore, shared, config.redisKey, logger.child("trust"))
      : undefined;
  const registry = new Registry(config, {
    ...(cache && { cache }),
    ...(trust && { trust }),
    logger,
    tracker,
    ...(options.clock && { clock: options.clock }),
    ...(options.factoryFor && { factoryFor: options.factoryFor }),
    ...(options.stateDir !== undefined && { stateDir: options.stateDir }),
    ...(signIns && { signIns }),
  });
  const monitor = new HealthMonitor(registry, config.health, {
    logger: logger.child("health"),
    ...(options.clock && { clock: options.clock }),
  });
  // Code mode's engine: no worker thread starts until the first script.
  const sandbox = createSandbox({
    logger: logger.child("sandbox"),
    // An inner call's arguments are held to the limit of a meta-tool's own.
    callBytes: { argument: LIMITS.argumentBytes, inFlight: LIMITS.scriptInFlightBytes },
  });
  // `select` runs here, within its time and memory budget: threads start at the first select.
  const selector = new Selector({ logger: logger.child("select") });
  const executor = new Executor(registry, {
    logger,
    shared,
    compression: config.compression.results,
    sandbox,
    selector,
    // Kept results age on the same clock as health checks, so tests can expire them.
    ...(clock && { now: () => clock.now() }),
  });
  const schemas = new SchemaCompiler({ mode: config.compression.schemas });
  const views = new CatalogViews(registry, config, { onClash: (message) => logger.warn(message) });
  const pending = new PendingCalls({ key: sessionKey(config), shared, logger });
  const context: ProxyContext = {
    config,
    logger,
    registry,
    executor,
    schemas,
    views,
    pending,
    shared,
  };
  let closing: Promise<void> | undefined;
  let stopSignIns: (() => void) | undefined;
  return {
    context,
    start: async () => {
      // Approvals (`mcpx trust approve`) land without a restart: the pin file changes, we re-read.
      pinStore?.watch((key) => registry.repin(key));
      if (sharedPins) {
        await sharedPins.sync(new Set(context.config.servers.map((s) => launchKey(s))));
        sharedPins.start((key) => registry.repin(key));
      }
      await registry.start();
      monitor.start();
      // A sign-in made while mcpx runs: servers waiting for it reconnect now.
      const remote = context.config.servers.some((s) => s.spec.transport !== "stdio");
      if (signIns && remote && !stopSignIns) {
        // Announced by the replica or `mcpx login` that wrote it to Redis.
        stopSignIns = shared.listen(SIGN_IN_TOPIC, () => monitor.retryDown());
      } else if (options.stateDir !== undefined && remote && !stopSignIns) {
        stopSignIns = watchSignIns(options.stateDir, () => monitor.retryDown());
      }
    },
    drain: (graceMs) => executor.drain(graceMs),
    reload: async (next) => {
      logger.addSecrets(next.secrets);
      for (const secret of next.secrets) secrets.add(secret);
      if (sharedPins) {
        // Servers this reload adds: Redis's pins first, or a first sight here would replace them.
        const known = new Set(context.config.servers.map((s) => launchKey(s)));
        await sharedPins.sync(
          new Set(next.servers.map((s) => launchKey(s)).filter((k) => !known.has(k))),
        );
      }
      // Settings read once at startup: say so instead of pretending they changed.
      const current = context.config;
      for (const key of [
        "compression",
        "health",
        "log",
        "shutdownGraceMs",
        "discoveryTimeoutMs",
        "sessionSecret",
        "redis",
        "redisKey",
        "tracing",
      ] as const) {
        if (JSON.stringify(next[key]) !== JSON.stringify(current[key])) {
          logger.warn(
            `config reload: ${key.replace(/Ms$/, "")} settings take effect when mcpx restarts`,
          );
        }
      }
      // Synchronous up to the registry's first await: servers, config (auth) and profiles swap
      // in one tick, so no request sees a mix of old and new.
      const discovered = registry.reconcile(next);
      context.config = next;
      views.configure(next);
      await discovered;
      // Added servers get health checks; removed ones lose theirs.
      monitor.sync();
    },
    close: () => {
      // Timers first, so no reconnect starts while pools close; the registry owns every session
      // pool, so closing it ends every upstream process.
      stopSignIns?.();
      monitor.stop();
      pending.close();
      pinStore?.close();
      sharedPins?.stop();
      // Scripts still running (drain cancelled them) end with their worker threads, before the
      // upstreams their inner calls reach. The watchdog goes last: it guards the upstreams
      // until they are closed.
      closing ??= Promise.all([sandbox.close(), selector.close()])
        .catch((err: unknown) => logger.warn(`sandbox did not close: ${errorMessage(err)}`))
        .then(() => Promise.all([registry.close(), shared.close()]))
        .then(() => undefined)
        .finally(() => tracker.close());
      return closing;
    },
    killNow: () => tracker.killAll("SIGKILL"),
  };
}

/**
 * Sign-ins in Redis (sealed) when the config has `redis` with an `encryptionKey`; undefined: in the
 * state folder, said once when `redis` is set without a key (tokens are never stored in clear).
 */
export function sharedSignIns(
  config: Config,
  shared: SharedState,
  logger: Logger,
): SharedSignIns | undefined {
  if (config.redis === undefined) return undefined;
  if (config.redisKey === undefined) {
    logger.info(
      'redis has no encryptionKey: OAuth sign-ins and trust pins stay in this machine\'s state folder (set "redis": { "url": …, "encryptionKey": "${MCPX_REDIS_KEY}" } to share them)',
    );
    return undefined;
  }
  return new SharedSignIns(shared, config.redisKey);
}
