/** Every client format as mcpx reads it: detection, each client's variables and keys, scopes. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { convertSource, readSource, type Conversion } from "../../src/config/formats/read.js";
import { ConfigError, loadConfig, type Config, type UpstreamSpec } from "../../src/config/load.js";
import { ROOT } from "../helpers/proxy.js";
import { fixtureEnv, SECRETS, workspace, type Fixture } from "../helpers/client-files.js";
import { tempDir } from "../helpers/temp.js";

function converted(fixture: Fixture, options: { project?: string } = {}) {
  const ws = workspace();
  const file = ws.place(fixture);
  const read = { home: ws.home, project: options.project ?? ws.project };
  const c = convertSource(readSource(file, read), read);
  return { ws, file, c, servers: c.raw.mcpServers as Record<string, Record<string, unknown>> };
}

function load(
  fixture: Fixture,
  env = fixtureEnv(),
): { config: Config; file: string; home: string; project: string } {
  const ws = workspace();
  const file = ws.place(fixture);
  return {
    config: loadConfig(file, env, { home: ws.home, project: ws.project }),
    file,
    home: ws.home,
    project: ws.project,
  };
}

function spec(config: Config, name: string): UpstreamSpec {
  const s = config.servers.find((x) => x.name === name);
  if (!s) throw new Error(`no server ${name} in ${config.servers.map((x) => x.name).join(", ")}`);
  return s.spec;
}

function stdio(s: UpstreamSpec) {
  if (s.transport !== "stdio") throw new Error("expected stdio");
  return s;
}

function remote(s: UpstreamSpec) {
  if (s.transport === "stdio") throw new Error("expected http or sse");
  return s;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("did not throw a ConfigError");
}

describe("detecting the format", () => {
  it.each([
    ["claude-code.mcp.json", "claude-code"],
    ["claude.json", "claude-code"],
    ["claude_desktop_config.json", "claude-desktop"],
    ["cursor.mcp.json", "cursor"],
    ["vscode.mcp.json", "vscode"],
    ["gemini.settings.json", "gemini"],
    ["codex.config.toml", "codex"],
  ] as const)("%s where its client keeps it → %s", (fixture, format) => {
    expect(converted(fixture).c.format).toBe(format);
  });

  it.each([
    [{ mcpServers: { s: { command: "x" } }, preferences: {} }, "claude-desktop"],
    [{ servers: { s: { type: "stdio", command: "x" } } }, "vscode"],
    [{ theme: "Default", mcpServers: { s: { command: "x" } } }, "gemini"],
    [{ mcpServers: { s: { httpUrl: "https://e.example/mcp" } } }, "gemini"],
    [{ numStartups: 1, mcpServers: {} }, "claude-code"],
    [{ mcpServers: { s: { command: "x", env: { T: "${env:T}" } } } }, "cursor"],
    [{ mcpServers: { s: { command: "x" } }, callTimeout: 1000 }, "mcpx"],
  ] as const)("by its shape when the name says nothing: %j → %s", (doc, format) => {
    const file = path.join(tempDir(), "some-config.json");
    writeFileSync(file, JSON.stringify(doc));
    expect(readSource(file).format).toBe(format);
  });

  it("takes --format over detection", () => {
    const file = path.join(tempDir(), "x.json");
    writeFileSync(file, JSON.stringify({ mcpServers: { s: { command: "x", args: ["${A}"] } } }));
    expect(readSource(file, { format: "claude-desktop" }).format).toBe("claude-desktop");
  });

  it("names every format it reads when a file is none of them", () => {
    const file = path.join(tempDir(), "package.json");
    writeFileSync(file, JSON.stringify({ name: "not-a-config", version: "1.0.0" }));
    const problems = problemsOf(() => loadConfig(file, {}));
    const formats = problems.find((p) => p.startsWith("(root): not a config mcpx knows"));
    for (const name of [
      "Claude Code",
      "Claude Desktop",
      "Cursor",
      "VS Code",
      "Gemini CLI",
      "Codex",
    ]) {
      expect(formats).toContain(name);
    }
  });

  it("reports the place of a syntax error, never the text around it", () => {
    const dir = tempDir();
    const json = path.join(dir, "mcp.json");
    writeFileSync(json, '{ "servers": { "s": { "env": { "T": "sk-live-123" } } ');
    expect(problemsOf(() => loadConfig(json, {}))[0]).toMatch(
      /^not valid JSON at line 1, column \d+\. Fix the syntax\.$/,
    );
    const toml = path.join(dir, "config.toml");
    writeFileSync(toml, '[mcp_servers.s]\ncommand = "sk-live-123\n');
    const p = problemsOf(() => loadConfig(toml, {}))[0]!;
    expect(p).toMatch(/^not valid TOML at line 2, column \d+\. Fix the syntax\.$/);
    expect(p).not.toContain("sk-live");
  });

  // Found by the config fuzz (test/fuzz/config.test.ts): null threw TypeError ("Cannot read
  // properties of null").
  it.each(["null", "[]", "3", '"text"'])(
    "mcpx.json holding %s: a ConfigError asking for an object",
    (text) => {
      const file = path.join(tempDir(), "mcpx.json");
      writeFileSync(file, text);
      expect(problemsOf(() => loadConfig(file, {}))).toEqual([
        expect.stringContaining("(root): must be a JSON object"),
      ]);
    },
  );

  // Found by the config fuzz (test/fuzz/config.test.ts): a TypeError ("Cannot use 'in'
  // operator") instead of the problem's key path.
  it.each([
    ["claude_desktop_config.json", '{"mcpServers":{"s":false}}', "mcpServers.s"],
    [".mcp.json", '{"mcpServers":{"s":7}}', "mcpServers.s"],
    ["mcp.json", '{"servers":{"s":"text"}}', "servers.s"],
    ["settings.json", '{"mcpServers":{"s":null}}', "mcpServers.s"],
    ["config.toml", "mcp_servers.s = 3\n", "mcp_servers.s"],
  ])("%s with a server that is not an object: a ConfigError naming it", (name, text, at) => {
    const file = path.join(tempDir(), name);
    writeFileSync(file, text);
    expect(problemsOf(() => loadConfig(file, {})).join("\n")).toContain(at);
  });
});

describe("Claude Code", () => {
  it(".mcp.json: ${VAR} and ${VAR:-default} as mcpx has them; a pre-registered oauth client moves", () => {
    const { c, servers } = converted("claude-code.mcp.json");
    expect(servers.echo!.env).toEqual({
      API_TOKEN: "${MCPX_FIXTURE_TOKEN}",
      MODE: "${MCPX_FIXTURE_MODE:-plain}",
    });
    expect(c.scope).toBe("project");
    expect(c.report.unsupported).toEqual([]);
    expect(servers.remote!.oauth).toEqual({ clientId: "mcpx-test" });
    expect(c.report.dropped).toEqual([
      { name: "memory", key: "alwaysLoad", why: "mcpx always lists every tool in its catalog" },
    ]);
    expect(servers.memory).not.toHaveProperty("alwaysLoad");
  });

  it("~/.claude.json: user scope plus this project's local scope, local winning", () => {
    const { c, servers, ws } = converted("claude.json");
    expect(Object.keys(servers).sort()).toEqual(["echo", "shadowed"]);
    expect(servers.shadowed!.args).toEqual([
      path.join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js"),
    ]);
    expect(c.origin!.keyPath("shadowed")).toEqual([
      "projects",
      ws.project,
      "mcpServers",
      "shadowed",
    ]);
    expect(c.report.notes.join("\n")).toContain("local-scope entry");
  });

  it("~/.claude.json with --project naming another project reads that one's local servers", () => {
    const { servers } = converted("claude.json", { project: "/some/other/project" });
    expect(Object.keys(servers).sort()).toEqual(["echo", "elsewhere", "shadowed"]);
    expect(servers.shadowed!.args).toEqual([
      path.join(ROOT, "test/fixtures/upstreams/faulty.mjs"),
      "user-scope",
    ]);
  });
});

describe("Claude Desktop", () => {
  it("expands nothing: a literal ${...} stays text; invalid names are renamed", () => {
    const { config } = load("claude_desktop_config.json");
    expect(stdio(spec(config, "echo")).args[1]).toBe("--label=${NOT_EXPANDED}");
    expect(stdio(spec(config, "echo")).env).toEqual({ API_TOKEN: SECRETS.desktopLiteral });
    expect(config.servers.map((s) => s.name)).toEqual(["echo", "my_memory"]);
    expect(config.warnings).toContain(
      'mcpServers.my memory: renamed "my_memory" (server names may use only letters, digits, "_" and "-").',
    );
    expect(config.secrets).toContain(SECRETS.desktopLiteral);
  });
});

describe("Cursor", () => {
  it("${env:NAME}, ${userHome}, ${workspaceFolder}, envFile and url-only entries", () => {
    const { config, home, project } = load("cursor.mcp.json");
    const echo = stdio(spec(config, "echo"));
    expect(echo.args).toEqual([path.join(project, "test/fixtures/upstreams/faulty.mjs")]);
    expect(echo.env).toEqual({
      FROM_ENV_FILE: SECRETS.envFile,
      API_TOKEN: SECRETS.token,
      HOME_DIR: home,
    });
    const r = remote(spec(config, "remote"));
    expect(r.transport).toBe("http");
    expect(r.headers).toEqual({ "X-Api-Key": SECRETS.token });
    expect(config.secrets).toEqual(expect.arrayContaining([SECRETS.token, SECRETS.envFile]));
  });

  it("writes ${env:NAME} as a ${NAME} reference, not its value", () => {
    const { servers } = converted("cursor.mcp.json");
    expect(servers.echo!.env).toMatchObject({ API_TOKEN: "${MCPX_FIXTURE_TOKEN}" });
  });

  it("names a variable mcpx cannot honour", () => {
    const dir = tempDir();
    const file = path.join(dir, ".cursor", "mcp.json");
    mkdirSync(path.dirname(file));
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { s: { command: "x", args: ["${command:pick}"] } } }),
    );
    expect(problemsOf(() => loadConfig(file, {}))).toEqual([
      "mcpServers.s.args[0]: ${command:pick} is not supported by mcpx (it supports ${env:NAME}, ${input:id}, ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename}, ${pathSeparator}). Replace it with a value or ${env:NAME}.",
    ]);
  });
});

describe("VS Code", () => {
  it("servers and inputs (JSONC): ${input:id} from MCPX_INPUT_<ID>, envFile, dev left out, sandbox kept with VS Code", () => {
    const { config, project } = load("vscode.mcp.json");
    expect(config.servers.map((s) => s.name)).toEqual(["echo", "memory"]);
    const echo = stdio(spec(config, "echo"));
    expect(echo.args).toEqual([path.join(project, "test/fixtures/upstreams/faulty.mjs")]);
    expect(echo.env).toEqual({
      FROM_ENV_FILE: SECRETS.envFile,
      API_TOKEN: SECRETS.input,
      OTHER: SECRETS.token,
    });
    expect(config.warnings).toContain(
      "servers.memory.dev: left out (VS Code's development mode; mcpx restarts nothing on file changes).",
    );
    expect(config.warnings).toContain(
      "servers.boxed: not served by mcpx: sandboxEnabled: mcpx cannot run the server in VS Code's sandbox.",
    );
  });
});

describe("Gemini CLI", () => {
  it("$VAR and ${VAR}, httpUrl as streamable HTTP, includeTools/excludeTools, mcp.excluded", () => {
    const { config } = load("gemini.settings.json");
    expect(config.servers.map((s) => s.name)).toEqual(["echo", "remote"]);
    expect(stdio(spec(config, "echo")).env).toEqual({
      API_TOKEN: SECRETS.token,
      MODE: "fixture-mode",
    });
    expect(config.servers[0]!.timeoutMs).toBe(30_000);
    expect(config.servers[0]!.tools).toEqual({
      include: ["echo", "slow", "hang"],
      exclude: ["hang"],
    });
    const r = remote(spec(config, "remote"));
    expect(r.transport).toBe("http");
    expect(r.headers).toEqual({ Authorization: `Bearer ${SECRETS.token}` });
    expect(config.warnings).toContain("mcpServers.skipped: disabled; skipped.");
  });

  it("url alone is SSE, as in Gemini", () => {
    const file = path.join(tempDir(), ".gemini", "settings.json");
    mkdirSync(path.dirname(file));
    writeFileSync(file, JSON.stringify({ mcpServers: { s: { url: "http://127.0.0.1:1/sse" } } }));
    expect(spec(loadConfig(file, {}), "s").transport).toBe("sse");
  });
});

describe("Codex", () => {
  it("env_vars, bearer_token_env_var, enabled_tools/disabled_tools, tool_timeout_sec; values are literal", () => {
    const { config } = load("codex.config.toml");
    const echo = stdio(spec(config, "echo"));
    expect(echo.env).toEqual({
      MODE: "literal-${NOT_EXPANDED}",
      MCPX_FIXTURE_TOKEN: SECRETS.token,
    });
    expect(config.servers[0]!.timeoutMs).toBe(30_000);
    expect(config.servers[0]!.tools).toEqual({
      include: ["echo", "fail", "slow"],
      exclude: ["fail"],
    });
    expect(remote(spec(config, "remote")).headers).toEqual({
      Authorization: `Bearer ${SECRETS.token}`,
    });
  });

  it("an env_vars name that is unset is passed empty, as Codex passes nothing", () => {
    const { config } = load("codex.config.toml", { ...fixtureEnv(), MCPX_FIXTURE_TOKEN: "" });
    expect(stdio(spec(config, "echo")).env.MCPX_FIXTURE_TOKEN).toBe("");
  });
});

describe("import reports", () => {
  it.each([
    "claude-code.mcp.json",
    "claude.json",
    "claude_desktop_config.json",
    "cursor.mcp.json",
    "vscode.mcp.json",
    "gemini.settings.json",
    "codex.config.toml",
  ] as const)("%s: every server is kept, renamed or named as not moved", (fixture) => {
    const { c, file, ws } = converted(fixture);
    const accounted = (x: Conversion) => x.report.kept.length + x.report.unsupported.length;
    const { doc } = readSource(file, { home: ws.home });
    const table = (doc.mcpServers ?? doc.servers ?? doc.mcp_servers) as Record<string, unknown>;
    // ~/.claude.json: this project's local "shadowed" replaces the user's, so the count holds.
    expect(accounted(c)).toBe(Object.keys(table).length);
    expect(c.problems).toEqual([]);
  });
});

describe("an untrusted client file's place variables", () => {
  const place = (name: string, doc: unknown) => {
    const dir = tempDir();
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(doc));
    return { dir, file };
  };

  it.each([
    [".cursor/mcp.json", "mcpServers", "url", "https://api.example/${userHome}/mcp"],
    [".cursor/mcp.json", "mcpServers", "headers", { "X-Where": "${workspaceFolder}" }],
    [".vscode/mcp.json", "servers", "url", "https://api.example/mcp?p=${workspaceFolderBasename}"],
    [".vscode/mcp.json", "servers", "headers", { "X-Where": "${cwd}" }],
  ])("%s: refused in %s's %s", (name, key, field, value) => {
    const { dir, file } = place(name, {
      [key]: { r: { type: "http", url: "https://api.example/mcp", [field]: value } },
    });
    const options = { home: path.join(dir, "home"), project: dir };
    const problems = problemsOf(() => loadConfig(file, {}, { ...options, untrusted: true }));
    expect(problems.join("\n")).toMatch(
      new RegExp(`${key}\\.r\\.${field}.*is refused: it is a path on this machine`),
    );
    // Trusted, the same file loads: the variable becomes the path, as the client would send it.
    expect(loadConfig(file, {}, options).servers).toHaveLength(1);
  });

  it("stay allowed in a stdio server's arguments of a trusted file", () => {
    const { dir, file } = place(".cursor/mcp.json", {
      mcpServers: { l: { command: "node", args: ["${workspaceFolder}/server.js"] } },
    });
    const config = loadConfig(file, {}, { home: dir, project: dir });
    expect((config.servers[0]!.spec as { args: string[] }).args).toEqual([`${dir}/server.js`]);
  });
});
