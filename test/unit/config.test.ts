import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { expandTracked, expandVars, MissingVariableError } from "../../src/config/expand.js";
import {
  ConfigError,
  DEFAULTS,
  loadConfig,
  parseConfig,
  type Config,
  type UpstreamSpec,
} from "../../src/config/load.js";
import { FOREIGN_SERVER_KEYS, SERVER_KEYS, TOP_KEYS } from "../../src/config/schema.js";
import { nearest, suggest } from "../../src/config/suggest.js";
import { ProxyError } from "../../src/errors.js";

const FILE = path.resolve("/configs/team/mcpx.json");
const ROOT = path.resolve(import.meta.dirname, "../..");
type Env = Record<string, string | undefined>;

function parse(raw: unknown, env: Env = {}): Config {
  return parseConfig(raw, FILE, env);
}

/** The ConfigError parseConfig throws for `raw`; fails the test when it does not throw one. */
function configError(raw: unknown, env: Env = {}): ConfigError {
  try {
    parseConfig(raw, FILE, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("parseConfig did not throw");
}

function problems(raw: unknown, env: Env = {}): string[] {
  return configError(raw, env).problems;
}

/** The only server of a config with one entry. */
function only(entry: unknown, env: Env = {}, top: Record<string, unknown> = {}) {
  const config = parse({ ...top, mcpServers: { s: entry } }, env);
  expect(config.servers).toHaveLength(1);
  return config.servers[0]!;
}

function stdio(spec: UpstreamSpec) {
  if (spec.transport !== "stdio") throw new Error(`expected stdio, got ${spec.transport}`);
  return spec;
}

function remote(spec: UpstreamSpec) {
  if (spec.transport === "stdio") throw new Error("expected http or sse, got stdio");
  return spec;
}

describe("loadConfig", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "mcpx-config-test-"));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function write(name: string, text: string): string {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  }

  function loadError(file: string, env: Env = {}): ConfigError {
    try {
      loadConfig(file, env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return err as ConfigError;
    }
    throw new Error("loadConfig did not throw");
  }

  it("loads a valid file and records its absolute path", () => {
    const file = write(
      "ok.json",
      JSON.stringify({ mcpServers: { memory: { command: "npx", args: ["server-memory"] } } }),
    );
    const config = loadConfig(path.relative(process.cwd(), file), {});
    expect(config.file).toBe(file);
    expect(config.servers.map((s) => s.name)).toEqual(["memory"]);
  });

  // Found by the config fuzz (test/fuzz/config.test.ts): jsonc-parser overflowed its stack and
  // mcpx died with "fatal: Maximum call stack size exceeded".
  it.each([
    ["mcpx.json", 100_000, (a: string) => `{"mcpServers":{"a":{"command":"node","args":${a}}}}`],
    [".mcp.json", 100_000, (a: string) => `{"mcpServers":{"a":{"command":"node","args":${a}}}}`],
    // smol-toml refuses 1,000 levels itself (a syntax error); 500 reach mcpx's checks.
    ["config.toml", 500, (a: string) => `[mcp_servers.a]\ncommand = "node"\nargs = ${a}\n`],
  ])("refuses a %s nested %i deep with a ConfigError naming the depth", (name, depth, text) => {
    const deep = `${"[".repeat(depth)}1${"]".repeat(depth)}`;
    const err = loadError(write(name, text(deep)));
    expect(err.problems).toEqual([expect.stringContaining("nested more than 64 levels deep")]);
    // 64 levels in all is still a config.
    const shallow = `${"[".repeat(60)}"x"${"]".repeat(60)}`;
    expect(loadError(write(name, text(shallow))).message).not.toContain("nested");
  });

  it("reports a missing file with its absolute path and what to pass instead", () => {
    const missing = path.join(dir, "nope.json");
    const err = loadError(missing);
    expect(err.file).toBe(missing);
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toContain("file not found");
    expect(err.problems[0]).toContain('"mcpServers"');
    expect(err.message).toContain(missing);
  });

  it("reports a folder given as the config as a folder", () => {
    const err = loadError(dir);
    expect(err.problems[0]).toContain("is a folder, not a file");
    expect(err.problems[0]).not.toContain("permissions");
  });

  it("names the installed example in a file-not-found problem, a path that exists", () => {
    const problem = loadError(path.join(dir, "missing.json")).problems[0]!;
    const example = /e\.g\. (\S+), shipped with mcpx/.exec(problem)?.[1];
    expect(example && path.isAbsolute(example) && existsSync(example)).toBe(true);
  });

  it("reports the first JSON error where JSON.parse finds it, not where parsing gave up", () => {
    // A trailing comma on line 3 and a missing closing brace: the lenient parser trips at line 5.
    const file = write("late.json", '{\n  "mcpServers": {\n    "a": { "command": "x" },\n  }\n');
    const problem = loadError(file).problems[0]!;
    expect(problem).toMatch(/^not valid JSON at line 4, column 3 \(PropertyNameExpected; then /);
    expect(problem).toContain("at line 5, column 1");
  });

  it("reports invalid JSON, saying comments and trailing commas are not allowed", () => {
    const file = write(
      "bad.json",
      '{ "mcpServers": {\n  "a": { "command": "tok-LITERAL-1234", } } }',
    );
    const err = loadError(file);
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatch(/^not valid JSON at line 2, column \d+\. /);
    // Only the place: the parser's message may quote the file, which may hold a literal token.
    expect(err.message).not.toContain("tok-LITERAL-1234");
    expect(err.problems[0]).toContain("trailing commas are not allowed");
  });

  it("resolves cwd relative to the config file's directory", () => {
    const file = write(
      "nested/deeper/mcpx.json",
      JSON.stringify({
        mcpServers: {
          rel: { command: "x", cwd: "../work" },
          dot: { command: "x", cwd: "." },
          abs: { command: "x", cwd: "/opt/abs" },
          none: { command: "x" },
        },
      }),
    );
    const specs = loadConfig(file, {}).servers.map((s) => stdio(s.spec));
    expect(specs[0]!.cwd).toBe(path.join(dir, "nested", "work"));
    expect(specs[1]!.cwd).toBe(path.join(dir, "nested", "deeper"));
    expect(specs[2]!.cwd).toBe(path.resolve("/opt/abs"));
    expect("cwd" in specs[3]!).toBe(false);
  });

  it.each(["config.example.json", "examples/npx.json"])("loads the example %s", (name) => {
    const config = loadConfig(path.join(ROOT, name), {});
    expect(config.servers.length).toBeGreaterThan(0);
    expect(config.warnings).toEqual([]);
  });

  it("expands variables from the env it is given, not process.env", () => {
    const file = write(
      "vars.json",
      JSON.stringify({ mcpServers: { a: { command: "${MCPX_TEST_CMD}" } } }),
    );
    expect(stdio(loadConfig(file, { MCPX_TEST_CMD: "my-server" }).servers[0]!.spec).command).toBe(
      "my-server",
    );
    expect(loadError(file, {}).problems[0]).toContain("MCPX_TEST_CMD");
  });
});

describe("parseConfig: the shape of the file", () => {
  it.each([
    ["an array", []],
    ["a string", "mcpServers"],
    ["null", null],
    ["a number", 1],
  ])("rejects a root that is %s", (_label, raw) => {
    const p = problems(raw);
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^\(root\): must be a JSON object/);
  });

  it("is a ProxyError with code CONFIG_INVALID whose message lists each problem", () => {
    const err = configError({});
    expect(err).toBeInstanceOf(ProxyError);
    expect(err.code).toBe("CONFIG_INVALID");
    expect(err.name).toBe("ConfigError");
    expect(err.file).toBe(FILE);
    expect(err.message).toContain(`invalid config ${FILE}:`);
    for (const p of err.problems) expect(err.message).toContain(`  - ${p}`);
  });

  it("reports a missing mcpServers with an example, and names the formats mcpx reads", () => {
    const p = problems({});
    expect(p).toHaveLength(2);
    expect(p[0]).toMatch(/^mcpServers: missing\. /);
    expect(p[0]).toContain('"command"');
    expect(p[1]).toMatch(
      /^\(root\): not a config mcpx knows\. mcpx reads: mcpx .*Codex config\.toml/,
    );
  });

  it("reports an empty mcpServers", () => {
    expect(problems({ mcpServers: {} })).toEqual([
      "mcpServers: is empty. Add at least one server; a proxy with no servers has nothing to offer.",
    ]);
  });

  it("reports an mcpServers that is not an object", () => {
    expect(problems({ mcpServers: [] })).toEqual(["mcpServers: must be an object."]);
    expect(problems({ mcpServers: "x" })).toEqual(["mcpServers: must be an object."]);
  });

  it("suggests the right name for a misspelled top-level key", () => {
    const p = problems({ mcpServer: { a: { command: "x" } } });
    expect(p).toContain('mcpServer: unknown key. Did you mean "mcpServers"?');
  });

  it("suggests a top-level key case-insensitively", () => {
    const p = problems({ mcpServers: { a: { command: "x" } }, calltimeout: 5 });
    expect(p).toEqual(['calltimeout: unknown key. Did you mean "callTimeout"?']);
  });

  it("lists the known keys when an unknown top-level key is close to none", () => {
    const p = problems({ mcpServers: { a: { command: "x" } }, zzzzzz: true });
    expect(p).toHaveLength(1);
    expect(p[0]).toContain("zzzzzz: unknown key. Known keys here: ");
    for (const key of TOP_KEYS) expect(p[0]).toContain(key);
  });

  it("reports every problem of a file at once", () => {
    const p = problems({
      mcpServers: {
        "bad.name": { command: "x" },
        good: { comand: "x", args: [] },
        remote: { url: "ftp://x" },
      },
      extra: 1,
    });
    expect(p.some((m) => m.startsWith("extra:"))).toBe(true);
    expect(p.some((m) => m.startsWith("mcpServers.bad.name:"))).toBe(true);
    expect(p.some((m) => m.startsWith("mcpServers.good.comand:"))).toBe(true);
    expect(p.some((m) => m.startsWith("mcpServers.remote.url:"))).toBe(true);
  });
});

