/**
 * The command line: every command, its options, help with examples and exit codes, parsed with
 * commander into an `Invocation` (pure: nothing is printed or exited here; src/index.ts
 * dispatches it to src/commands/).
 */
import { Command, CommanderError, Option } from "commander";
import { FORMAT_IDS, type FormatId, type Scope } from "./config/formats/types.js";
import { suggest } from "./config/suggest.js";
import {
  DAEMON_HELP,
  IMPORT_HELP,
  INSTALL_HELP,
  SERVE_EXAMPLES,
  LOGIN_HELP,
  STATS_HELP,
  TRUST_HELP,
  UNINSTALL_HELP,
  VALIDATE_HELP,
} from "./cli-help.js";
import { LOG_LEVELS, type LogLevel } from "./logger.js";
import { EXAMPLE_CONFIG, VERSION } from "./version.js";

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

/** Parse `argv` (without node and the script). Throws UsageError. */
export function parseCommandLine(argv: readonly string[]): Invocation {
  // `mcpx help [command]`, as git and npm take it: the help, not a config file named "help".
  if (argv[0] === "help" && argv.length <= 2) {
    const topic = argv[1];
    if (topic !== undefined && !COMMANDS.includes(topic)) {
      throw new UsageError(`no help for "${topic}".`, `Run mcpx help <${COMMANDS.join("|")}>.`);
    }
    return parseCommandLine(topic === undefined ? ["--help"] : [topic, "--help"]);
  }
  unknownCommand(argv[0]);
  let invocation: Invocation | undefined;
  let printed = "";
  const set = (i: Invocation) => {
    invocation = i;
  };
  const program = buildProgram(set, (text) => (printed += text));
  try {
    program.parse([...argv], { from: "user" });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version") {
      return { command: "output", text: printed };
    }
    throw new UsageError(err.message.replace(/^error: /, "").replace(/\n/g, " "));
  }
  if (!invocation) return { command: "output", text: program.helpInformation() };
  return invocation;
}

