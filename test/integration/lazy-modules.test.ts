/**
 * Each mode loads only what it serves with: over stdio mcpx never loads express, the dashboard
 * or the HTTP transports (they cost start-up time and idle memory). Which modules a process
 * resolved is read from a preload that records them (test/fixtures/preload/module-trace.mjs).
 * Both builds are checked: tsc's, a file per module, and the bundle the bin runs, whose chunks
 * are read back as the modules each holds (dist/bundle-inputs.json, scripts/build-bin.mjs).
 */
import { spawn } from "node:child_process";
import { readFileSync, renameSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { describe, expect, it } from "vitest";
import {
  eventually,
  installedCopy,
  isAlive,
  newClient,
  npmServer,
  ROOT,
  MCPX,
  MCPX_MODULES,
  stop,
  tempDir,
  text,
  untilStarted,
  writeConfig,
} from "../helpers/proxy.js";
import { newClient as eraClient, type Era } from "../helpers/clients.js";

const TRACE = path.join(ROOT, "test/fixtures/preload/module-trace.mjs");
/** Modules only HTTP serving needs. */
const HTTP_ONLY = [
  /\/node_modules\/express\//,
  /\/node_modules\/@modelcontextprotocol\/node\//,
  /\/node_modules\/hono\//,
  /\/dist\/dashboard\//,
  /\/dist\/server\/http\.js$/,
];

/** Traces and metrics: loaded only when turned on (an OTLP endpoint, HTTP, --metrics-port). */
const TELEMETRY = [
  /\/node_modules\/prom-client\//,
  /\/node_modules\/@opentelemetry\//,
  /\/dist\/telemetry\//,
];

/** Loaded over HTTP only when needed: traces on, an OAuth access token, a trust diff shown. */
const LAZY_IN_HTTP = [
  /\/node_modules\/@opentelemetry\/(sdk-trace-base|exporter-trace-otlp-http|resources)\//,
  /\/dist\/telemetry\/tracing\.js$/,
  /\/node_modules\/jose\//,
  /\/dist\/auth\/oauth\.js$/,
  /\/node_modules\/diff\//,
];

/** Chunk of the bundle → the modules it holds, as URLs. */
function bundleInputs(): Map<string, string[]> {
  const inputs = JSON.parse(
    readFileSync(path.join(ROOT, "dist/bundle-inputs.json"), "utf8"),
  ) as Record<string, string[]>;
  const bundle = pathToFileURL(path.join(ROOT, "dist/bundle")).href;
  return new Map(
    Object.entries(inputs).map(([chunk, held]) => [
      `${bundle}/${chunk}`,
      held.map((m) => pathToFileURL(path.join(ROOT, m)).href),
    ]),
  );
}

/** The modules a process loaded: what it resolved, a chunk of the bundle read as its modules. */
function traced(file: string): string[] {
  const chunks = bundleInputs();
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((url) => chunks.get(url) ?? [url]);
}

const httpOnly = (modules: string[]) => modules.filter((m) => HTTP_ONLY.some((re) => re.test(m)));

/** `entry` serving `config` over HTTP, once it listens: its process, URL and stderr so far. */
async function listening(entry: string, config: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [entry, config, "--port", "0"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  try {
    await eventually(() => stderr.includes("mcpx listening on"), 20_000, "mcpx to listen");
  } catch (err) {
    await stop(child);
    throw err;
  }
  const url = /mcpx listening on (\S+)/.exec(stderr)![1]!;
  return { child, url, stderr: () => stderr };
}

function setup() {
  const dir = tempDir();
  const config = writeConfig(
    { mcpServers: { memory: npmServer("@modelcontextprotocol/server-memory") } },
    dir,
  );
  const trace = path.join(dir, "modules.txt");
  const env = {
    PATH: process.env.PATH ?? "",
    NODE_OPTIONS: `--import ${TRACE}`,
    MCPX_TRACE_MODULES: trace,
    MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"),
    // The catalog cache of this test only (never the user's ~/.cache).
    XDG_CACHE_HOME: path.join(dir, "cache"),
  };
  return { config, trace, env };
}

/** Node's fetch implementation, as the preload records it (loading it costs ~10 MB of RSS). */
const UNDICI = "node:internal/deps/undici/undici";
/** Records which parts of node loaded on first use a process loaded (no loader hook of its own). */
const INTERNALS = path.join(ROOT, "test/fixtures/preload/node-internals.mjs");
/**
 * What else node loads on first use that an mcpx with local upstreams needs not: web streams
 * (~0.8 MB of RSS) and worker threads (~0.4 MB). (Web Crypto is not among them: importing
 * `node:crypto` as an ES module reads every export, `webcrypto` included.)
 */
const NODE_LAZY = ["node:internal/webstreams/transformstream", "node:internal/worker"];
/** Express: loaded with the first request the HTTP server's front leaves to its app. */
const EXPRESS = /\/node_modules\/express\//;
/** The SDK's web-standard adapter, and what loading it loads. */
const WEB_ADAPTER = [/\/node_modules\/@modelcontextprotocol\/node\//, /\/node_modules\/hono\//];

/**
 * The modules an HTTP mcpx loaded while one client of `era` opened a session, called a tool and
 * ended the session (DELETE), until mcpx exited; with `preload`, what that preload recorded.
 */
async function httpSession(entry: string, era: Era, preload?: string): Promise<string[]> {
  const { config, trace, env } = setup();
  const { child, url } = await listening(
    entry,
    config,
    preload ? { ...env, NODE_OPTIONS: `--import ${preload}`, MCPX_TRACE_INTERNALS: trace } : env,
  );
  try {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = eraClient(era);
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: "call",
        arguments: { method: "memory.read_graph", arguments: {} },
      });
      expect(text(result)).toContain("entities");
      if (era === "legacy") await transport.terminateSession();
    } finally {
      await client.close();
    }
  } finally {
    await stop(child);
  }
  return traced(trace);
}

