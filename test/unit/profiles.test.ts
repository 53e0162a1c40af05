/**
 * Profiles and callers: config validation, the pure visibility rules, and per-caller catalogs
 * over in-memory upstreams (describe, call, resources answer from the caller's profile only).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, parseConfig, type Config, type Profile } from "../../src/config/load.js";
import {
  globToRegExp,
  profileFor,
  serverVisible,
  toolVisible,
  unrestricted,
} from "../../src/registry/profiles.js";
import type { Proxy } from "../../src/proxy.js";
import type { ToolDef } from "../../src/types.js";
import { ERAS, onToolsChanged } from "../helpers/clients.js";
import { connectClient, memoryConfig, memoryProxy, quietLogger } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

const FILE = "/configs/mcpx.json";
const servers = {
  filesystem: { command: "fs" },
  github: { command: "gh" },
  memory: { command: "m" },
};

function parse(extra: Record<string, unknown>, env: Record<string, string> = {}): Config {
  return parseConfig({ mcpServers: servers, ...extra }, FILE, env);
}

function problems(extra: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  try {
    parse(extra, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("parseConfig did not throw");
}

const tool = (name: string, readOnly?: boolean): ToolDef => ({
  name,
  inputSchema: { type: "object" },
  ...(readOnly !== undefined && { annotations: { readOnlyHint: readOnly } }),
});

const profile = (p: Partial<Profile>): Profile => ({
  name: "p",
  servers: ["*"],
  tools: { deny: [] },
  readOnly: false,
  ...p,
});

describe("config: profiles, callers, auth", () => {
  it("without profiles, a default profile holds every server", () => {
    const config = parse({});
    expect(config.profiles).toEqual({
      default: { name: "default", servers: ["*"], tools: { deny: [] }, readOnly: false },
    });
    expect(config.callers).toEqual({});
    expect(config.auth).toBeUndefined();
  });

  it("normalizes profiles and callers", () => {
    const config = parse({
      profiles: {
        default: { servers: ["*"] },
        coding: {
          servers: ["filesystem", "github"],
          tools: { deny: ["filesystem.write_*"] },
        },
        readonly: { servers: ["*"], tools: { allow: ["*"] }, readOnly: true },
      },
      callers: { "claude-code": "coding", "cursor-vscode": "default" },
    });
    expect(config.profiles.coding).toEqual({
      name: "coding",
      servers: ["filesystem", "github"],
      tools: { deny: ["filesystem.write_*"] },
      readOnly: false,
    });
    expect(config.profiles.readonly?.tools.allow).toEqual(["*"]);
    expect(config.profiles.readonly?.readOnly).toBe(true);
    expect(config.callers).toEqual({ "claude-code": "coding", "cursor-vscode": "default" });
  });

  it("reports a caller mapped to a missing profile, with a suggestion", () => {
    expect(
      problems({
        profiles: { default: { servers: ["*"] }, coding: { servers: ["github"] } },
        callers: { "claude-code": "codng" },
      }),
    ).toEqual([
      'callers.claude-code: no profile "codng". Did you mean "coding"? Profiles: default, coding.',
    ]);
  });

  it("reports a profile naming a missing server, in servers and in tool refs", () => {
    const found = problems({
      profiles: {
        default: { servers: ["githb"] },
        other: { servers: ["*"], tools: { deny: ["nope.write"], allow: ["write_file"] } },
      },
    });
    expect(found).toContain(
      'profiles.default.servers[0]: no server "githb" in mcpServers. Did you mean "github"? Use a name from mcpServers (filesystem, github, memory) or a pattern with "*".',
    );
    expect(found.some((p) => p.startsWith('profiles.other.tools.deny[0]: no server "nope"'))).toBe(
      true,
    );
    expect(found).toContain(
      'profiles.other.tools.allow[0]: "write_file" is not a tool ref. Write "server.tool"; "*" matches any characters, e.g. "*.write_file" or "write_file.*".',
    );
  });

  it("reads prompts.allow/deny beside tools, checking their refs the same way", () => {
    const config = parse({
      profiles: {
        default: { servers: ["*"] },
        team: { servers: ["github"], prompts: { allow: ["github.review*"], deny: ["*.secret"] } },
      },
    });
    expect(config.profiles.team?.prompts).toEqual({
      allow: ["github.review*"],
      deny: ["*.secret"],
    });
    expect(config.profiles.default?.prompts).toBeUndefined();
    expect(problems({ profiles: { default: { servers: ["*"], prompts: { alow: [] } } } })).toEqual([
      'profiles.default.prompts.alow: unknown key. Did you mean "allow"?',
    ]);
    expect(
      problems({
        profiles: { default: { servers: ["*"], prompts: { deny: ["gthub.x", "review"] } } },
      }),
    ).toEqual([
      'profiles.default.prompts.deny[0]: no server "gthub" in mcpServers. Did you mean "github"? Use a name from mcpServers (filesystem, github, memory) or a pattern with "*".',
      'profiles.default.prompts.deny[1]: "review" is not a prompt ref. Write "server.prompt"; "*" matches any characters, e.g. "*.review" or "review.*".',
    ]);
  });

  it("pageSize: 200 unless set; a number from 1", () => {
    expect(parse({}).pageSize).toBe(200);
    expect(parse({ pageSize: 50 }).pageSize).toBe(50);
    expect(problems({ pageSize: 0 }).some((p) => p.startsWith("pageSize:"))).toBe(true);
  });

  it("accepts disabled servers in profiles", () => {
    const config = parseConfig(
      {
        mcpServers: { a: { command: "a" }, off: { command: "b", disabled: true } },
        profiles: { default: { servers: ["a", "off"] } },
      },
      FILE,
      {},
    );
    expect(config.profiles.default?.servers).toEqual(["a", "off"]);
  });

  it("requires a default profile when profiles are given", () => {
    expect(problems({ profiles: { coding: { servers: ["github"] } } })).toEqual([
      'profiles.default: missing. Unknown callers get this profile: add "default": { "servers": ["*"] }, or { "servers": [] } to show them nothing.',
    ]);
  });

  it("rejects misspelled keys of profiles and auth with suggestions", () => {
    const found = problems({
      profiles: { default: { server: ["*"], tools: { alow: ["*"] }, readonly: true } },
      auth: { token: {} },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'profiles.default.server: unknown key. Did you mean "servers"?',
        'profiles.default.tools.alow: unknown key. Did you mean "allow"?',
        'profiles.default.readonly: unknown key. Did you mean "readOnly"?',
        'auth.token: unknown key. Did you mean "tokens"?',
      ]),
    );
    expect(problems({ profilez: {} })).toEqual(['profilez: unknown key. Did you mean "profiles"?']);
  });

  it("reports a profiles section that is not an object once, not each caller again", () => {
    expect(problems({ profiles: [], callers: { "claude-code": "coding" } })).toEqual([
      "profiles: must be an object.",
    ]);
  });

  it("expands ${VAR} in token keys, treats tokens as secrets and never prints them", () => {
    const config = parse(
      { auth: { tokens: { "${CI_TOKEN}": "ci-bot", "literal-token-1234": "claude-code" } } },
      { CI_TOKEN: "from-the-env-5678" },
    );
    expect([...config.auth!.tokens]).toEqual([
      ["from-the-env-5678", "ci-bot"],
      ["literal-token-1234", "claude-code"],
    ]);
    expect(config.secrets).toEqual(
      expect.arrayContaining(["from-the-env-5678", "literal-token-1234"]),
    );
    const found = problems({
      auth: { tokens: { "${UNSET_TOKEN}": "ci", "literal-secret-xyz": "", "": "x" } },
    });
    expect(found).toEqual([
      "auth.tokens[0]: environment variable UNSET_TOKEN is not set. Set it to the token clients will send.",
      "auth.tokens[1]: the value must be the caller name this token identifies.",
      'auth.tokens[2]: the token is empty. Use a long random value, e.g. "${MCPX_TOKEN}".',
    ]);
    expect(found.join("\n")).not.toContain("literal-secret-xyz");
  });

  it("rejects one token for two callers", () => {
    expect(
      problems(
        { auth: { tokens: { "${A}": "one", "${B}": "two" } } },
        { A: "same-token-value", B: "same-token-value" },
      ),
    ).toEqual([
      'auth.tokens[1]: the same token also maps to caller "one". Give each caller its own token.',
    ]);
  });
});

describe("visibility rules", () => {
  it("matches * across any characters, dots included", () => {
    expect(globToRegExp("filesystem.write_*").test("filesystem.write_file")).toBe(true);
    expect(globToRegExp("filesystem.write_*").test("filesystem.read_file")).toBe(false);
    expect(globToRegExp("*").test("a.b.c")).toBe(true);
    expect(globToRegExp("a.b").test("aXb")).toBe(false);
  });

  it("unknown callers fall back to default", () => {
    const config = parse({
      profiles: { default: { servers: ["memory"] }, coding: { servers: ["github"] } },
      callers: { "claude-code": "coding" },
    });
    expect(profileFor(config, "claude-code").name).toBe("coding");
    expect(profileFor(config, "someone-else").name).toBe("default");
    // Not fooled by inherited object keys.
    expect(profileFor(config, "constructor").name).toBe("default");
  });

  it("shows only listed servers", () => {
    const p = profile({ servers: ["filesystem", "git*"] });
    expect(serverVisible(p, "filesystem")).toBe(true);
    expect(serverVisible(p, "github")).toBe(true);
    expect(serverVisible(p, "memory")).toBe(false);
    expect(toolVisible(p, "memory", tool("read_graph"))).toBe(false);
  });

  it("deny beats allow", () => {
    const p = profile({ tools: { allow: ["filesystem.*"], deny: ["filesystem.write_*"] } });
    expect(toolVisible(p, "filesystem", tool("read_file"))).toBe(true);
    expect(toolVisible(p, "filesystem", tool("write_file"))).toBe(false);
    expect(toolVisible(p, "github", tool("get_me"))).toBe(false);
  });

  it("readOnly hides every tool not annotated readOnlyHint: true", () => {
    const p = profile({ readOnly: true });
    expect(toolVisible(p, "s", tool("read", true))).toBe(true);
    expect(toolVisible(p, "s", tool("write", false))).toBe(false);
    expect(toolVisible(p, "s", tool("unannotated"))).toBe(false);
  });

  it("knows when a profile shows everything", () => {
    expect(unrestricted(profile({}))).toBe(true);
    expect(unrestricted(profile({ tools: { allow: ["*"], deny: [] } }))).toBe(true);
    expect(unrestricted(profile({ readOnly: true }))).toBe(false);
    expect(unrestricted(profile({ servers: ["a"] }))).toBe(false);
  });
});

/** An upstream with a read tool, a write tool and a resource. */
function upstream(name: string): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.registerTool(
    "read_file",
    { description: "Reads.", annotations: { readOnlyHint: true }, inputSchema: {} },
    () => ({ content: [{ type: "text", text: `${name} read` }] }),
  );
  server.registerTool(
    "write_file",
    { description: "Writes.", inputSchema: { content: z.string().optional() } },
    () => ({ content: [{ type: "text", text: `${name} wrote` }] }),
  );
  server.registerResource("info", `${name}://info`, { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, text: `${name} info` }],
  }));
  return server;
}

