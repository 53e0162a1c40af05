/**
 * Issue 14's "today" list, each through loadConfig and the profile rules as the proxy applies
 * them (only APIs that existed before the fix, so these tests ran, and failed, against it).
 */
import { writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type Config } from "../../src/config/load.js";
import { toolVisible } from "../../src/registry/profiles.js";
import { tempDir } from "../helpers/temp.js";

function write(rel: string, doc: unknown): string {
  const file = path.join(tempDir(), rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof doc === "string" ? doc : JSON.stringify(doc, null, 2));
  return file;
}

function stdioEnv(config: Config, server: string): Record<string, string> {
  const spec = config.servers.find((s) => s.name === server)?.spec;
  if (spec?.transport !== "stdio") throw new Error(`${server} is not a stdio server`);
  return spec.env;
}

const tool = (name: string) => ({ name, inputSchema: { type: "object" } });

describe("configs people already have, as mcpx reads them now", () => {
  it("expands Cursor's ${env:NAME} instead of passing it on as text", () => {
    const file = write(".cursor/mcp.json", {
      mcpServers: { s: { command: "node", env: { TOKEN: "${env:MCPX_T}" } } },
    });
    expect(stdioEnv(loadConfig(file, { MCPX_T: "from-env" }), "s").TOKEN).toBe("from-env");
  });

  it("resolves ${userHome} instead of failing with 'environment variable userHome is not set'", () => {
    const file = write(".cursor/mcp.json", {
      mcpServers: { s: { command: "node", args: ["${userHome}/server.js"] } },
    });
    const spec = loadConfig(file, {}).servers[0]!.spec;
    expect(spec.transport === "stdio" && spec.args[0]).toBe(`${os.homedir()}/server.js`);
  });

  it("reads VS Code's ${input:id} from MCPX_INPUT_<ID>, and names it when unset", () => {
    const doc = {
      inputs: [{ type: "promptString", id: "api-key", description: "The key", password: true }],
      servers: { s: { type: "stdio", command: "node", env: { KEY: "${input:api-key}" } } },
    };
    const file = write(".vscode/mcp.json", doc);
    expect(stdioEnv(loadConfig(file, { MCPX_INPUT_API_KEY: "k" }), "s").KEY).toBe("k");
    let err: unknown;
    try {
      loadConfig(file, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      "servers.s.env.KEY: VS Code input ${input:api-key} (The key) has no value. Set the environment variable MCPX_INPUT_API_KEY; mcpx cannot prompt for it as VS Code does.",
    ]);
  });

  it("ignores a client's own top-level keys (Claude Desktop preferences, Gemini theme)", () => {
    const desktop = write("claude_desktop_config.json", {
      mcpServers: { s: { command: "node" } },
      preferences: { menuBarEnabled: false },
    });
    expect(loadConfig(desktop, {}).servers.map((s) => s.name)).toEqual(["s"]);
    const gemini = write(".gemini/settings.json", {
      theme: "Default",
      selectedAuthType: "gemini-api-key",
      mcpServers: { s: { command: "node" } },
    });
    expect(loadConfig(gemini, {}).servers.map((s) => s.name)).toEqual(["s"]);
  });

  it("keeps mcpx's own files strict", () => {
    const file = write("mcpx.json", { mcpServer: {}, mcpServers: { s: { command: "node" } } });
    expect(() => loadConfig(file, {})).toThrow(
      'mcpServer: unknown key. Did you mean "mcpServers"?',
    );
  });

  it("parses VS Code's JSONC (comments, trailing commas)", () => {
    const file = write(
      ".vscode/mcp.json",
      '{\n  // a comment\n  "servers": { "s": { "type": "stdio", "command": "node", }, },\n}\n',
    );
    expect(loadConfig(file, {}).servers.map((s) => s.name)).toEqual(["s"]);
  });

  it("hides what Gemini's excludeTools excludes and shows only what includeTools includes", () => {
    const file = write(".gemini/settings.json", {
      mcpServers: {
        s: { command: "node", includeTools: ["read", "write"], excludeTools: ["write"] },
        t: { command: "node2" },
      },
    });
    const profile = loadConfig(file, {}).profiles.default!;
    expect(toolVisible(profile, "s", tool("read"))).toBe(true);
    expect(toolVisible(profile, "s", tool("write"))).toBe(false);
    expect(toolVisible(profile, "s", tool("delete"))).toBe(false);
    expect(toolVisible(profile, "t", tool("anything"))).toBe(true);
  });

  it("honours includeTools/excludeTools in an mcpx file too, instead of warning and exposing", () => {
    const file = write("mcpx.json", {
      mcpServers: { s: { command: "node", excludeTools: ["drop_table"] } },
    });
    const config = loadConfig(file, {});
    expect(toolVisible(config.profiles.default!, "s", tool("drop_table"))).toBe(false);
    expect(config.warnings.join("\n")).not.toContain("excludeTools");
  });

  it("reads envFile instead of ignoring it", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "server.env"), "FROM_FILE=file-value\nBOTH=file\n");
    const file = path.join(dir, "mcpx.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { s: { command: "node", envFile: "server.env", env: { BOTH: "entry" } } },
      }),
    );
    expect(stdioEnv(loadConfig(file, {}), "s")).toEqual({ FROM_FILE: "file-value", BOTH: "entry" });
  });

  it("reads Codex's config.toml", () => {
    const file = write(
      ".codex/config.toml",
      '[mcp_servers.s]\ncommand = "node"\nargs = ["x.js"]\n\n[mcp_servers.r]\nurl = "https://example.com/mcp"\nbearer_token_env_var = "T"\n',
    );
    const config = loadConfig(file, { T: "t0ken" });
    expect(config.servers.map((s) => s.name)).toEqual(["s", "r"]);
    const r = config.servers[1]!.spec;
    expect(r.transport !== "stdio" && r.headers).toEqual({ Authorization: "Bearer t0ken" });
  });
});
