/** A server's own tool filter, folded into every profile: exactly what both let through. */
import { describe, expect, it } from "vitest";
import { restrict } from "../../src/config/filters.js";
import { parseConfig } from "../../src/config/load.js";
import { globToRegExp, toolVisible } from "../../src/registry/profiles.js";

const tool = (name: string) => ({ name, inputSchema: { type: "object" } });
const matches = (pattern: string, text: string) => globToRegExp(pattern).test(text);

describe("restrict (a pattern narrowed to one server's refs)", () => {
  const patterns = [
    "*",
    "*.read_*",
    "gh.*",
    "g*",
    "*h.x*",
    "gh.a.b",
    "other.*",
    "**.*",
    "*.*.*",
    "gh*.",
  ];
  const texts = [
    "gh.read_file",
    "gh.a.b",
    "gh.x.read_y",
    "gh.",
    "ghh.x",
    "g.read_z",
    "other.read_a",
    "gh.xyz",
    "gh.h.x",
  ];
  it.each(patterns)("%s matches exactly the gh.* texts it matched before", (pattern) => {
    const narrowed = restrict(pattern, "gh.");
    for (const text of texts) {
      const want = text.startsWith("gh.") && matches(pattern, text);
      expect(
        narrowed.some((p) => matches(p, text)),
        `${pattern} on ${text}`,
      ).toBe(want);
      for (const p of narrowed) expect(p.startsWith("gh.")).toBe(true);
    }
  });
});

describe("server tool filters in profiles", () => {
  const visible = (config: ReturnType<typeof parseConfig>, profile: string, ref: string) => {
    const [server, name] = [ref.slice(0, ref.indexOf(".")), ref.slice(ref.indexOf(".") + 1)];
    return toolVisible(config.profiles[profile]!, server, tool(name));
  };

  it("include and exclude, with no profiles", () => {
    const config = parseConfig(
      {
        mcpServers: {
          gh: {
            url: "https://x.example/mcp",
            tools: { include: ["read_file", "list"], exclude: ["list"] },
          },
          fs: { command: "node", tools: { exclude: ["write_*"] } },
          mem: { command: "node2" },
        },
      },
      "/c/mcpx.json",
      {},
    );
    expect(visible(config, "default", "gh.read_file")).toBe(true);
    expect(visible(config, "default", "gh.list")).toBe(false);
    expect(visible(config, "default", "gh.delete_repo")).toBe(false);
    expect(visible(config, "default", "fs.write_file")).toBe(false);
    expect(visible(config, "default", "fs.read_file")).toBe(true);
    expect(visible(config, "default", "mem.anything.with.dots")).toBe(true);
  });

  it("a profile's own allow, deny and readOnly still apply on top", () => {
    const config = parseConfig(
      {
        mcpServers: {
          gh: { url: "https://x.example/mcp", tools: { include: ["read_file", "write_file"] } },
          fs: { command: "node" },
        },
        profiles: {
          default: { servers: ["*"] },
          reader: {
            servers: ["*"],
            tools: { allow: ["*.read_*", "fs.stat"], deny: ["fs.read_secret"] },
          },
          ghonly: { servers: ["gh"] },
        },
      },
      "/c/mcpx.json",
      {},
    );
    expect(visible(config, "reader", "gh.read_file")).toBe(true);
    expect(visible(config, "reader", "gh.write_file")).toBe(false); // the profile's allow
    expect(visible(config, "reader", "gh.read_other")).toBe(false); // the server's include
    expect(visible(config, "reader", "fs.read_x")).toBe(true);
    expect(visible(config, "reader", "fs.stat")).toBe(true);
    expect(visible(config, "reader", "fs.read_secret")).toBe(false);
    expect(visible(config, "reader", "fs.write")).toBe(false);
    expect(visible(config, "default", "gh.write_file")).toBe(true);
    expect(visible(config, "ghonly", "gh.read_file")).toBe(true);
    expect(visible(config, "ghonly", "fs.read_x")).toBe(false);
  });

  it('refuses "*" in include, and an include given twice', () => {
    expect(() =>
      parseConfig(
        { mcpServers: { s: { command: "x", tools: { include: ["read_*"] } } } },
        "/c/m.json",
        {},
      ),
    ).toThrow(
      'mcpServers.s.tools.include[0]: takes exact tool names; "*" patterns belong in "exclude" or a profile.',
    );
    expect(() =>
      parseConfig(
        { mcpServers: { s: { command: "x", includeTools: ["a"], tools: { include: ["b"] } } } },
        "/c/m.json",
        {},
      ),
    ).toThrow("mcpServers.s.includeTools: also given as tools.include. Keep one of them.");
  });
});
