/** The config keys of mid-call requests: a server's `roots`, a profile's `confirm`. */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, type Config } from "../../src/config/load.js";
import { fingerprint } from "../../src/registry/fingerprint.js";

const FILE = path.resolve("/configs/team/mcpx.json");

function parse(raw: unknown, options?: { untrusted?: boolean }): Config {
  return parseConfig(raw, FILE, {}, options);
}

function problems(raw: unknown, options?: { untrusted?: boolean }): string[] {
  try {
    parse(raw, options);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("parseConfig did not throw");
}

describe("a server's roots", () => {
  it("are file:// URIs: paths relative to the config file, URIs as written", () => {
    const config = parse({
      mcpServers: {
        fs: { command: "fs", roots: ["src", "/srv/data", "file:///home/me/notes"] },
      },
    });
    expect(config.servers[0]?.roots).toEqual([
      pathToFileURL("/configs/team/src").href,
      pathToFileURL("/srv/data").href,
      "file:///home/me/notes",
    ]);
  });

  it("refuses what is neither a folder nor a file:// URI, naming the entry", () => {
    expect(
      problems({ mcpServers: { fs: { command: "fs", roots: ["https://example.com/x"] } } }),
    ).toEqual([
      'mcpServers.fs.roots[0]: "https://example.com/x" is not a folder. Give a path (relative to the config file) or a file:// URI.',
    ]);
  });

  it("are refused in an untrusted config", () => {
    const found = problems(
      { mcpServers: { r: { url: "https://mcp.example.com/mcp", roots: ["/home"] } } },
      { untrusted: true },
    );
    expect(found[0]).toMatch(
      /^mcpServers\.r\.roots: refused: an untrusted config may not tell servers about local folders/,
    );
  });

  it("make a server another upstream: entries with other roots share no pool", () => {
    const config = parse({
      mcpServers: {
        a: { command: "fs" },
        b: { command: "fs" },
        c: { command: "fs", roots: ["x"] },
      },
    });
    const [a, b, c] = config.servers.map(fingerprint);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });
});

describe("a profile's confirm", () => {
  it("takes server.tool patterns and destructive", () => {
    const config = parse({
      mcpServers: { gh: { command: "gh" } },
      profiles: { default: { servers: ["*"], confirm: ["destructive", "gh.delete_*", "*.drop"] } },
    });
    expect(config.profiles.default?.confirm).toEqual(["destructive", "gh.delete_*", "*.drop"]);
  });

  it("refuses an unknown server and a name that is not a tool ref", () => {
    expect(
      problems({
        mcpServers: { gh: { command: "gh" } },
        profiles: { default: { servers: ["*"], confirm: ["gx.delete", "delete"] } },
      }),
    ).toEqual([
      'profiles.default.confirm[0]: no server "gx" in mcpServers. Did you mean "gh"? Use a name from mcpServers (gh) or a pattern with "*".',
      'profiles.default.confirm[1]: "delete" is not a tool ref. Write "server.tool" ("*" matches any characters), or "destructive" for every tool annotated destructiveHint.',
    ]);
  });
});
