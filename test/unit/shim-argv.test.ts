/**
 * The bin reads a client's `--daemon` entry itself (src/daemon/argv.ts) and leaves every other
 * command line to the full CLI: what it accepts must mean what the CLI means by it.
 */
import { describe, expect, it } from "vitest";
import { parseCommandLine, DAEMON_IDLE_MS } from "../../src/cli.js";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/server";
import { SHIM_DEFAULT_IDLE_MS, shimOptions } from "../../src/daemon/argv.js";
import { MAX_LINE_BYTES } from "../../src/daemon/wire.js";

describe("the bin's --daemon fast path", () => {
  it.each([
    [["cfg.json", "--daemon"]],
    [["--daemon", "/home/u/.config/mcpx/claude-code.json"]],
    [["cfg.json", "--daemon", "--caller", "ci", "--log-level", "debug"]],
    [["cfg.json", "--daemon", "--daemon-idle", "5000", "--untrusted", "--project", "/p"]],
  ])("reads %j as the full CLI does", (argv) => {
    const fast = shimOptions(argv);
    const full = parseCommandLine(argv);
    expect(full.command).toBe("serve");
    if (full.command !== "serve") return;
    expect(fast).toEqual({
      config: full.options.config,
      daemonIdleMs: full.options.daemonIdleMs,
      logLevel: full.options.logLevel,
      untrusted: full.options.untrusted,
      ...(full.options.caller !== undefined && { caller: full.options.caller }),
      ...(full.options.project !== undefined && { project: full.options.project }),
    });
  });

  it.each([
    [["cfg.json"]],
    [["cfg.json", "--port", "3000", "--daemon"]],
    [["cfg.json", "--daemon", "--format", "cursor"]],
    [["cfg.json", "--daemon", "--log-level", "loud"]],
    [["cfg.json", "--daemon", "--daemon-idle", "-1"]],
    [["cfg.json", "--daemon", "--caller", " "]],
    [["instal", "--daemon"]],
    [["daemon", "status", "cfg.json", "--daemon"]],
    [["a.json", "b.json", "--daemon"]],
    [["cfg.json", "--daemon", "--help"]],
  ])("leaves %j to the full CLI", (argv) => {
    expect(shimOptions(argv)).toBeUndefined();
  });

  it("has the CLI's default idle time", () => {
    expect(SHIM_DEFAULT_IDLE_MS).toBe(DAEMON_IDLE_MS);
  });
});

it("the shim's bound on a line is the SDK's, which the daemon's reader holds", () => {
  expect(MAX_LINE_BYTES).toBe(STDIO_DEFAULT_MAX_BUFFER_SIZE);
});
