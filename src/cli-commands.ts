/**
 * The subcommands of the command line (import, install, uninstall, validate, daemon, trust, stats,
 * login, logout): each one's options and help, parsed into an `Invocation` (src/cli.ts builds the
 * root command and parses).
 */
import { Option, type Command } from "commander";
import {
  DAEMON_HELP,
  IMPORT_HELP,
  INSTALL_HELP,
  LOGIN_HELP,
  STATS_HELP,
  TRUST_HELP,
  UNINSTALL_HELP,
  VALIDATE_HELP,
} from "./cli-help.js";
import {
  CLIENTS,
  clientId,
  DAEMON_ACTIONS,
  DAEMON_IDLE_MS,
  type DaemonAction,
  type Invocation,
  type InstallScope,
  scopeOption,
  serveOptions,
  source,
  sourceOptions,
  UsageError,
} from "./cli-options.js";
import { LOG_LEVELS } from "./logger.js";

/** The names of the subcommands, for help topics and "did you mean". */
export const COMMANDS = [
  "import",
  "install",
  "uninstall",
  "validate",
  "stats",
  "trust",
  "daemon",
  "login",
  "logout",
];

/** Add every subcommand to `program`; `subcommand` makes one with the shared help and errors. */
export function addSubcommands(
  program: Command,
  subcommand: (name: string, arg: string, description: string) => Command,
  set: (i: Invocation) => void,
): void {
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
}