describe("per-caller catalogs (in memory)", () => {
  let proxy: Proxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  const access = {
    profiles: {
      default: { servers: ["*"] },
      coding: { servers: ["alpha"], tools: { deny: ["alpha.write_*"] } },
      readonly: { servers: ["*"], tools: { allow: ["*"] }, readOnly: true },
    },
    callers: { "claude-code": "coding", "ci-bot": "readonly" },
  };

  async function start(): Promise<Proxy> {
    proxy = memoryProxy(
      { alpha: () => upstream("alpha"), beta: () => upstream("beta") },
      { config: memoryConfig(["alpha", "beta"], access) },
    );
    await proxy.start();
    return proxy;
  }

  it("describe shows only the caller's servers and tools; tools/list is per caller", async () => {
    const p = await start();
    const coding = await connectClient(p, { name: "claude-code" });
    const other = await connectClient(p, { name: "unknown-client" });
    try {
      const [codingDescribe] = (await coding.client.listTools()).tools;
      expect(codingDescribe?.description).toContain("alpha: read_file");
      expect(codingDescribe?.description).not.toContain("write_file");
      expect(codingDescribe?.description).not.toContain("beta");
      const [otherDescribe] = (await other.client.listTools()).tools;
      expect(otherDescribe?.description).toContain("alpha: read_file, write_file");
      expect(otherDescribe?.description).toContain("beta: read_file, write_file");

      const catalog = text(await coding.client.callTool({ name: "describe", arguments: {} }));
      expect(catalog).toContain("alpha.read_file");
      expect(catalog).not.toContain("alpha.write_file");
      expect(catalog).not.toContain("beta");
      const search = text(
        await coding.client.callTool({ name: "describe", arguments: { query: "write" } }),
      );
      expect(search).not.toContain("write_file");
    } finally {
      await coding.close();
      await other.close();
    }
  });

  it("refuses calls outside the profile exactly like calls to tools that do not exist", async () => {
    const p = await start();
    const { client, close } = await connectClient(p, { caller: "claude-code" });
    const call = async (method: string) => {
      const r = await client.callTool({ name: "call", arguments: { method } });
      return { isError: r.isError, text: text(r) };
    };
    try {
      expect(await call("alpha.read_file")).toEqual({ isError: undefined, text: "alpha read" });
      // The same words a tool that does not exist gets; suggestions come from visible tools only.
      const hiddenTool = await call("alpha.write_file");
      const missingTool = await call("alpha.wrote_file");
      expect(hiddenTool.isError).toBe(true);
      expect(hiddenTool.text).toBe(
        'Unknown tool "write_file" on server "alpha". Did you mean "alpha.read_file"? describe("alpha") lists its tools.',
      );
      expect(missingTool.text).toBe(hiddenTool.text.replace("write_file", "wrote_file"));
      const hiddenServer = await call("beta.read_file");
      const missingServer = await call("gamma.read_file");
      expect(hiddenServer.isError).toBe(true);
      expect(hiddenServer.text.replace('"beta"', "X")).toBe(
        missingServer.text.replace('"gamma"', "X"),
      );
      // No hint of hidden names, not even as a suggestion.
      expect(hiddenServer.text).not.toMatch(/Did you mean/);
      expect(hiddenServer.text).not.toContain("beta.");
      const describeHidden = await client.callTool({
        name: "describe",
        arguments: { method: "alpha.write_file" },
      });
      expect(describeHidden.isError).toBe(true);
      expect(text(describeHidden)).not.toContain("alpha.write_file\n");
    } finally {
      await close();
    }
  });

  it("readOnly hides write tools from describe and call", async () => {
    const p = await start();
    const { client, close } = await connectClient(p, { caller: "ci-bot" });
    try {
      const [d] = (await client.listTools()).tools;
      expect(d?.description).toContain("alpha: read_file\n");
      expect(d?.description).toContain("beta: read_file");
      const r = await client.callTool({
        name: "call",
        arguments: { method: "beta.write_file", arguments: {} },
      });
      expect(r.isError).toBe(true);
      expect(text(r)).toContain('Unknown tool "write_file"');
    } finally {
      await close();
    }
  });

  it("resources lists and reads only the caller's servers", async () => {
    const p = await start();
    const { client, close } = await connectClient(p, { caller: "claude-code" });
    try {
      const list = text(await client.callTool({ name: "resources", arguments: {} }));
      expect(list).toContain("alpha://info");
      expect(list).not.toContain("beta://");
      const read = await client.callTool({ name: "resources", arguments: { uri: "beta://info" } });
      expect(read.isError).toBe(true);
      const named = await client.callTool({
        name: "resources",
        arguments: { server: "beta", uri: "beta://info" },
      });
      expect(named.isError).toBe(true);
      expect(text(named)).toBe('Unknown server "beta". Servers: alpha.');
    } finally {
      await close();
    }
  });

  it("logs each call with caller, server, tool, duration and outcome, never arguments", async () => {
    const lines: string[] = [];
    proxy = memoryProxy(
      { alpha: () => upstream("alpha"), beta: () => upstream("beta") },
      { config: memoryConfig(["alpha", "beta"], access), logger: quietLogger(lines) },
    );
    await proxy.start();
    const { client, close } = await connectClient(proxy, { caller: "claude-code" });
    try {
      await client.callTool({ name: "call", arguments: { method: "alpha.read_file" } });
      await client.callTool({
        name: "call",
        arguments: { method: "alpha.write_file", arguments: { content: "top-secret-argument" } },
      });
    } finally {
      await close();
    }
    const calls = lines.filter((l) => l.includes(" INFO call "));
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(
      /INFO call alpha\.read_file by claude-code: ok in [\d.]+ ms \{"caller":"claude-code","server":"alpha","tool":"read_file","outcome":"ok"\}/,
    );
    expect(calls[1]).toContain('"outcome":"refused"');
    expect(lines.join("")).not.toContain("top-secret-argument");
  });
});

