/**
 * What the command line parses into (`Invocation` and each command's options), the usage error,
 * and the option helpers the commands share (src/cli.ts builds the root command, src/cli-commands.ts
 * the subcommands).
 */
import { Option, type Command } from "commander";
import { FORMAT_IDS, type FormatId, type Scope } from "./config/formats/types.js";
import { suggest } from "./config/suggest.js";
import type { LogLevel } from "./logger.js";

/** How a config file is read, for every command that reads one. */
export interface SourceOptions {
  /** Read the file as this format instead of detecting it. */
  format?: FormatId;
  /** `${workspaceFolder}` and the project of ~/.claude.json local scope (default: cwd). */
  project?: string;
  untrusted: boolean;
}

export interface ServeOptions extends SourceOptions {
  config: string;
  port?: number;
  host: string;
  /** stdio: the caller this client is (else its clientInfo.name, else "default"). */
  caller?: string;
  /** HTTP: serve a non-loopback --host without auth. */
  allowUnauthenticated: boolean;
  /** HTTP: more hostnames accepted in Host and Origin headers. */
  allowedHosts: string[];
  logLevel: LogLevel;
  /**
   * stdio: attach to the shared daemon of this config (started if none runs) instead of serving
   * here (`--daemon`).
   */
  daemon: boolean;
  /** The daemon exits after this long with no client (ms, `--daemon-idle`). */
  daemonIdleMs: number;
  /** Run as the daemon itself: serve the config's Unix socket (`mcpx daemon run`). */
  daemonRun?: boolean;
  /** stdio: serve Prometheus `/metrics` on this loopback port (`--metrics-port`). */
  metricsPort?: number;
}

export type DaemonAction = "run" | "status" | "stop" | "logs";
export const DAEMON_ACTIONS: readonly DaemonAction[] = ["run", "status", "stop", "logs"];

export interface DaemonOptions {
  action: DaemonAction;
  /** For `run`: what serving needs. */
  serve: ServeOptions;
}

/** The clients `install` knows: every format a client reads, mcpx's own aside. */
export type ClientId = Exclude<FormatId, "mcpx">;
export const CLIENTS = FORMAT_IDS.filter((id): id is ClientId => id !== "mcpx");
export type InstallScope = Scope;

export interface ImportOptions extends SourceOptions {
  file: string;
  /** Where to write; "-" is stdout. */
  output: string;
  force: boolean;
}

export interface InstallOptions {
  client: ClientId;
  /** The mcpx config to import into (created when missing). */
  config?: string;
  scope: InstallScope;
  /** The client's file, instead of its default place (tests, unusual setups). */
  file?: string;
  project?: string;
  dryRun: boolean;
  /** The client's entry attaches to the shared daemon (`--daemon`; off with `--no-daemon`). */
  daemon: boolean;
}

export interface UninstallOptions {
  client: ClientId;
  scope: InstallScope;
  file?: string;
  project?: string;
  dryRun: boolean;
}

export interface ValidateOptions extends SourceOptions {
  file: string;
  connect: boolean;
}

/** `mcpx trust diff|approve <config> [server[.tool]]`. */
export interface TrustOptions extends SourceOptions {
  action: "diff" | "approve";
  file: string;
  ref?: string;
}

export interface StatsOptions extends SourceOptions {
  file: string;
  json: boolean;
}

export interface LoginOptions extends SourceOptions {
  file: string;
  server: string;
  /** Print the authorization URL and read the redirect URL from stdin instead of a browser. */
  noBrowser: boolean;
  /** Scope to ask for, besides what the sign-in had and what the server asked for (step-up). */
  scope?: string;
}

export interface LogoutOptions extends SourceOptions {
  file: string;
  server: string;
}

/** What the command line asks for. `output` is text to print (help, version). */
export type Invocation =
  | { command: "serve"; options: ServeOptions }
  | { command: "import"; options: ImportOptions }
  | { command: "install"; options: InstallOptions }
  | { command: "uninstall"; options: UninstallOptions }
  | { command: "validate"; options: ValidateOptions }
  | { command: "stats"; options: StatsOptions }
  | { command: "trust"; options: TrustOptions }
  | { command: "daemon"; options: DaemonOptions }
  | { command: "login"; options: LoginOptions }
  | { command: "logout"; options: LogoutOptions }
  | { command: "output"; text: string };

