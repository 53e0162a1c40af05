/**
 * `mcpx <config>`: the proxy itself. Exit codes: 0 normal, 1 runtime failure, 2 bad usage or
 * config.
 */
import { daemonPaths } from "../daemon/paths.js";
import { format } from "node:util";
import type { ServeOptions } from "../cli.js";
import { ConfigError, loadConfig, type Config } from "../config/load.js";
import { watchConfig, type ConfigWatcher } from "../config/watch.js";
import { errorMessage } from "../errors.js";
import { onInstallChanged } from "../install.js";
import { fileSink, type FileSink } from "../logfile.js";
import { createLogger, drained, stderrSink, type Logger } from "../logger.js";
import { createProxy, type Proxy } from "../proxy.js";
import { defaultCacheDir } from "../registry/catalog-cache.js";
import { defaultStateDir } from "../state-dir.js";
import { exposure } from "../auth/http-security.js";
import type { EarlyStdio } from "../server/early.js";
import { serveStdio } from "../server/stdio.js";
import type { Telemetry } from "../telemetry/index.js";
import { checkUntrusted, isUntrustedRefusal, loadOptions } from "./load.js";

/**
 * Serve a config: load it, build the proxy, serve stdio or HTTP, hot-reload the file, and shut
 * down in a fixed order. Resolves with an exit code when it cannot start, else undefined (the
 * process then lives until a signal or the end of stdin).
 */
export async function serve(cli: ServeOptions, early?: EarlyStdio): Promise<number | undefined> {
  const config = await readConfig(cli);
  if (typeof config === "number") return config;
  const { logger, logFile } = buildLogger(cli, config);
  for (const w of config.warnings) logger.warn(w);
  const bind = exposed(cli, config);
  if (bind && "error" in bind) {
    process.stderr.write(`mcpx: ${bind.error}\n`);
    return 2;
  }
  if (bind) logger.warn(bind.warning);
  onInstallChanged((detail) =>
    logger.warn(
      `mcpx was upgraded after it started (${detail}): what it loads on first use fails until mcpx restarts`,
    ),
  );

  const proxy = createProxy(config, {
    logger,
    ...cacheDir(config),
    stateDir: defaultStateDir(process.env),
  });
  // The upstreams start after serving began: a call that comes first waits for them.
  proxy.context.registry.holdUntilStart();
  const telemetry = await loadTelemetry(cli, proxy);
  const lifecycle = installShutdown(proxy, config, logger, logFile);
  lifecycle.telemetry = telemetry;
  // Serve first: `initialize` never waits for an upstream, and over stdio the upstreams start
  // once it is answered. Servers still starting show as such in the catalog (after the bounded
  // first look, `startupWait`) and arrive through notifications/tools/list_changed; a call waits.
  const serving = await start(
    cli,
    proxy,
    logger,
    telemetry,
    (why) => void lifecycle.shutdown(why),
    early,
  );
  lifecycle.stopServing = serving.stop;
  lifecycle.watcher = watch(cli, proxy, logger);
  await serving.headStart;
  if (lifecycle.stopping) return undefined;
  logger.debug(`starting ${config.servers.length} upstream servers`);
  void proxy.start().then(() => {
    const servers = proxy.context.registry.servers();
    const ready = servers.filter((s) => s.status === "ready").length;
    logger.info(`${ready}/${servers.length} upstream servers ready`);
  });
  return undefined;
}

/** Where the catalog cache lives: the config's `catalogCache`, else the XDG default; none when off. */
function cacheDir(config: Config): { cacheDir?: string } {
  if (config.catalogCache === false) return {};
  return { cacheDir: config.catalogCache ?? defaultCacheDir(process.env) };
}

async function readConfig(cli: ServeOptions): Promise<Config | number> {
  try {
    const config = loadConfig(cli.config, process.env, loadOptions(cli));
    await checkUntrusted(config);
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError) && !isUntrustedRefusal(err)) throw err;
    process.stderr.write(`mcpx: ${errorMessage(err)}\n`);
    return 2;
  }
}

/**
 * Traces and metrics, loaded only when on: metrics whenever HTTP is served (`/metrics`) or
 * `--metrics-port` is given; traces when the config names an OTLP URL or the standard
 * OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variable is set (and OTEL_SDK_DISABLED is not true).
 */
async function loadTelemetry(cli: ServeOptions, proxy: Proxy): Promise<Telemetry | undefined> {
  const env = process.env;
  const url = proxy.context.config.tracing?.otlp;
  const tracing =
    env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== "true" &&
    env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() !== "none" &&
    (url !== undefined ||
      Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) ||
      Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()));
  const metrics = cli.port !== undefined || cli.metricsPort !== undefined;
  if (!tracing && !metrics) return undefined;
  const { startTelemetry } = await import("../telemetry/index.js");
  return startTelemetry(proxy.context, {
    metrics,
    ...(tracing && { tracing: url === undefined ? {} : { url } }),
  });
}

