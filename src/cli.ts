/**
 * The command line: every command, its options, help with examples and exit codes, parsed with
 * commander into an `Invocation` (pure: nothing is printed or exited here; src/index.ts
 * dispatches it to src/commands/). The root command (serve) is here, the subcommands in
 * src/cli-commands.ts, the options they parse into in src/cli-options.ts.
 */
import { Command, CommanderError, Option } from "commander";
import { addSubcommands, COMMANDS } from "./cli-commands.js";
import { SERVE_EXAMPLES } from "./cli-help.js";
import {
  DAEMON_IDLE_MS,
  type Invocation,
  serveOptions,
  sourceOptions,
  UsageError,
} from "./cli-options.js";
import { suggest } from "./config/suggest.js";
import { LOG_LEVELS } from "./logger.js";
import { EXAMPLE_CONFIG, VERSION } from "./version.js";

export * from "./cli-options.js";

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

  addSubcommands(program, subcommand, set);
  return program;
}

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