describe.each([
  ["tsc's build", MCPX_MODULES],
  ["the bundle", MCPX],
])("modules loaded per mode, %s", (_build, entry) => {
  it("stdio never loads express, the dashboard or the HTTP transports, even after a call", async () => {
    const { config, trace, env } = setup();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [entry, config, "--log-level", "warn"],
      env,
      stderr: "pipe",
    });
    const client = newClient("legacy");
    await client.connect(transport);
    const pid = transport.pid!;
    try {
      const result = await client.callTool({
        name: "call",
        arguments: { method: "memory.read_graph", arguments: {} },
      });
      expect(text(result)).toContain("entities");
    } finally {
      await client.close();
      await eventually(() => !isAlive(pid), 10_000, "mcpx to exit");
    }
    const modules = traced(trace);
    // The trace works: it saw the stdio server being loaded.
    expect(modules.some((m) => m.endsWith("/dist/server/stdio.js"))).toBe(true);
    expect(httpOnly(modules)).toEqual([]);
    expect(modules.filter((m) => TELEMETRY.some((re) => re.test(m)))).toEqual([]);
    // Shared state in Redis (issue 31) only with a "redis" key: ioredis stays unloaded.
    expect(modules.filter((m) => /\/node_modules\/ioredis\//.test(m))).toEqual([]);
  });

  it("stdio loads no ajv before a call needs it", async () => {
    const { config, trace, env } = setup();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [entry, config, "--log-level", "warn"],
      env,
      stderr: "pipe",
    });
    const client = newClient("legacy");
    await client.connect(transport);
    const pid = transport.pid!;
    try {
      await untilStarted(client);
    } finally {
      await client.close();
      await eventually(() => !isAlive(pid), 10_000, "mcpx to exit");
    }
    const modules = traced(trace);
    expect(modules.some((m) => m.endsWith("/dist/executor/validate.js"))).toBe(true);
    expect(modules.filter((m) => /\/node_modules\/ajv(-formats)?\//.test(m))).toEqual([]);
  });

  it("HTTP mode does load them (the check above can fail), but not prom-client before the first scrape, nor the OpenTelemetry SDK, jose or diff until needed", async () => {
    const { config, trace, env } = setup();
    const { child, url } = await listening(entry, config, env);
    const promClient = (m: string) => /\/node_modules\/prom-client\//.test(m);
    let scraped: Response;
    let idle: string[];
    try {
      // Idle with metrics on (issue 30): prom-client waits for the first scrape.
      await eventually(
        async () => {
          const health = await fetch(new URL("/healthz", url));
          return health.ok && !(await health.text()).includes('"starting"');
        },
        30_000,
        "the upstream to start",
      );
      idle = traced(trace);
      scraped = await fetch(new URL("/metrics", url));
    } finally {
      await stop(child);
    }
    const modules = traced(trace);
    expect(httpOnly(modules).length).toBeGreaterThan(0);
    expect(idle.filter(promClient)).toEqual([]);
    // The first scrape loads it (this trace sees CommonJS packages too), counting from the start.
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain("mcpx_calls_in_flight 0");
    expect(modules.some(promClient)).toBe(true);
    // Issue 30: traces are off (no OTLP endpoint), no "auth.oauth", no trust diff shown.
    expect(modules.filter((m) => LAZY_IN_HTTP.some((re) => re.test(m)))).toEqual([]);
  });

  it("HTTP: a 2025-era session (initialize, its stream, a call, DELETE) loads neither Express, nor the SDK's web adapter, nor node's fetch; a 2026-07-28 client loads all three", async () => {
    const legacy = await httpSession(entry, "legacy");
    // The trace saw the session served: the direct path's modules were loaded.
    expect(legacy.some((m) => m.endsWith("/dist/server/http-direct-session.js"))).toBe(true);
    expect(legacy.filter((m) => EXPRESS.test(m))).toEqual([]);
    expect(legacy.filter((m) => WEB_ADAPTER.some((re) => re.test(m)))).toEqual([]);
    expect(legacy).not.toContain(UNDICI);
    // Nor, in the bundle, web streams or worker threads (scripts/build-bin.mjs's LAZY_GLOBALS,
    // src/worker-entry.ts), read without module-trace's hook thread, which loads them itself.
    const internals = await httpSession(entry, "legacy", INTERNALS);
    const lazy = internals.filter((m) => NODE_LAZY.includes(m));
    if (entry === MCPX) expect(lazy).toEqual([]);
    // tsc's build loads the SDK client's modules unedited: the check can fail.
    else expect(lazy).toContain("node:internal/webstreams/transformstream");
    // Both checks can fail: the 2026-07-28 era is served through the web-standard adapter.
    const modern = await httpSession(entry, "modern");
    expect(modern.filter((m) => WEB_ADAPTER.some((re) => re.test(m))).length).toBeGreaterThan(0);
    expect(modern.some((m) => EXPRESS.test(m))).toBe(true);
    expect(modern).toContain(UNDICI);
  });
});