describe("parseConfig: server entries", () => {
  it.each(["my.server", "my server", "srv/1", "ü"])("rejects the server name %j", (name) => {
    const p = problems({ mcpServers: { [name]: { command: "x" } } });
    expect(p).toHaveLength(1);
    expect(p[0]).toContain(`mcpServers.${name}: server names may use only letters, digits`);
    expect(p[0]).toContain("Rename the server.");
  });

  it("shows the tool-ref prefix a renamed server would have", () => {
    expect(problems({ mcpServers: { "my.server": { command: "x" } } })[0]).toContain(
      '"my_server.tool"',
    );
  });

  it("accepts letters, digits, _ and - in server names", () => {
    const config = parse({ mcpServers: { "My_server-2": { command: "x" } } });
    expect(config.servers[0]!.name).toBe("My_server-2");
  });

  it.each([
    ["a string", "npx server"],
    ["an array", ["npx"]],
    ["null", null],
  ])("rejects an entry that is %s", (_label, entry) => {
    expect(problems({ mcpServers: { s: entry } })).toEqual([
      'mcpServers.s: must be an object with "command" (stdio) or "url" (http/sse).',
    ]);
  });

  it("rejects an entry with neither command nor url", () => {
    const p = problems({ mcpServers: { s: { args: ["x"] } } });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^mcpServers\.s\b/);
    expect(p[0]).toContain('"command"');
    expect(p[0]).toContain('"url"');
  });

  it("suggests command for a misspelled comand, naming the full key path", () => {
    const p = problems({ mcpServers: { github: { comand: "npx" } } });
    expect(p).toContain('mcpServers.github.comand: unknown key. Did you mean "command"?');
  });

  it.each([
    ["arg", "args"],
    ["enviroment", undefined],
    ["URL", "url"],
    ["header", "headers"],
    ["timout", "timeout"],
  ])("for the server key %j suggests %j", (key, guess) => {
    const p = problems({ mcpServers: { s: { command: "x", [key]: "v" } } });
    const message = p.find((m) => m.startsWith(`mcpServers.s.${key}: unknown key.`));
    expect(message).toBeDefined();
    if (guess) expect(message).toContain(`Did you mean "${guess}"?`);
    else expect(message).toContain("Known keys here:");
  });

  it("lists the known server keys when an unknown key is close to none", () => {
    const p = problems({ mcpServers: { s: { command: "x", zzzzzz: 1 } } });
    expect(p).toHaveLength(1);
    expect(p[0]).toContain("mcpServers.s.zzzzzz: unknown key. Known keys here: ");
    for (const key of SERVER_KEYS) expect(p[0]).toContain(key);
  });

  it("rejects args that is not an array", () => {
    expect(problems({ mcpServers: { s: { command: "x", args: "--flag" } } })).toEqual([
      "mcpServers.s.args: must be an array.",
    ]);
  });

  it("rejects a non-string arg, naming its index", () => {
    expect(problems({ mcpServers: { s: { command: "x", args: ["a", 2] } } })).toEqual([
      "mcpServers.s.args[1]: must be a string.",
    ]);
  });

  it("rejects an env value that is not a string, naming the variable", () => {
    expect(problems({ mcpServers: { s: { command: "x", env: { PORT: 8080 } } } })).toEqual([
      "mcpServers.s.env.PORT: must be a string.",
    ]);
  });

  it("rejects env and headers that are not objects", () => {
    expect(problems({ mcpServers: { s: { command: "x", env: ["A=1"] } } })).toEqual([
      "mcpServers.s.env: must be an object.",
    ]);
    expect(problems({ mcpServers: { s: { url: "https://a.example", headers: "x" } } })).toEqual([
      "mcpServers.s.headers: must be an object.",
    ]);
  });

  it("rejects an empty command", () => {
    expect(problems({ mcpServers: { s: { command: "" } } })).toEqual([
      "mcpServers.s.command: must be a non-empty command (an executable or path).",
    ]);
  });

  it("rejects a command that is not a string", () => {
    const p = problems({ mcpServers: { s: { type: "stdio", command: ["npx"] } } });
    expect(p).toEqual(["mcpServers.s.command: must be a string."]);
  });

  it.each(["ftp://files.example", "not a url", "ws://a.example/mcp", "/local/path"])(
    "rejects the url %j",
    (url) => {
      expect(problems({ mcpServers: { s: { url } } })).toEqual([
        "mcpServers.s.url: must be an http:// or https:// URL.",
      ]);
    },
  );

  it("rejects a type that is not one of ours, listing the valid types", () => {
    const p = problems({ mcpServers: { s: { type: "websocket", command: "x" } } });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^mcpServers\.s\.type: /);
    for (const t of ["stdio", "http", "streamable-http", "sse"]) expect(p[0]).toContain(`"${t}"`);
  });

  it("rejects a stdio server with a url or an http server with a command", () => {
    const p1 = problems({ mcpServers: { s: { command: "x", url: "https://a.example" } } });
    expect(p1).toHaveLength(1);
    expect(p1[0]).toMatch(/^mcpServers\.s/);
    expect(p1[0]).toContain('"url"');
    const p2 = problems({ mcpServers: { s: { type: "http", url: "https://a", command: "x" } } });
    expect(p2).toHaveLength(1);
    expect(p2[0]).toContain('"command"');
  });

  it("names the transport a key of the other transport belongs to", () => {
    expect(
      problems({ mcpServers: { s: { type: "http", url: "https://a.example", command: "x" } } }),
    ).toEqual([
      'mcpServers.s.command: "command" is for stdio servers, not http or sse ones. Remove it.',
    ]);
    expect(problems({ mcpServers: { s: { type: "stdio", command: "x", headers: {} } } })).toEqual([
      'mcpServers.s.headers: "headers" is for http and sse servers, not stdio ones. Remove it.',
    ]);
  });

  it("reports a misspelled key even when the transport cannot be told", () => {
    expect(problems({ mcpServers: { s: { comand: "npx", args: [] } } })).toEqual([
      'mcpServers.s.comand: unknown key. Did you mean "command"?',
    ]);
  });

  it.each([
    [-1, /mcpServers\.s\.timeout: /],
    [0, /mcpServers\.s\.timeout: /],
    [1.5, /mcpServers\.s\.timeout: /],
    ["5s", /^mcpServers\.s\.timeout: must be a number\.$/],
    [25 * 3600 * 1000, /mcpServers\.s\.timeout: /],
  ])("rejects the timeout %j", (timeout, pattern) => {
    const p = problems({ mcpServers: { s: { command: "x", timeout } } });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(pattern);
  });

  it("rejects a disabled or inheritEnv that is not a boolean", () => {
    expect(problems({ mcpServers: { s: { command: "x", disabled: "yes" } } })).toEqual([
      "mcpServers.s.disabled: must be a boolean.",
    ]);
    expect(problems({ mcpServers: { s: { command: "x", inheritEnv: 1 } } })).toEqual([
      "mcpServers.s.inheritEnv: must be a boolean.",
    ]);
  });

  it("skips disabled servers with a warning", () => {
    const config = parse({
      mcpServers: { off: { command: "x", disabled: true }, on: { command: "y", disabled: false } },
    });
    expect(config.servers.map((s) => s.name)).toEqual(["on"]);
    expect(config.warnings).toEqual(["mcpServers.off: disabled; skipped."]);
  });

  it("rejects a config whose every server is disabled", () => {
    expect(
      problems({
        mcpServers: {
          a: { command: "x", disabled: true },
          b: { url: "https://b", disabled: true },
        },
      }),
    ).toEqual([
      "mcpServers: every server is disabled. Enable at least one; a proxy with no servers has nothing to offer.",
    ]);
  });

  it("accepts other clients' keys with one warning each, naming the client", () => {
    const config = parse({
      mcpServers: {
        s: {
          command: "x",
          alwaysLoad: true,
          headersHelper: "./helper.sh",
          autoApprove: ["read"],
        },
      },
    });
    expect(config.servers).toHaveLength(1);
    expect(config.warnings).toHaveLength(3);
    expect(config.warnings).toContain(
      "mcpServers.s.alwaysLoad: Claude Code's key, not supported by mcpx; ignored.",
    );
    expect(config.warnings).toContain(
      "mcpServers.s.headersHelper: Claude Code's key, not supported by mcpx; ignored.",
    );
    expect(config.warnings).toContain(
      "mcpServers.s.autoApprove: Cline's key, not supported by mcpx; ignored.",
    );
  });

  it("accepts every listed foreign key", () => {
    const entry = Object.fromEntries(Object.keys(FOREIGN_SERVER_KEYS).map((k) => [k, true]));
    const config = parse({ mcpServers: { s: { url: "https://a.example", ...entry } } });
    expect(config.warnings).toHaveLength(Object.keys(FOREIGN_SERVER_KEYS).length);
  });
});

