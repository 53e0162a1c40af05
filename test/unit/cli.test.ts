import { describe, expect, it } from "vitest";

import { parseCli, USAGE, UsageError } from "../../src/cli.js";
import { LOG_LEVELS } from "../../src/logger.js";

/** The UsageError parseCli throws for `argv`; fails the test when it does not throw one. */
function usageError(argv: string[]): UsageError {
  try {
    parseCli(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error(`parseCli(${JSON.stringify(argv)}) did not throw`);
}

describe("parseCli", () => {
  it("defaults to stdio on 127.0.0.1 at log level info, with no config", () => {
    const options = parseCli([]);
    expect(options).toEqual({
      host: "127.0.0.1",
      allowUnauthenticated: false,
      allowedHosts: [],
      logLevel: "info",
      help: false,
      version: false,
    });
    expect("port" in options).toBe(false);
    expect("config" in options).toBe(false);
  });

  it("takes one positional as the config file", () => {
    expect(parseCli(["./mcpx.json"]).config).toBe("./mcpx.json");
  });

  it("reports two positionals as a UsageError naming both", () => {
    const err = usageError(["a.json", "b.json"]);
    expect(err.name).toBe("UsageError");
    expect(err.message).toContain("expected one config file, got 2");
    expect(err.message).toContain("a.json b.json");
  });

  describe("--port", () => {
    it.each([
      [["--port", "8080"], 8080],
      [["--port=3000"], 3000],
      [["-p", "80"], 80],
      [["--port", "0"], 0],
      [["--port", "65535"], 65535],
    ])("accepts %j as port %d", (argv, port) => {
      expect(parseCli(argv).port).toBe(port);
    });

    it.each(["abc", "-1", "65536", "8080.5", "99999"])("rejects %j with the bad value", (value) => {
      const err = usageError([`--port=${value}`]);
      expect(err.message).toContain("--port must be a whole number from 0 to 65535");
      expect(err.message).toContain(`"${value}"`);
    });

    it("rejects a missing value", () => {
      expect(usageError(["--port"]).message).toMatch(/--port/);
    });

    // Number("") is 0 and Number("0x50") is 80: only decimal digits make a whole number here.
    it.each(["", " ", "0x50", "1e3"])(
      "rejects %j, which is not written as a whole number",
      (value) => {
        usageError([`--port=${value}`]);
      },
    );
  });

  it("takes --host, with 127.0.0.1 as the default", () => {
    expect(parseCli(["--host", "0.0.0.0", "--port", "1"]).host).toBe("0.0.0.0");
    expect(parseCli(["--port", "1"]).host).toBe("127.0.0.1");
  });

  describe("--log-level", () => {
    it.each(LOG_LEVELS.map((l) => [l]))("accepts %s", (level) => {
      expect(parseCli(["--log-level", level]).logLevel).toBe(level);
    });

    it("rejects an unknown level, listing the valid ones", () => {
      const err = usageError(["--log-level", "trace"]);
      expect(err.message).toContain('"trace"');
      for (const level of LOG_LEVELS) expect(err.message).toContain(level);
    });
  });

  it("sets help with -h and --help, version with -v and --version", () => {
    expect(parseCli(["-h"])).toMatchObject({ help: true, version: false });
    expect(parseCli(["--help"])).toMatchObject({ help: true, version: false });
    expect(parseCli(["-v"])).toMatchObject({ help: false, version: true });
    expect(parseCli(["--version"])).toMatchObject({ help: false, version: true });
  });

  it("reports an unknown option as a UsageError", () => {
    expect(usageError(["--bogus"]).message).toContain("--bogus");
  });

  it("parses a full command line", () => {
    expect(
      parseCli(["cfg.json", "--port", "9000", "--host", "::1", "--log-level", "debug"]),
    ).toEqual({
      config: "cfg.json",
      port: 9000,
      host: "::1",
      allowUnauthenticated: false,
      allowedHosts: [],
      logLevel: "debug",
      help: false,
      version: false,
    });
  });

  it("takes HTTP exposure flags, repeatable --allowed-host", () => {
    const options = parseCli([
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
    ]);
    expect(options.allowUnauthenticated).toBe(true);
    expect(options.allowedHosts).toEqual(["mcpx.internal", "lb.example"]);
  });

  it("takes --caller for stdio, and refuses it over HTTP", () => {
    expect(parseCli(["c.json", "--caller", "ci-bot"]).caller).toBe("ci-bot");
    expect(usageError(["c.json", "--caller", "x", "--port", "1"]).message).toContain(
      "--caller is for stdio",
    );
    expect(usageError(["c.json", "--caller", " "]).message).toContain("--caller needs a name");
  });

  it("documents every option in USAGE", () => {
    for (const flag of [
      "--port",
      "--host",
      "--caller",
      "--allow-unauthenticated",
      "--allowed-host",
      "--log-level",
      "--help",
      "--version",
    ]) {
      expect(USAGE).toContain(flag);
    }
  });
});
