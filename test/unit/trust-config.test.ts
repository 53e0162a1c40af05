/** The `trust` keys (issue 28) as the config loader reads them, beside `"trust": "untrusted"`. */
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/load.js";

const parse = (raw: Record<string, unknown>) => parseConfig(raw, "/cfg/mcpx.json", {});
const server = { command: "node", args: ["x.js"] };

describe("trust config", () => {
  it("defaults to warn; the top level sets every server's mode; a server's own wins", () => {
    expect(parse({ mcpServers: { a: server } }).servers[0]!.trust).toBe("warn");
    const c = parse({ trust: "hold", mcpServers: { a: server, b: { ...server, trust: "off" } } });
    expect(c.servers.map((s) => [s.name, s.trust])).toEqual([
      ["a", "hold"],
      ["b", "off"],
    ]);
    expect(c.trust).toBeUndefined(); // not an untrusted config
  });

  it('"untrusted" keeps its meaning and holds changed definitions', () => {
    const c = parse({ trust: "untrusted", mcpServers: { a: { url: "https://example.com/mcp" } } });
    expect(c.trust).toBe("untrusted");
    expect(c.servers[0]!.trust).toBe("hold");
  });

  it("a boolean trust on a server is Gemini CLI's key: ignored with a warning", () => {
    const c = parse({ mcpServers: { a: { ...server, trust: true } } });
    expect(c.servers[0]!.trust).toBe("warn");
    expect(c.warnings.join("\n")).toContain("mcpServers.a.trust: Gemini CLI's key");
  });

  it("profiles take a mode of their own", () => {
    const c = parse({
      mcpServers: { a: server },
      profiles: { default: { servers: ["*"] }, guests: { servers: ["*"], trust: "hold" } },
    });
    expect(c.profiles.guests!.trust).toBe("hold");
    expect(c.profiles.default!.trust).toBeUndefined();
  });

  it("a bad mode fails naming the key path and the choices", () => {
    for (const raw of [
      { trust: "strict", mcpServers: { a: server } },
      { mcpServers: { a: { ...server, trust: "maybe" } } },
      { mcpServers: { a: server }, profiles: { default: { servers: ["*"], trust: "yes" } } },
    ]) {
      let err: unknown;
      try {
        parse(raw);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/trust/);
      expect((err as Error).message).toMatch(/hold/);
    }
  });
});