describe("parseConfig: transports", () => {
  it("infers stdio from command, with empty args and env by default", () => {
    expect(only({ command: "npx" }).spec).toEqual({
      transport: "stdio",
      command: "npx",
      args: [],
      env: {},
      inheritEnv: false,
    });
  });

  it("infers http from a url alone", () => {
    expect(only({ url: "https://api.example.com/mcp" }).spec).toEqual({
      transport: "http",
      url: "https://api.example.com/mcp",
      headers: {},
    });
  });

  it.each([
    ["http", "http"],
    ["streamable-http", "http"],
    ["sse", "sse"],
  ] as const)("maps type %j to transport %j", (type, transport) => {
    expect(only({ type, url: "http://127.0.0.1:3000/mcp" }).spec.transport).toBe(transport);
  });

  it("accepts an explicit stdio type", () => {
    expect(only({ type: "stdio", command: "x", args: ["a"] }).spec).toMatchObject({
      transport: "stdio",
      args: ["a"],
    });
  });

  it("keeps the description", () => {
    expect(only({ command: "x", description: "Team wiki" }).description).toBe("Team wiki");
    expect("description" in only({ command: "x" })).toBe(false);
  });
});

describe("parseConfig: settings", () => {
  it("applies defaults", () => {
    const config = parse({ mcpServers: { s: { command: "x" } } });
    expect(config.file).toBe(FILE);
    expect(config.discoveryTimeoutMs).toBe(DEFAULTS.discoveryTimeoutMs);
    expect(config.compression).toEqual({ results: "auto", schemas: "typescript" });
    expect(config.servers[0]!.timeoutMs).toBe(DEFAULTS.callTimeoutMs);
    expect(config.warnings).toEqual([]);
    expect(config.secrets).toEqual([]);
  });

  it("uses callTimeout as the default and a server's timeout over it", () => {
    const config = parse({
      callTimeout: 5_000,
      discoveryTimeout: 3_000,
      mcpServers: { a: { command: "x" }, b: { command: "x", timeout: 120_000 } },
    });
    expect(config.discoveryTimeoutMs).toBe(3_000);
    expect(config.servers.map((s) => s.timeoutMs)).toEqual([5_000, 120_000]);
  });

  it("rejects a bad callTimeout or discoveryTimeout with its key", () => {
    expect(problems({ callTimeout: "1m", mcpServers: { a: { command: "x" } } })).toEqual([
      "callTimeout: must be a number.",
    ]);
    expect(problems({ discoveryTimeout: -5, mcpServers: { a: { command: "x" } } })[0]).toMatch(
      /^discoveryTimeout: /,
    );
  });

  it("takes inheritEnv from the top level, and a server's own value over it", () => {
    const config = parse({
      inheritEnv: true,
      mcpServers: { a: { command: "x" }, b: { command: "x", inheritEnv: false } },
    });
    expect(config.servers.map((s) => stdio(s.spec).inheritEnv)).toEqual([true, false]);
    expect(stdio(only({ command: "x", inheritEnv: true }).spec).inheritEnv).toBe(true);
    expect(stdio(only({ command: "x" }).spec).inheritEnv).toBe(false);
  });

  it("reads sessionSecret with ${VAR}, keeps it as a secret, and never quotes a bad one", () => {
    const secret = "0123456789abcdef0123";
    const config = parse(
      { sessionSecret: "${MCPX_SESSION_SECRET}", mcpServers: { a: { command: "x" } } },
      { MCPX_SESSION_SECRET: secret },
    );
    expect(config.sessionSecret).toBe(secret);
    expect(config.secrets).toContain(secret);
    expect(parse({ mcpServers: { a: { command: "x" } } }).sessionSecret).toBeUndefined();

    expect(problems({ sessionSecret: "${NOPE}", mcpServers: { a: { command: "x" } } })).toEqual([
      'sessionSecret: environment variable NOPE is not set. Set it to the same long random value on every replica (e.g. the output of "openssl rand -hex 32").',
    ]);
    const short = problems({ sessionSecret: "hunter2", mcpServers: { a: { command: "x" } } });
    expect(short).toHaveLength(1);
    expect(short[0]).toMatch(/^sessionSecret: too short \(7 characters\)\. Use at least 16/);
    expect(short[0]).not.toContain("hunter2");
    expect(problems({ sessionSecret: 42, mcpServers: { a: { command: "x" } } })).toEqual([
      "sessionSecret: must be a string.",
    ]);
  });

  it("reads redis with ${VAR}, keeps a password as a secret, and never quotes a bad URL", () => {
    const servers = { a: { command: "x" } };
    const config = parse(
      { redis: "rediss://:${REDIS_PASSWORD}@cache.example:6380/2", mcpServers: servers },
      { REDIS_PASSWORD: "s3cret-pass" },
    );
    expect(config.redis).toBe("rediss://:s3cret-pass@cache.example:6380/2");
    expect(config.secrets).toEqual(
      expect.arrayContaining(["s3cret-pass", "rediss://:s3cret-pass@cache.example:6380/2"]),
    );
    expect(parse({ mcpServers: servers }).redis).toBeUndefined();
    expect(problems({ redis: "${NOPE}", mcpServers: servers })).toEqual([
      'redis: environment variable NOPE is not set. Set it, or remove "redis" to keep state in this process.',
    ]);
    const wrong = problems({ redis: "http://:hunter2@host:6379", mcpServers: servers });
    expect(wrong).toEqual([
      'redis: not a Redis URL. Write "redis://host:6379/0", or "rediss://…" for TLS (a password as "redis://:${REDIS_PASSWORD}@host:6379/0").',
    ]);
    expect(problems({ redis: "redis://host:6379/zero", mcpServers: servers })).toEqual([
      'redis: the path must be a database number, e.g. "redis://host:6379/0".',
    ]);
  });

  it("reads redis as { url, encryptionKey }: the key expanded, a secret, never quoted; misspelled keys fail", () => {
    const servers = { a: { command: "x" } };
    const key = "k".repeat(40);
    const config = parse(
      {
        redis: { url: "redis://127.0.0.1:6379/0", encryptionKey: "${MCPX_REDIS_KEY}" },
        mcpServers: servers,
      },
      { MCPX_REDIS_KEY: key },
    );
    expect(config.redis).toBe("redis://127.0.0.1:6379/0");
    expect(config.redisKey).toBe(key);
    expect(config.secrets).toContain(key);
    // The object without a key: shared state, sign-ins in files.
    const bare = parse({ redis: { url: "redis://h:6379/0" }, mcpServers: servers });
    expect(bare.redis).toBe("redis://h:6379/0");
    expect(bare.redisKey).toBeUndefined();
    expect(
      problems({ redis: { url: "redis://h/0", encryptionKey: "${NOPE}" }, mcpServers: servers }),
    ).toEqual([
      'redis.encryptionKey: environment variable NOPE is not set. Set it to the same long random value on every replica (e.g. the output of "openssl rand -hex 32"), or remove encryptionKey to keep sign-ins and trust pins in each machine\'s state folder.',
    ]);
    const short = problems({
      redis: { url: "redis://h/0", encryptionKey: "hunter2" },
      mcpServers: servers,
    });
    expect(short).toHaveLength(1);
    expect(short[0]).toMatch(/^redis\.encryptionKey: too short \(7 characters\)/);
    expect(short[0]).not.toContain("hunter2");
    expect(
      problems({ redis: { url: "redis://h/0", encryptionkey: "x" }, mcpServers: servers })[0],
    ).toMatch(/^redis/);
  });

  it("accepts a $schema key", () => {
    expect(() =>
      parse({ $schema: "./schema.json", mcpServers: { a: { command: "x" } } }),
    ).not.toThrow();
  });

  it("reads the compression settings", () => {
    const config = parse({
      compression: { results: "toon", schemas: "json" },
      mcpServers: { a: { command: "x" } },
    });
    expect(config.compression).toEqual({ results: "toon", schemas: "json" });
  });

  it("rejects a bad compression value, listing the valid ones", () => {
    expect(
      problems({ compression: { results: "gzip" }, mcpServers: { a: { command: "x" } } }),
    ).toEqual(['compression.results: must be one of "auto", "toon", "json", "off".']);
    expect(
      problems({ compression: { schemas: "zod" }, mcpServers: { a: { command: "x" } } }),
    ).toEqual(['compression.schemas: must be one of "typescript", "json".']);
  });

  it("reports a misspelled compression key once, with a suggestion", () => {
    expect(
      problems({ compression: { result: "toon" }, mcpServers: { a: { command: "x" } } }),
    ).toEqual(['compression.result: unknown key. Did you mean "results"?']);
  });

  it("says a required key is missing, and reports unknown keys of nested settings", () => {
    expect(
      problems({ log: {}, health: { intervl: 5 }, mcpServers: { a: { command: "x" } } }),
    ).toEqual([
      'health.intervl: unknown key. Did you mean "interval"?',
      "log.file: missing. Add a string.",
    ]);
  });

  it("gives every server the default result budget, the top-level one, or its own", () => {
    expect(only({ command: "x" }).resultBudget).toBe(DEFAULTS.resultBudget);
    const config = parse({
      resultBudget: 2_000,
      mcpServers: { a: { command: "x" }, b: { command: "x", resultBudget: 50_000 } },
    });
    expect(config.servers.map((s) => s.resultBudget)).toEqual([2_000, 50_000]);
  });

  it("rejects a result budget that is not a whole number of tokens from 100 up", () => {
    expect(problems({ resultBudget: "8k", mcpServers: { a: { command: "x" } } })).toEqual([
      "resultBudget: must be a number.",
    ]);
    expect(problems({ mcpServers: { a: { command: "x", resultBudget: 10 } } })[0]).toMatch(
      /^mcpServers\.a\.resultBudget: .*100/,
    );
    expect(problems({ resultBudget: 1.5, mcpServers: { a: { command: "x" } } })[0]).toMatch(
      /^resultBudget: /,
    );
  });

  it("suggests resultBudget for a misspelled key, at the top level and in a server", () => {
    expect(problems({ resultBudjet: 1000, mcpServers: { a: { command: "x" } } })).toEqual([
      'resultBudjet: unknown key. Did you mean "resultBudget"?',
    ]);
    expect(problems({ mcpServers: { a: { command: "x", resultbudget: 1000 } } })[0]).toMatch(
      /resultbudget: unknown key\. Did you mean "resultBudget"\?/,
    );
  });

  it("rejects a compression that is not an object", () => {
    expect(problems({ compression: "toon", mcpServers: { a: { command: "x" } } })).toEqual([
      "compression: must be an object.",
    ]);
  });
});