describe.each(ERAS)("reload (in memory, %s client)", (era) => {
  let proxy: Proxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it("swaps profiles and servers, and tells only the clients whose view changed", async () => {
    const access = {
      profiles: { default: { servers: ["alpha"] }, coding: { servers: ["alpha", "beta"] } },
      callers: { "claude-code": "coding" },
    };
    let gammaSessions = 0;
    proxy = memoryProxy(
      {
        alpha: () => upstream("alpha"),
        beta: () => upstream("beta"),
        gamma: () => {
          gammaSessions += 1;
          return upstream("gamma");
        },
      },
      { config: memoryConfig(["alpha", "beta"], access) },
    );
    await proxy.start();
    const coding = await connectClient(proxy, { caller: "claude-code", era });
    const plain = await connectClient(proxy, { caller: "someone", era });
    const notified = { coding: 0, plain: 0 };
    await onToolsChanged(coding.client, () => {
      notified.coding += 1;
    });
    await onToolsChanged(plain.client, () => {
      notified.plain += 1;
    });
    try {
      await coding.client.listTools();
      await plain.client.listTools();
      // beta goes, gamma comes; only coding's view changes.
      await proxy.reload(
        memoryConfig(["alpha", "gamma"], {
          ...access,
          profiles: { ...access.profiles, coding: { servers: ["*"] } },
        }),
      );
      expect(gammaSessions).toBeGreaterThan(0);
      expect(proxy.context.registry.servers().map((s) => s.name)).toEqual(["alpha", "gamma"]);
      const [d] = (await coding.client.listTools()).tools;
      expect(d?.description).toContain("gamma: read_file, write_file");
      expect(d?.description).not.toContain("beta");
      // In-memory transports deliver in order: a notification sent would have arrived by now
      // (a round trip, not the client's cached list).
      await plain.client.listTools(undefined, { cacheMode: "bypass" });
      expect(notified.coding).toBeGreaterThan(0);
      expect(notified.plain).toBe(0);
      expect(
        text(
          await coding.client.callTool({ name: "call", arguments: { method: "gamma.read_file" } }),
        ),
      ).toBe("gamma read");
      const gone = await coding.client.callTool({
        name: "call",
        arguments: { method: "beta.read_file" },
      });
      expect(text(gone)).toBe('Unknown server "beta". Servers: alpha, gamma.');
    } finally {
      await coding.close();
      await plain.close();
    }
  });
});