describe("mcpx upgraded under a running HTTP server", () => {
  it("a request for the app, whose chunk is gone, gets 500 and a log line saying to restart; the next one, with the chunk back, is served", async () => {
    // An installed mcpx of its own, whose files change under it.
    const installed = installedCopy();
    const inputs = JSON.parse(
      readFileSync(path.join(installed, "dist/bundle-inputs.json"), "utf8"),
    ) as Record<string, string[]>;
    const [chunk] = Object.entries(inputs).find(([, modules]) =>
      modules.includes("dist/server/http-app.js"),
    )!;
    const file = path.join(installed, "dist/bundle", chunk);
    const { config, env } = setup();
    const { child, url, stderr } = await listening(
      path.join(installed, "dist/mcpx.cjs"),
      config,
      env,
    );
    try {
      // A 2025-era session is served in front of the app, which nothing has built yet.
      const client = eraClient("legacy");
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      renameSync(file, `${file}.gone`);
      const health = await fetch(new URL("/healthz", url));
      expect(health.status).toBe(500);
      await eventually(
        () =>
          stderr().includes("files changed on disk after it started") &&
          stderr().includes("restart mcpx"),
        10_000,
        "the log line",
      );
      // The session does not need the app: it goes on.
      const result = await client.callTool({
        name: "call",
        arguments: { method: "memory.read_graph", arguments: {} },
      });
      expect(text(result)).toContain("entities");
      await client.close();
      renameSync(`${file}.gone`, file);
      expect((await fetch(new URL("/healthz", url))).status).toBe(200);
    } finally {
      await stop(child);
    }
  });
});