/** A command line that cannot be used: `message` says what, `fix` how. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly fix = "Run mcpx --help for usage.",
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** How long the shared daemon stays with no client (10 minutes). */
export const DAEMON_IDLE_MS = 600_000;

/** --format, --project and (where it makes sense) --untrusted. */
export function sourceOptions(command: Command, { untrusted }: { untrusted: boolean }): void {
  command.addOption(
    new Option("--format <format>", "read the file as this format instead of detecting it").choices(
      FORMAT_IDS,
    ),
  );
  if (!command.options.some((o) => o.long === "--project")) {
    command.option(
      "--project <path>",
      "the project folder: ${workspaceFolder}, and ~/.claude.json local scope (default: cwd)",
    );
  }
  if (untrusted) {
    command.option(
      "--untrusted",
      "the file may not be yours: no local commands, only https to public hosts, no credentials",
    );
  }
}

export function scopeOption(): Option {
  return new Option(
    "--scope <scope>",
    "user: your own config; project: the project's shared file; local: Claude Code's per-project entries in ~/.claude.json",
  )
    .choices(["user", "project", "local"])
    .default("user");
}

export function source(o: Record<string, unknown>): SourceOptions {
  return {
    ...(typeof o.format === "string" && { format: o.format as FormatId }),
    ...(typeof o.project === "string" && { project: o.project }),
    untrusted: o.untrusted === true,
  };
}

export function clientId(value: string): ClientId {
  if ((CLIENTS as readonly string[]).includes(value)) return value as ClientId;
  const guess = suggest(value, CLIENTS);
  throw new UsageError(
    `unknown client "${value}".${guess ? ` Did you mean "${guess}"?` : ""}`,
    `Use one of: ${CLIENTS.join(", ")}.`,
  );
}

export function serveOptions(config: string, o: Record<string, unknown>): ServeOptions {
  let port: number | undefined;
  if (typeof o.port === "string") {
    port = Number(o.port);
    if (!/^\d+$/.test(o.port) || port > 65535) {
      throw new UsageError(
        `--port must be a whole number from 0 to 65535, got "${o.port}".`,
        "Use e.g. --port 3000, or --port 0 for any free port.",
      );
    }
  }
  let metricsPort: number | undefined;
  if (typeof o.metricsPort === "string") {
    metricsPort = Number(o.metricsPort);
    if (!/^\d+$/.test(o.metricsPort) || metricsPort > 65535 || port !== undefined) {
      throw new UsageError(
        port !== undefined
          ? "--metrics-port is for stdio: with --port, /metrics is served on that port."
          : `--metrics-port must be a whole number from 0 to 65535, got "${o.metricsPort}".`,
        port !== undefined ? "Drop --metrics-port." : "Use e.g. --metrics-port 9464.",
      );
    }
  }
  const caller = typeof o.caller === "string" ? o.caller.trim() : undefined;
  const daemonIdleMs = Number(o.daemonIdle ?? DAEMON_IDLE_MS);
  if (!Number.isInteger(daemonIdleMs) || daemonIdleMs < 0) {
    throw new UsageError(
      `--daemon-idle must be a whole number of milliseconds, got "${String(o.daemonIdle)}".`,
      "Use e.g. --daemon-idle 600000 (10 minutes).",
    );
  }
  if (o.daemon === true && port !== undefined) {
    throw new UsageError(
      "--daemon is for stdio clients; --port serves HTTP here.",
      "Drop one: a client launches `mcpx <config> --daemon`; to serve HTTP from the daemon run `mcpx daemon run <config> --port N`.",
    );
  }
  if (caller !== undefined && (port !== undefined || caller === "")) {
    throw new UsageError(
      port !== undefined ? "--caller is for stdio." : "--caller needs a name.",
      port !== undefined
        ? "Over HTTP the caller comes from the token, the /mcp/<caller> path or the X-MCPX-Caller header."
        : "Write --caller <name>.",
    );
  }
  return {
    ...source(o),
    config,
    ...(port !== undefined && { port }),
    host: String(o.host),
    ...(caller !== undefined && { caller }),
    allowUnauthenticated: o.allowUnauthenticated === true,
    allowedHosts: (o.allowedHost as string[] | undefined) ?? [],
    logLevel: o.logLevel as LogLevel,
    daemon: o.daemon === true,
    daemonIdleMs,
    ...(metricsPort !== undefined && { metricsPort }),
  };
}