function buildProgram(set: (i: Invocation) => void, print: (text: string) => void): Command {
  // Help goes to `print`; errors are thrown (exitOverride) and worded by src/index.ts.
  const output = { writeOut: print, writeErr: () => {}, outputError: () => {} };
  const subcommand = (name: string, arg: string, description: string): Command =>
    program
      .command(name)
      .argument(arg)
      .description(description)
      .helpOption("-h, --help", "show this help")
      .exitOverride()
      .configureOutput(output);
  const program = new Command("mcpx")
    .description(
      "Serve the MCP servers of a config to an AI client through three meta-tools (describe, call, resources).",
    )
    .usage("<config> [options] | <command> [options]")
    .argument("[config]", "config file: mcpx's own or a client's (see formats below)")
    .option("-p, --port <n>", "serve streamable HTTP at http://HOST:N/mcp (default: stdio)")
    .option("--host <h>", "interface to bind with --port", "127.0.0.1")
    .option(
      "--allowed-host <h>",
      "with --port: also accept this name in Host/Origin (repeatable)",
      (v: string, all: string[] | undefined) => [...(all ?? []), v],
    )
    .option(
      "--allow-unauthenticated",
      "with --port: serve a non-loopback --host without auth (loud warning)",
    )
    .option("--caller <name>", "stdio: the caller (profile) this client is")
    .option(
      "--metrics-port <n>",
      "stdio: serve Prometheus /metrics on 127.0.0.1:N (with --port, /metrics is on that port)",
    )
    .option(
      "--daemon",
      "stdio: attach to the one shared mcpx of this config (started in the background if none runs)",
    )
    .option(
      "--daemon-idle <ms>",
      "the shared daemon exits after this long with no client",
      String(DAEMON_IDLE_MS),
    )
    .addOption(
      new Option("--log-level <level>", "logs on stderr").choices(LOG_LEVELS).default("info"),
    )
    .version(VERSION, "-v, --version", "show the version")
    .helpOption("-h, --help", "show this help")
    .addHelpText("after", SERVE_EXAMPLES)
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput(output);
  sourceOptions(program, { untrusted: true });
  program.action((config: string | undefined, o: Record<string, unknown>) => {
    if (config === undefined) {
      throw new UsageError(
        "no config file given.",
        `Pass the path of a config file with "mcpServers" (e.g. ${EXAMPLE_CONFIG}, shipped with mcpx), or run mcpx --help.`,
      );
    }
    set({ command: "serve", options: serveOptions(config, o) });
  });

  subcommand("import", "<file>", "write an mcpx config from any config mcpx reads")
    .option("-o, --output <file>", 'where to write ("-" for stdout)', "mcpx.json")
    .option("-f, --force", "overwrite the output file if it exists")
    .addHelpText("after", IMPORT_HELP)
    .action((file: string, o: Record<string, unknown>) =>
      set({
        command: "import",
        options: {
          ...source(o),
          file,
          output: String(o.output),
          force: o.force === true,
        },
      }),
    );
  sourceOptions(program.commands.at(-1)!, { untrusted: false });

  const clientArg = `<client>`;
  subcommand("install", clientArg, `move a client's servers to mcpx: ${CLIENTS.join(" | ")}`)
    .option(
      "-c, --config <file>",
      "the mcpx config to import into (created if missing; default ~/.config/mcpx/<client>.json, or mcpx.json in the project for --scope project)",
    )
    .addOption(scopeOption())
    .option("--file <path>", "the client's config file, instead of its usual place")
    .option("--project <path>", "the project folder for --scope project/local (default: cwd)")
    .option("--dry-run", "print the changes as a diff and write nothing")
    .option(
      "--no-daemon",
      "the client starts its own mcpx instead of attaching to the shared daemon of the config",
    )
    .addHelpText("after", INSTALL_HELP)
    .action((client: string, o: Record<string, unknown>) =>
      set({
        command: "install",
        options: {
          client: clientId(client),
          scope: o.scope as InstallScope,
          dryRun: o.dryRun === true,
          daemon: o.daemon !== false,
          ...(typeof o.config === "string" && { config: o.config }),
          ...(typeof o.file === "string" && { file: o.file }),
          ...(typeof o.project === "string" && { project: o.project }),
        },
      }),
    );

  subcommand("uninstall", clientArg, "put a client's config back as it was before install")
    .addOption(scopeOption())
    .option("--file <path>", "the client's config file, instead of its usual place")
    .option("--project <path>", "the project folder for --scope project/local (default: cwd)")
    .option("--dry-run", "print the changes as a diff and write nothing")
    .addHelpText("after", UNINSTALL_HELP)
    .action((client: string, o: Record<string, unknown>) =>
      set({
        command: "uninstall",
        options: {
          client: clientId(client),
          scope: o.scope as InstallScope,
          dryRun: o.dryRun === true,
          ...(typeof o.file === "string" && { file: o.file }),
          ...(typeof o.project === "string" && { project: o.project }),
        },
      }),
    );

  subcommand("validate", "<file>", "check a config without starting its servers")
    .option("--connect", "also start each server and list its tools")
    .addHelpText("after", VALIDATE_HELP)
    .action((file: string, o: Record<string, unknown>) =>
      set({ command: "validate", options: { ...source(o), file, connect: o.connect === true } }),
    );
  sourceOptions(program.commands.at(-1)!, { untrusted: true });

  subcommand("daemon", "<action>", `the shared daemon of a config: ${DAEMON_ACTIONS.join(" | ")}`)
    .argument("<config>")
    .option(
      "--daemon-idle <ms>",
      "run: exit after this long with no client",
      String(DAEMON_IDLE_MS),
    )
    .option("-p, --port <n>", "run: also serve HTTP (and the dashboard) on this port")
    .option("--host <h>", "interface to bind with --port", "127.0.0.1")
    .addOption(
      new Option("--log-level <level>", "run: logs (to the daemon's log file)")
        .choices(LOG_LEVELS)
        .default("info"),
    )
    .addHelpText("after", DAEMON_HELP)
    .action((action: string, config: string, o: Record<string, unknown>) => {
      if (!(DAEMON_ACTIONS as readonly string[]).includes(action)) {
        throw new UsageError(
          `unknown daemon action "${action}".`,
          `Use one of: ${DAEMON_ACTIONS.join(", ")} (e.g. mcpx daemon status ${config}).`,
        );
      }
      set({
        command: "daemon",
        options: {
          action: action as DaemonAction,
          serve: { ...serveOptions(config, o), daemonRun: action === "run" },
        },
      });
    });
  sourceOptions(program.commands.at(-1)!, { untrusted: true });

  subcommand(
    "trust",
    "<action>",
    "review (diff) and approve changed, new or suspicious tool definitions",
  )
    .argument("<config>")
    .argument("[ref]", "server or server.tool (approve: required)")
    .addHelpText("after", TRUST_HELP)
    .action(
      (action: string, config: string, ref: string | undefined, o: Record<string, unknown>) => {
        if (action !== "diff" && action !== "approve") {
          throw new UsageError(
            `unknown trust action "${action}".`,
            `Use diff or approve (e.g. mcpx trust diff ${config}).`,
          );
        }
        if (action === "approve" && ref === undefined) {
          throw new UsageError(
            "mcpx trust approve needs what to approve.",
            `Name a server or server.tool (mcpx trust diff ${config} lists what waits).`,
          );
        }
        set({
          command: "trust",
          options: { ...source(o), action, file: config, ...(ref !== undefined && { ref }) },
        });
      },
    );
  sourceOptions(program.commands.at(-1)!, { untrusted: true });

  subcommand("stats", "<file>", "tokens of the tool definitions, directly and through mcpx")
    .option("--json", "print JSON instead of a table")
    .addHelpText("after", STATS_HELP)
    .action((file: string, o: Record<string, unknown>) =>
      set({ command: "stats", options: { ...source(o), file, json: o.json === true } }),
    );
  sourceOptions(program.commands.at(-1)!, { untrusted: true });

  subcommand("login", "<file>", "sign in to a server of the config that is protected by OAuth")
    .argument("<server>")
    .option("--no-browser", "print the sign-in URL and read the redirect URL from stdin")
    .option("--scope <scopes>", "space-separated scopes to ask for (added to the earlier ones)")
    .addHelpText("after", LOGIN_HELP)
    .action((file: string, server: string, o: Record<string, unknown>) =>
      set({
        command: "login",
        options: {
          ...source(o),
          file,
          server,
          noBrowser: o.browser === false,
          ...(typeof o.scope === "string" && { scope: o.scope }),
        },
      }),
    );
  sourceOptions(program.commands.at(-1)!, { untrusted: false });

  subcommand("logout", "<file>", "forget (and revoke) the sign-in of a server")
    .argument("<server>")
    .addHelpText("after", LOGIN_HELP)
    .action((file: string, server: string, o: Record<string, unknown>) =>
      set({ command: "logout", options: { ...source(o), file, server } }),
    );
  sourceOptions(program.commands.at(-1)!, { untrusted: false });
  return program;
}