describe("parseConfig: ${VAR} expansion", () => {
  it("expands command, args and env", () => {
    const spec = stdio(
      only(
        {
          command: "${BIN_DIR}/server",
          args: ["--token", "${TOKEN}", "--mode=${MODE:-fast}"],
          env: { API_KEY: "${API_KEY}", REGION: "${REGION:-eu}" },
        },
        { BIN_DIR: "/opt/bin", TOKEN: "tok-123456", API_KEY: "key-abcdef" },
      ).spec,
    );
    expect(spec.command).toBe("/opt/bin/server");
    expect(spec.args).toEqual(["--token", "tok-123456", "--mode=fast"]);
    expect(spec.env).toEqual({ API_KEY: "key-abcdef", REGION: "eu" });
  });

  it("expands url and headers", () => {
    const spec = remote(
      only(
        {
          url: "https://${HOST}/mcp?v=${VERSION:-1}",
          headers: { Authorization: "Bearer ${GH_TOKEN}", "X-Team": "${TEAM:-core}" },
        },
        { HOST: "api.example.com", GH_TOKEN: "ghp_secret_value_1" },
      ).spec,
    );
    expect(spec.url).toBe("https://api.example.com/mcp?v=1");
    expect(spec.headers).toEqual({ Authorization: "Bearer ghp_secret_value_1", "X-Team": "core" });
  });

  it("expands a url that is a variable as a whole", () => {
    const spec = remote(
      only({ url: "${MCP_URL}" }, { MCP_URL: "https://api.example.com/mcp" }).spec,
    );
    expect(spec.url).toBe("https://api.example.com/mcp");
  });

  it("expands a url whose default is the base URL (Claude Code's documented form)", () => {
    const spec = remote(only({ url: "${API_BASE_URL:-https://api.example.com}/mcp" }).spec);
    expect(spec.url).toBe("https://api.example.com/mcp");
  });

  it("reports an expanded url that is not a URL as a ConfigError naming the key", () => {
    const p = problems({ mcpServers: { s: { url: "https://${HOST}/mcp" } } }, { HOST: "bad host" });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^mcpServers\.s\.url: /);
  });

  it("reports an unset variable with its name and key path, for every place it occurs", () => {
    const p = problems({
      mcpServers: {
        gh: {
          command: "${CMD}",
          args: ["ok", "${ARG_VAR}"],
          env: { TOKEN: "${GITHUB_TOKEN}" },
        },
        web: { url: "https://${WEB_HOST}/mcp", headers: { Authorization: "Bearer ${WEB_TOKEN}" } },
      },
    });
    expect(p).toEqual([
      "mcpServers.gh.command: environment variable CMD is not set. Set it, or give a default with ${CMD:-default}.",
      "mcpServers.gh.args[1]: environment variable ARG_VAR is not set. Set it, or give a default with ${ARG_VAR:-default}.",
      "mcpServers.gh.env.TOKEN: environment variable GITHUB_TOKEN is not set. Set it, or give a default with ${GITHUB_TOKEN:-default}.",
      "mcpServers.web.url: environment variable WEB_HOST is not set. Set it, or give a default with ${WEB_HOST:-default}.",
      "mcpServers.web.headers.Authorization: environment variable WEB_TOKEN is not set. Set it, or give a default with ${WEB_TOKEN:-default}.",
    ]);
  });

  it("never puts an environment value in the error", () => {
    const env = {
      GITHUB_TOKEN: "ghp_TopSecretGithubToken42",
      AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
      DB_PASSWORD: "hunter2-correct-horse",
      HOST: "internal.corp.example",
    };
    const err = configError(
      {
        mcpServers: {
          gh: {
            command: "npx",
            args: ["--token=${GITHUB_TOKEN}", "${MISSING_ONE}"],
            env: { GITHUB_TOKEN: "${GITHUB_TOKEN}", DB: "${DB_PASSWORD}" },
          },
          web: {
            url: "https://${HOST}/mcp",
            headers: { Authorization: "Bearer ${MISSING_TWO}", X: "${AWS_SECRET_ACCESS_KEY}" },
          },
        },
      },
      env,
    );
    expect(err.problems).toHaveLength(2);
    expect(err.message).toContain("MISSING_ONE");
    expect(err.message).toContain("MISSING_TWO");
    const everything = `${err.message}\n${err.problems.join("\n")}\n${String(err.stack)}`;
    for (const value of Object.values(env)) expect(everything).not.toContain(value);
  });

  it("collects env values, header values and url passwords as secrets", () => {
    const config = parse(
      {
        mcpServers: {
          a: { command: "x", env: { TOKEN: "${T}", PLAIN: "literal-value" } },
          b: {
            url: "https://user:p4ssw0rd@a.example/mcp",
            headers: { Authorization: "Bearer ${H}" },
          },
        },
      },
      { T: "expanded-token", H: "header-token" },
    );
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        "expanded-token",
        "literal-value",
        "Bearer header-token",
        "p4ssw0rd",
        // A variable's value is secret wherever it is expanded, even inside a longer header.
        "header-token",
      ]),
    );
    const basic = Buffer.from("user:p4ssw0rd").toString("base64");
    // Derived forms too: the URL's user name, the Basic header mcpx builds from the URL's
    // credentials, its bare credential and the decoded pair.
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        "expanded-token",
        "literal-value",
        "Bearer header-token",
        "header-token",
        "user",
        "p4ssw0rd",
        `Basic ${basic}`,
        basic,
        "user:p4ssw0rd",
        // …and as they look percent-encoded in a URL.
        "dXNlcjpwNHNzdzByZA%3D%3D",
      ]),
    );
  });

  it("collects the bare token of a literal header and credential-like query values", () => {
    const config = parse({
      mcpServers: {
        b: {
          url: "https://a.example/mcp?api_key=k3y-in-query&format=json&long=abcdefghijklmnop",
          headers: { Authorization: "Bearer literal-bearer-token", "X-Api-Key": "x-key-value" },
        },
      },
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        "Bearer literal-bearer-token",
        "literal-bearer-token",
        "x-key-value",
        "k3y-in-query",
        "abcdefghijklmnop",
      ]),
    );
    // Short values of ordinary names would blot ordinary words out of every log line.
    expect(config.secrets).not.toContain("json");
  });

  it("collects no secrets from disabled servers", () => {
    const config = parse({
      mcpServers: {
        on: { command: "x" },
        off: { command: "x", env: { K: "never-used-secret" }, disabled: true },
      },
    });
    expect(config.secrets).toEqual([]);
  });

  it("does not expand cwd or description", () => {
    const server = only({ command: "x", cwd: "/w/${NOPE}", description: "${NOPE}" });
    expect(stdio(server.spec).cwd).toBe(path.resolve("/w/${NOPE}"));
    expect(server.description).toBe("${NOPE}");
  });
});

