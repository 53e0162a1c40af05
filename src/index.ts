#!/usr/bin/env node
/**
 * The mcpx command: parse arguments, load config, build the proxy, serve stdio or HTTP, and
 * shut down cleanly. Exit codes: 0 normal, 1 runtime failure, 2 bad usage or config.
 */
import { format } from "node:util";
import { parseCli, UsageError, USAGE } from "./cli.js";
import { ConfigError, loadConfig } from "./config/load.js";
import { watchConfig, type ConfigWatcher } from "./config/watch.js";
import { errorMessage } from "./errors.js";
import { fileSink } from "./logfile.js";
import { createLogger, stderrSink } from "./logger.js";
import { createProxy } from "./proxy.js";
import { exposure, serveHttp } from "./server/http.js";
import { serveStdio } from "./server/stdio.js";
import { VERSION } from "./version.js";

async function main(): Promise<number | undefined> {
  let cli;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`mcpx: ${err.message}\n\n${USAGE}\n`);
    return 2;
  }
  // --help and --version are the only output mcpx ever writes to stdout.
  if (cli.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (cli.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (cli.config === undefined) {
    process.stderr.write(
      `mcpx: no config file given. Pass the path of a JSON file with "mcpServers" (see config.example.json).\n\n${USAGE}\n`,
    );
    return 2;
  }

  let config;
  try {
    config = loadConfig(cli.config);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`mcpx: ${err.message}\n`);
    return 2;
  }
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
  for (const w of config.warnings) logger.warn(w);
  // Beyond loopback only with auth, or when the user says so out loud.
  const exposed = (c: typeof config) =>
    cli.port === undefined ? undefined : exposure(cli.host, c, cli.allowUnauthenticated);
  const bind = exposed(config);
  if (bind && "error" in bind) {
    process.stderr.write(`mcpx: ${bind.error}\n`);
    return 2;
  }
  if (bind) logger.warn(bind.warning);

  const proxy = createProxy(config, { logger });
  // Started once the proxy is up; shutdown may come earlier.
  let watcher: ConfigWatcher | undefined = undefined;
  let stopServing: () => Promise<void> = async () => {};
  let shuttingDown = false;
  const shutdown = async (why: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info(`shutting down (${why})`);
    // 0. Stop reloading the config: nothing may start servers from here on.
    watcher?.close();
    try {
      // 1. Refuse new calls; let running ones finish within the grace period, then cancel them.
      await proxy.drain(config.shutdownGraceMs);
      // The SDK sends a result after its handler's promise settles: give it that turn.
      await new Promise((resolve) => setImmediate(resolve));
      // 2. Stop serving: close HTTP sessions and the listener, or the stdio transport.
      await stopServing();
    } finally {
      // 3. Stop health checks and close every upstream (SIGTERM, then SIGKILL per group).
      await proxy.close();
    }
    // 4. Let the log file's batch in progress land (the exit hook writes only what is queued).
    await logFile?.close();
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (shuttingDown) {
        // A second signal means "now": no grace, but no orphaned upstreams either.
        logger.warn(`${signal} again: exiting now`);
        proxy.killNow();
        process.exit(1);
      }
      void shutdown(signal);
    });
  }

  await proxy.start();
  const servers = proxy.context.registry.servers();
  const ready = servers.filter((s) => s.status === "ready").length;
  logger.info(`${ready}/${servers.length} upstream servers ready`);

  watcher = watchConfig(config.file, {
    logger,
    // A reload must not drop auth from a server that is reachable beyond this machine.
    check: (next) => {
      const b = exposed(next);
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

  if (cli.port === undefined) {
    guardStdout();
    const stdio = await serveStdio(proxy.context, {
      ...(cli.caller !== undefined && { caller: cli.caller }),
    });
    stopServing = () => stdio.close();
    void stdio.ended.then(() => shutdown("stdin closed"));
    logger.info("serving MCP on stdio");
  } else {
    const http = await serveHttp(proxy.context, {
      host: cli.host,
      port: cli.port,
      allowedHosts: cli.allowedHosts,
    });
    stopServing = () => http.close();
    if (http.portChanged) {
      logger.warn(
        `PORT ${cli.port} IS IN USE: serving on port ${http.port} instead. Point clients at ${http.url}`,
      );
    }
    process.stderr.write(`mcpx listening on ${http.url}\n`);
  }
  return undefined;
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mcpx: fatal: ${errorMessage(err)}\n`);
    process.exit(1);
  },
);

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

// No input may crash the proxy: a stray rejection is a bug to log, not a reason to drop every client.
process.on("unhandledRejection", (reason) => {
  process.stderr.write(`mcpx: unhandled rejection: ${errorMessage(reason)}\n`);
});
