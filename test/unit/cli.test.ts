import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { COMMANDS } from "../../src/cli-commands.js";
import { parseCommandLine, UsageError, type Invocation, type ServeOptions } from "../../src/cli.js";
import { LOG_LEVELS } from "../../src/logger.js";

/** The UsageError parseCommandLine throws for `argv`; fails the test when it does not throw one. */
function usageError(argv: string[]): UsageError {
  try {
    parseCommandLine(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error(`parseCommandLine(${JSON.stringify(argv)}) did not throw`);
}

function serve(argv: string[]): ServeOptions {
  const i = parseCommandLine(argv);
  if (i.command !== "serve") throw new Error(`expected serve, got ${i.command}`);
  return i.options;
}

function output(argv: string[]): string {
  const i = parseCommandLine(argv);
  if (i.command !== "output") throw new Error(`expected output, got ${i.command}`);
  return i.text;
}

describe("mcpx <config> (serve)", () => {
  it("defaults to stdio on 127.0.0.1 at log level info", () => {
    expect(serve(["./mcpx.json"])).toEqual({
      config: "./mcpx.json",
      host: "127.0.0.1",
      allowUnauthenticated: false,
      allowedHosts: [],
      logLevel: "info",
      untrusted: false,
      daemon: false,
      daemonIdleMs: 600_000,
    });
  });

  it("--daemon: the shim of the shared daemon, for stdio only; --daemon-idle in ms", () => {
    expect(serve(["./mcpx.json", "--daemon", "--daemon-idle", "1000"])).toMatchObject({
      daemon: true,
      daemonIdleMs: 1000,
    });
    expect(usageError(["./mcpx.json", "--daemon", "--port", "3000"]).message).toContain(
      "--daemon is for stdio",
    );
    expect(usageError(["./mcpx.json", "--daemon-idle", "soon"]).message).toContain(
      "--daemon-idle must be a whole number",
    );
    expect(parseCommandLine(["daemon", "status", "./mcpx.json"])).toMatchObject({
      command: "daemon",
      options: { action: "status", serve: { config: "./mcpx.json", daemonRun: false } },
    });
    expect(usageError(["daemon", "restart", "./mcpx.json"]).message).toContain(
      'unknown daemon action "restart"',
    );
  });

  it("needs a config file, and says how to give one", () => {
    const err = usageError([]);
    expect(err.message).toBe("no config file given.");
    // The installed example, by absolute path: examples/npx.json exists only in the clone's cwd.
    const example = /e\.g\. (\S+), shipped/.exec(err.fix)?.[1] ?? "";
    expect(path.isAbsolute(example) && existsSync(example)).toBe(true);
  });

  it("takes `help <command>` as that command's help, not as a config path", () => {
    const text = (argv: string[]) => {
      const inv = parseCommandLine(argv);
      return inv.command === "output" ? inv.text : `not output: ${inv.command}`;
    };
    expect(text(["help", "install"])).toContain("Usage: mcpx install");
    // Every subcommand is a help topic (trust once was missing from the list).
    expect(text(["help", "trust"])).toContain("Usage: mcpx trust");
    for (const command of COMMANDS)
      expect(text(["help", command])).toContain(`Usage: mcpx ${command}`);
    expect(text(["help"])).toContain("Usage: mcpx <config>");
    expect(usageError(["help", "nope"]).message).toBe('no help for "nope".');
  });

  it("reports two positionals as a UsageError", () => {
    expect(usageError(["a.json", "b.json"]).message).toContain("too many arguments");
  });

  describe("--port", () => {
    it.each([
      [["--port", "8080"], 8080],
      [["--port=3000"], 3000],
      [["-p", "80"], 80],
      [["--port", "0"], 0],
      [["--port", "65535"], 65535],
    ])("accepts %j as port %d", (argv, port) => {
      expect(serve(["c.json", ...argv]).port).toBe(port);
    });

    it.each(["abc", "-1", "65536", "8080.5", "99999", "", " ", "0x50", "1e3"])(
      "rejects %j with the bad value",
      (value) => {
        const err = usageError(["c.json", `--port=${value}`]);
        expect(err.message).toContain("--port must be a whole number from 0 to 65535");
        expect(err.message).toContain(`"${value}"`);
      },
    );

    it("rejects a missing value", () => {
      expect(usageError(["c.json", "--port"]).message).toMatch(/--port/);
    });
  });

  it("takes --host, with 127.0.0.1 as the default", () => {
    expect(serve(["c.json", "--host", "0.0.0.0", "--port", "1"]).host).toBe("0.0.0.0");
    expect(serve(["c.json", "--port", "1"]).host).toBe("127.0.0.1");
  });

  describe("--log-level", () => {
    it.each(LOG_LEVELS.map((l) => [l]))("accepts %s", (level) => {
      expect(serve(["c.json", "--log-level", level]).logLevel).toBe(level);
    });

    it("rejects an unknown level, listing the valid ones", () => {
      const err = usageError(["c.json", "--log-level", "trace"]);
      expect(err.message).toContain("trace");
      for (const level of LOG_LEVELS) expect(err.message).toContain(level);
    });
  });

  it("answers -h/--help and -v/--version with text to print", () => {
    for (const flag of ["-h", "--help"]) expect(output([flag])).toContain("Usage: mcpx <config>");
    for (const flag of ["-v", "--version"]) expect(output([flag]).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("reports an unknown option with the closest one", () => {
    const err = usageError(["c.json", "--prot", "1"]);
    expect(err.message).toContain("--prot");
    expect(err.message).toContain("--port");
    expect(err.fix).toContain("mcpx --help");
  });

  it("reports a misspelled command as one, not as a config file", () => {
    const err = usageError(["instal", "cursor"]);
    expect(err.message).toBe('unknown command "instal". Did you mean "install"?');
  });

  it("takes HTTP exposure flags, repeatable --allowed-host, and --untrusted", () => {
    const options = serve([
      "c.json",
      "--port",
      "1",
      "--host",
      "0.0.0.0",
      "--allow-unauthenticated",
      "--allowed-host",
      "mcpx.internal",
      "--allowed-host",
      "lb.example",
      "--untrusted",
    ]);
    expect(options.allowUnauthenticated).toBe(true);
    expect(options.allowedHosts).toEqual(["mcpx.internal", "lb.example"]);
    expect(options.untrusted).toBe(true);
  });

  it("takes --caller for stdio, and refuses it over HTTP", () => {
    expect(serve(["c.json", "--caller", "ci-bot"]).caller).toBe("ci-bot");
    expect(usageError(["c.json", "--caller", "x", "--port", "1"]).message).toContain(
      "--caller is for stdio",
    );
    expect(usageError(["c.json", "--caller", " "]).message).toContain("--caller needs a name");
  });

  it("takes --format and --project, and refuses a format it does not know", () => {
    expect(serve(["c.json", "--format", "vscode", "--project", "/p"])).toMatchObject({
      format: "vscode",
      project: "/p",
    });
    expect(usageError(["c.json", "--format", "vim"]).message).toContain("codex");
  });

  it("documents every option, command, format and exit code in --help", () => {
    const help = output(["--help"]);
    for (const word of [
      "--port",
      "--host",
      "--caller",
      "--allow-unauthenticated",
      "--allowed-host",
      "--log-level",
      "--untrusted",
      "--format",
      "--help",
      "--version",
      "import",
      "install",
      "uninstall",
      "validate",
      "stats",
      "claude_desktop_config.json",
      "config.toml",
      "Exit codes",
    ]) {
      expect(help).toContain(word);
    }
  });
});

describe("subcommands", () => {
  const parsed = (argv: string[]): Invocation => parseCommandLine(argv);

  it("import: the file, -o (default mcpx.json, - for stdout) and --force", () => {
    expect(parsed(["import", "a.json"])).toEqual({
      command: "import",
      options: { file: "a.json", output: "mcpx.json", force: false, untrusted: false },
    });
    expect(parsed(["import", "a.json", "-o", "-", "--force"])).toMatchObject({
      options: { output: "-", force: true },
    });
  });

  it("install / uninstall: a known client, a scope, --file, --dry-run", () => {
    expect(parsed(["install", "cursor"])).toEqual({
      command: "install",
      options: { client: "cursor", scope: "user", dryRun: false, daemon: true },
    });
    expect(parsed(["install", "cursor", "--no-daemon"])).toMatchObject({
      options: { daemon: false },
    });
    expect(
      parsed(["install", "vscode", "--scope", "project", "--config", "m.json", "--dry-run"]),
    ).toMatchObject({ options: { scope: "project", config: "m.json", dryRun: true } });
    expect(parsed(["uninstall", "codex", "--file", "/x/config.toml"])).toMatchObject({
      command: "uninstall",
      options: { client: "codex", file: "/x/config.toml" },
    });
    const err = usageError(["install", "cursr"]);
    expect(err.message).toBe('unknown client "cursr". Did you mean "cursor"?');
    expect(err.fix).toContain("claude-desktop");
    expect(usageError(["install", "cursor", "--scope", "team"]).message).toContain("team");
  });

  it("validate and stats: --connect, --json, --untrusted", () => {
    expect(parsed(["validate", "f.json", "--connect", "--untrusted"])).toMatchObject({
      command: "validate",
      options: { file: "f.json", connect: true, untrusted: true },
    });
    expect(parsed(["stats", "f.json", "--json"])).toMatchObject({
      command: "stats",
      options: { file: "f.json", json: true },
    });
  });

  it("keeps the proxy's options off subcommands", () => {
    expect(usageError(["validate", "f.json", "--port", "1"]).message).toContain("--port");
  });

  it.each(["import", "install", "uninstall", "validate", "stats"])(
    "%s --help lists its options with examples and exit codes",
    (command) => {
      const help = output([command, "--help"]);
      expect(help).toContain(`Usage: mcpx ${command}`);
      expect(help).toContain("Examples:");
      expect(help).toContain("Exit codes");
    },
  );
});
