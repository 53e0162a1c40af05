import { parseArgs } from "node:util";
import { LOG_LEVELS, type LogLevel } from "./logger.js";

export interface CliOptions {
  config?: string;
  port?: number;
  host: string;
  /** stdio: the caller this client is (else its clientInfo.name, else "default"). */
  caller?: string;
  /** HTTP: serve a non-loopback --host without auth. */
  allowUnauthenticated: boolean;
  /** HTTP: more hostnames accepted in Host and Origin headers. */
  allowedHosts: string[];
  logLevel: LogLevel;
  help: boolean;
  version: boolean;
}

export const USAGE = `Usage: mcpx <config.json> [--port N] [--host H] [--caller NAME] [--log-level L]

Serve the MCP servers of <config.json> to an AI client through three meta-tools
(describe, call, resources).

  (no --port)        serve MCP over stdio (e.g. claude mcp add mcpx -- mcpx /abs/config.json)
  --port N           serve streamable HTTP at http://HOST:N/mcp
  --host H           interface to bind with --port (default 127.0.0.1); other interfaces
                     need "auth" in the config, or --allow-unauthenticated
  --allowed-host H   with --port: also accept this name in Host/Origin (repeatable)
  --allow-unauthenticated  with --port: serve a non-loopback --host without auth (loud warning)
  --caller NAME      stdio: the caller (profile) this client is; default its clientInfo.name
  --log-level L      ${LOG_LEVELS.join(" | ")} (default info); logs go to stderr
  -h, --help         show this help
  -v, --version      show the version`;

/** A command line that cannot be used; the message says how to fix it. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export function parseCli(argv: string[]): CliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string", short: "p" },
        host: { type: "string" },
        caller: { type: "string" },
        "allow-unauthenticated": { type: "boolean" },
        "allowed-host": { type: "string", multiple: true },
        "log-level": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) {
    throw new UsageError(
      `expected one config file, got ${positionals.length}: ${positionals.join(" ")}`,
    );
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) {
      throw new UsageError(`--port must be a whole number from 0 to 65535, got "${values.port}"`);
    }
  }
  if (values.caller !== undefined && (port !== undefined || values.caller.trim() === "")) {
    throw new UsageError(
      port !== undefined
        ? "--caller is for stdio; over HTTP the caller comes from the token, the /mcp/<caller> path or the X-MCPX-Caller header"
        : "--caller needs a name",
    );
  }
  const logLevel = values["log-level"] ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  return {
    ...(positionals[0] !== undefined && { config: positionals[0] }),
    ...(port !== undefined && { port }),
    host: values.host ?? "127.0.0.1",
    ...(values.caller !== undefined && { caller: values.caller.trim() }),
    allowUnauthenticated: values["allow-unauthenticated"] ?? false,
    allowedHosts: values["allowed-host"] ?? [],
    logLevel: logLevel as LogLevel,
    help: values.help ?? false,
    version: values.version ?? false,
  };
}