/** Logs go to stderr, and to the rotating log file when the config names one. */
function buildLogger(cli: ServeOptions, config: Config): { logger: Logger; logFile?: FileSink } {
  const toStderr = stderrSink();
  const logFile = config.log && fileSink(config.log, (m) => toStderr(`mcpx: ${m}\n`));
  // Lines still queued for the log file are written at any exit, process.exit(1) included.
  if (logFile) process.on("exit", () => logFile.flushSync());
  const logger = createLogger({
    level: cli.logLevel,
    write: logFile
      ? (line) => {
          toStderr(line);
          logFile.write(line);
        }
      : toStderr,
  });
  return { logger, ...(logFile && { logFile }) };
}

/** Beyond loopback only with auth, or when the user says so out loud. */
function exposed(cli: ServeOptions, config: Config) {
  return cli.port === undefined ? undefined : exposure(cli.host, config, cli.allowUnauthenticated);
}

interface Lifecycle {
  shutdown(why: string): Promise<void>;
  /** True once shutdown began: nothing may start upstreams from then on. */
  readonly stopping: boolean;
  stopServing: () => Promise<void>;
  watcher: ConfigWatcher | undefined;
  telemetry: Telemetry | undefined;
}

/**
 * SIGINT/SIGTERM/SIGHUP shut down in a fixed order; a second signal exits at once, killing
 * every upstream group.
 */
function installShutdown(
  proxy: Proxy,
  config: Config,
  logger: Logger,
  logFile: FileSink | undefined,
): Lifecycle {
  let shuttingDown = false;
  const lifecycle: Lifecycle = {
    stopServing: async () => {},
    watcher: undefined,
    telemetry: undefined,
    get stopping() {
      return shuttingDown;
    },
    shutdown: async (why) => {
      if (shuttingDown) return;
      shuttingDown = true;
      logger.info(`shutting down (${why})`);
      // 0. Stop reloading the config: nothing may start servers from here on.
      lifecycle.watcher?.close();
      try {
        // 1. Refuse new calls; let running ones finish within the grace period, then cancel them.
        // Calls held until the upstreams start (they may never start now) are answered at once.
        const draining = proxy.drain(config.shutdownGraceMs);
        proxy.context.registry.releaseStartHold();
        await draining;
        // The SDK sends a result after its handler's promise settles: give it that turn.
        await new Promise((resolve) => setImmediate(resolve));
        // 2. Stop serving: close HTTP sessions and the listener, or the stdio transport.
        await lifecycle.stopServing();
      } finally {
        // 3. Stop health checks and close every upstream (SIGTERM, then SIGKILL per group),
        // including pools a reload is retiring and sessions still starting.
        await proxy.close();
        // 3b. The last calls' spans are exported; /metrics stops listening to the proxy.
        await lifecycle.telemetry?.close();
      }
      // 4. The log file's queued lines reach the disk, and what stdout and stderr still queue
      // reaches their readers, before the exit.
      await logFile?.close();
      await drained([process.stdout, process.stderr]);
      process.exit(0);
    },
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (shuttingDown) {
        // A second signal means "now": no grace, but no orphaned upstreams either.
        logger.warn(`${signal} again: exiting now`);
        proxy.killNow();
        process.exit(1);
      }
      void lifecycle.shutdown(signal);
    });
  }
  return lifecycle;
}

/**
 * How long a stdio client's `initialize` keeps the upstreams from starting, at most. Spawning a
 * dozen node servers takes the CPU mcpx needs to answer it (16 upstreams: initialize after ~4.9 s
 * at p50 on 2 busy cores, `npm run bench -- startup`); a client that sends nothing does not wait.
 */
const STDIO_HEAD_START_MS = 300;

interface Serving {
  stop: () => Promise<void>;
  /** Settles when the upstreams may start: at once over HTTP; over stdio once `initialize` is answered. */
  headStart: Promise<void>;
}