describe("expandVars", () => {
  it("replaces each ${VAR}, several per string", () => {
    expect(expandVars("${A}-${B}-${A}", { A: "1", B: "2" })).toBe("1-2-1");
  });

  it("uses the default when the variable is unset or empty, the value otherwise", () => {
    expect(expandVars("${A:-dflt}", {})).toBe("dflt");
    expect(expandVars("${A:-dflt}", { A: "" })).toBe("dflt");
    expect(expandVars("${A:-dflt}", { A: "set" })).toBe("set");
    expect(expandVars("${A:-}", {})).toBe("");
    expect(expandVars("${U:-https://x.example:8080/p}", {})).toBe("https://x.example:8080/p");
  });

  it("leaves text without ${...} alone, including $VAR without braces", () => {
    expect(expandVars("plain $HOME text", { HOME: "/root" })).toBe("plain $HOME text");
    expect(expandVars("", {})).toBe("");
  });

  it("does not expand the values it inserts", () => {
    expect(expandVars("${A}", { A: "${B}", B: "no" })).toBe("${B}");
  });

  it("says which values came from the environment, and only those", () => {
    expect(
      expandTracked("${A}/${B:-dflt}/${C:-x}/${E:-}", { A: "from-env", C: "also-env", E: "" }),
    ).toEqual({ text: "from-env/dflt/also-env/", values: ["from-env", "also-env"] });
  });

  it("throws MissingVariableError naming the variable and not any value", () => {
    let caught: unknown;
    try {
      expandVars("${PRESENT}${ABSENT}", { PRESENT: "visible-value" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(MissingVariableError);
    const err = caught as MissingVariableError;
    expect(err.variable).toBe("ABSENT");
    expect(err.name).toBe("MissingVariableError");
    expect(err.message).toBe("environment variable ABSENT is not set");
    expect(err.message).not.toContain("visible-value");
  });
});

describe("suggest", () => {
  it("finds a plausible typo", () => {
    expect(suggest("comand", SERVER_KEYS)).toBe("command");
    expect(suggest("mcpServer", TOP_KEYS)).toBe("mcpServers");
    expect(suggest("hedaers", SERVER_KEYS)).toBe("headers");
  });

  it("matches case-insensitively first", () => {
    expect(suggest("ENV", SERVER_KEYS)).toBe("env");
    expect(suggest("inheritenv", SERVER_KEYS)).toBe("inheritEnv");
  });

  it("suggests nothing for distant inputs or no candidates", () => {
    expect(suggest("x", SERVER_KEYS)).toBeUndefined();
    expect(suggest("zzzzzz", SERVER_KEYS)).toBeUndefined();
    expect(suggest("command", [])).toBeUndefined();
  });
});

describe("nearest", () => {
  const tools = ["list_issues", "get_issue", "create_issue", "list_pull_requests", "get_me"];

  it("ranks substring matches first, then by edit distance, up to the limit", () => {
    expect(nearest("issue", tools)).toEqual(["get_issue", "list_issues", "create_issue"]);
    expect(nearest("issue", tools, 1)).toEqual(["get_issue"]);
  });

  it("finds typos and drops distant candidates", () => {
    expect(nearest("get_mee", tools)[0]).toBe("get_me");
    expect(nearest("get_mee", tools)).not.toContain("list_pull_requests");
    expect(nearest("qqqqqqqqqqqq", tools)).toEqual([]);
  });
});

describe("auth tokens", () => {
  it("warns at load about a token shorter than 16 characters, and only warns", () => {
    const config = parse(
      {
        mcpServers: { a: { command: "x" } },
        auth: { tokens: { x: "tiny", "${LONG}": "ci" } },
      },
      { LONG: "a-long-random-token-0123456789" },
    );
    expect(config.auth?.tokens.get("x")).toBe("tiny");
    expect(config.warnings).toEqual([
      'auth.tokens[0]: the token for caller "tiny" is 1 character long, easy to guess. Use at least 16 random characters (e.g. "openssl rand -hex 32").',
    ]);
  });
});