/** --format, --project and (where it makes sense) --untrusted. */
function sourceOptions(command: Command, { untrusted }: { untrusted: boolean }): void {
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

function scopeOption(): Option {
  return new Option(
    "--scope <scope>",
    "user: your own config; project: the project's shared file; local: Claude Code's per-project entries in ~/.claude.json",
  )
    .choices(["user", "project", "local"])
    .default("user");
}

function source(o: Record<string, unknown>): SourceOptions {
  return {
    ...(typeof o.format === "string" && { format: o.format as FormatId }),
    ...(typeof o.project === "string" && { project: o.project }),
    untrusted: o.untrusted === true,
  };
}

function clientId(value: string): ClientId {
  if ((CLIENTS as readonly string[]).includes(value)) return value as ClientId;
  const guess = suggest(value, CLIENTS);
  throw new UsageError(
    `unknown client "${value}".${guess ? ` Did you mean "${guess}"?` : ""}`,
    `Use one of: ${CLIENTS.join(", ")}.`,
  );
}

const COMMANDS = [
  "import",
  "install",
  "uninstall",
  "validate",
  "stats",
  "daemon",
  "login",
  "logout",
];

/** How long the shared daemon stays with no client (10 minutes). */
export const DAEMON_IDLE_MS = 600_000;

/** A first word that is no file but close to a command is a misspelled command, not a config. */
function unknownCommand(first: string | undefined): void {
  if (first === undefined || first.startsWith("-") || COMMANDS.includes(first)) return;
  if (/[./\\]/.test(first)) return;
  const command = suggest(first, COMMANDS);
  if (command) {
    throw new UsageError(
      `unknown command "${first}". Did you mean "${command}"?`,
      `Run mcpx ${command} --help, or pass a config file's path.`,
    );
  }
}

function serveOptions(config: string, o: Record<string, unknown>): ServeOptions {
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