/** Serve stdio or HTTP; returns how to stop serving. */
async function start(
  cli: ServeOptions,
  proxy: Proxy,
  logger: Logger,
  telemetry: Telemetry | undefined,
  shutdown: (why: string) => void,
  early: EarlyStdio | undefined,
): Promise<Serving> {
  if (cli.daemonRun) return startDaemon(cli, proxy, logger, telemetry, shutdown);
  if (cli.port === undefined) {
    guardStdout();
    const stdio = serveStdio(
      proxy.context,
      { ...(cli.caller !== undefined && { caller: cli.caller }) },
      early,
    );
    void stdio.ended.then(() => shutdown("the client closed stdin, or the connection broke"));
    logger.info("serving MCP on stdio");
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STDIO_HEAD_START_MS);
    });
    const headStart = Promise.race([stdio.answered, bound]).finally(() => clearTimeout(timer));
    const metrics =
      cli.metricsPort === undefined ? undefined : await telemetry?.listen(cli.metricsPort);
    if (metrics) logger.info(`metrics on http://127.0.0.1:${metrics.port}/metrics`);
    return {
      stop: async () => {
        await stdio.close();
        await metrics?.close();
      },
      headStart,
    };
  }
  return {
    stop: await startHttp(cli, cli.port, proxy, logger, telemetry),
    headStart: Promise.resolve(),
  };
}

/** Serve streamable HTTP (and the dashboard) on --port; returns how to stop. */
async function startHttp(
  cli: ServeOptions,
  port: number,
  proxy: Proxy,
  logger: Logger,
  telemetry: Telemetry | undefined,
): Promise<() => Promise<void>> {
  // Express, the dashboard and the HTTP transports load only when serving HTTP: stdio
  // answers `initialize` sooner and idles smaller without them.
  const [{ serveHttp }, { mountDashboard }] = await Promise.all([
    import("../server/http.js"),
    import("../dashboard/index.js"),
  ]);
  const http = await serveHttp(proxy.context, {
    host: cli.host,
    port,
    allowedHosts: cli.allowedHosts,
    mount: (ctx, auth) => {
      const dashboard = mountDashboard(ctx, auth);
      return {
        routes: async (app) => {
          telemetry?.mount(app, auth.tokens);
          await dashboard.routes(app);
        },
        close: () => dashboard.close(),
      };
    },
  });
  if (http.portChanged) {
    logger.warn(
      `PORT ${port} IS IN USE: serving on port ${http.port} instead. Point clients at ${http.url}`,
    );
  }
  process.stderr.write(`mcpx listening on ${http.url}\n`);
  return () => http.close();
}

/**
 * `mcpx daemon run`: serve the config's Unix socket to the shims of its clients (and HTTP too
 * with --port). Upstreams start at once: no client waits on this process's `initialize`.
 */
async function startDaemon(
  cli: ServeOptions,
  proxy: Proxy,
  logger: Logger,
  telemetry: Telemetry | undefined,
  shutdown: (why: string) => void,
): Promise<Serving> {
  const { serveSocket } = await import("../server/socket.js");
  const socket = await serveSocket(proxy.context, {
    paths: daemonPaths(cli.config),
    idleMs: cli.daemonIdleMs,
    shutdown,
  });
  // An upgrade removed what this daemon loads on first use: it ends (after the calls in flight),
  // and its clients' shims attach to a daemon of the installed mcpx (src/daemon/shim.ts).
  onInstallChanged((detail) =>
    shutdown(`its files changed on disk (${detail}); its clients move to a new daemon`),
  );
  const http =
    cli.port === undefined ? undefined : await startHttp(cli, cli.port, proxy, logger, telemetry);
  return {
    stop: async () => {
      await socket.close();
      await http?.();
    },
    headStart: Promise.resolve(),
  };
}

/** Hot reload: apply valid edits of the config file, keep serving through invalid ones. */
function watch(cli: ServeOptions, proxy: Proxy, logger: Logger): ConfigWatcher {
  const file = proxy.context.config.file;
  return watchConfig(file, {
    logger,
    load: loadOptions(cli),
    // A reload must not drop auth from a server that is reachable beyond this machine.
    check: (next) => {
      const b = exposed(cli, next);
      return b && "error" in b
        ? [
            `auth: missing, but mcpx serves on ${cli.host}, beyond this machine. Keep "auth", or restart with --allow-unauthenticated.`,
          ]
        : [];
    },
    onConfig: async (next) => {
      await proxy.reload(next);
      logger.info(`config reloaded from ${next.file}`);
    },
    onInvalid: (err) =>
      logger.error(`config change rejected, still serving the previous config: ${err.message}`),
  });
}

/**
 * In stdio mode stdout is the protocol. Dependencies may still print with console (e.g.
 * json-schema-to-typescript logs to stdout when VERBOSE is set): send all of it to stderr.
 */
function guardStdout(): void {
  const toStderr = (...args: unknown[]) => {
    process.stderr.write(`${format(...args)}\n`);
  };
  for (const method of ["log", "info", "debug", "dir", "trace", "table"] as const) {
    // eslint-disable-next-line no-console -- redirecting console is the point here
    console[method] = toStderr;
  }
}
