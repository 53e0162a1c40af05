/**
 * Helpers that run the built `mcpx` as a user would: a child process, spoken to by the real SDK
 * (v2) client of either protocol era.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { MODERN_VERSION, newClient, type Era } from "./clients.js";
import { eventually } from "./eventually.js";
import { onTestFinished, TestRunner } from "vitest";
import { tempDir } from "./temp.js";

export { tempDir } from "./temp.js";
export { ERAS, newClient, onToolsChanged, type Era } from "./clients.js";
export { eventually, within } from "./eventually.js";

export const ROOT = path.resolve(import.meta.dirname, "../..");
/** The CLI as the bin runs it: `dist/mcpx.cjs` imports this bundle (scripts/build-bin.mjs). */
export const MCPX = path.join(ROOT, "dist/bundle/index.js");
/** The same CLI as tsc emitted it, a file per module: for tests that read which modules load. */
export const MCPX_MODULES = path.join(ROOT, "dist/index.js");
export const FIXTURES = path.join(ROOT, "test/fixtures/upstreams");

/** A stdio server entry that runs a package's bin with node, offline. */
export function npmServer(pkg: string, ...args: string[]) {
  return {
    command: process.execPath,
    args: [path.join(ROOT, "node_modules", pkg, "dist/index.js"), ...args],
  };
}

export function fixtureServer(file: string, env: Record<string, string> = {}) {
  return { command: process.execPath, args: [path.join(FIXTURES, file)], env };
}

/** Write a config object to a file in a new temp folder (removed after the test) and return its path. */
export function writeConfig(config: unknown, dir = tempDir()): string {
  const file = path.join(dir, "mcpx.json");
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

export interface Running {
  client: Client;
  /** The protocol era the client speaks. */
  era: Era;
  /** The mcpx process id. */
  pid: number;
  /** Everything mcpx wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Wait until no upstream is still starting, as the client sees it: the describe tool's
 * description marks servers still being discovered with "[starting]".
 */
export async function untilStarted(client: Client, ms = 30_000): Promise<void> {
  await eventually(
    async () => {
      const { tools } = await client.listTools();
      const description = tools.find((t) => t.name === "describe")?.description ?? "";
      return !description.includes("[starting]");
    },
    ms,
    "mcpx's upstreams to start",
  );
}

export interface StartOptions {
  /**
   * Wait until every upstream's first discovery settled (default true). mcpx answers
   * initialize at once and discovers in the background; most tests want the settled catalog.
   */
  waitReady?: boolean;
  /** The client's protocol era (default "modern": 2026-07-28). */
  era?: Era;
  /** Connect this client (built for `era`) instead of a plain one, e.g. one that declares capabilities. */
  client?: Client;
  /**
   * The catalog cache folder (`XDG_CACHE_HOME` of mcpx; catalogs land in `<it>/mcpx/`). Default: a
   * fresh one per spawn, so no test sees another's cached catalogs.
   */
  cacheHome?: string;
  /** More environment for the spawned mcpx (e.g. XDG_STATE_HOME). */
  env?: Record<string, string>;
}

/**
 * A fresh `XDG_CACHE_HOME` of the test's own, one level inside its temp folder: mcpx creates the
 * cache folder and its parent only, so an mcpx that outlives its test never re-creates the
 * removed temp folder.
 */
export function newCacheHome(): string {
  const home = path.join(tempDir("mcpx-cache-"), "xdg");
  mkdirSync(home);
  return home;
}

/**
 * `XDG_CACHE_HOME` and `XDG_STATE_HOME` for one spawned mcpx: `cacheHome`, else a fresh one
 * (`newCacheHome`). Both are the same folder: catalogs land in `<it>/mcpx/catalogs`, trust pins
 * in `<it>/mcpx/pins`, so a test that restarts mcpx on one `cacheHome` keeps both.
 */
export function cacheEnv(cacheHome?: string): { XDG_CACHE_HOME: string; XDG_STATE_HOME: string } {
  const home = cacheHome ?? newCacheHome();
  return { XDG_CACHE_HOME: home, XDG_STATE_HOME: home };
}

/**
 * The SDK's stdio client transport, except that a 2026-07-28 client probes with
 * `server/discover` on the process itself instead of on a throw-away sibling mcpx (the SDK spawns
 * one only for its own class, which it recognizes by an own `_dispose` on the prototype): a
 * sibling would start every upstream of the config once more, for nothing, in every test. mcpx
 * answers the probe in place; the packaging test keeps the SDK's own way.
 */
class InPlaceStdioClientTransport extends StdioClientTransport {}

/** Start `mcpx <config>` over stdio and connect an SDK client of `options.era` to it. */
export async function startStdio(
  configFile: string,
  extraArgs: string[] = [],
  options: StartOptions = {},
): Promise<Running> {
  const home = cacheEnv(options.cacheHome);
  // A folder made here inside a test goes when the test does: so does the mcpx writing in it
  // (catalogs, trust pins), first (onTestFinished hooks run last registered first).
  const ownFolder = options.cacheHome === undefined && Boolean(TestRunner.getCurrentTest());
  const transport = new InPlaceStdioClientTransport({
    command: process.execPath,
    args: [MCPX, configFile, ...extraArgs],
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "", ...home, ...options.env },
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const era = options.era ?? "modern";
  const client = options.client ?? newClient(era);
  const protocolErrors: Error[] = [];
  await client.connect(transport);
  // Anything on stdout that is not JSON-RPC would surface here.
  transport.onerror = (err) => protocolErrors.push(err);
  const pid = transport.pid;
  if (pid === null) throw new Error("mcpx did not start");
  if (ownFolder) onTestFinished(() => client.close());
  if (options.waitReady ?? true) await untilStarted(client);
  return {
    client,
    era,
    pid,
    stderr: () => stderr + protocolErrors.map((e) => `\nPROTOCOL ERROR: ${e.message}`).join(""),
    close: () => client.close(),
  };
}

export interface RunningHttp extends Running {
  url: string;
  child: ChildProcess;
}

/**
 * Start `mcpx <config> --port N` and connect an SDK client of `options.era` over streamable
 * HTTP, sending `headers` with every request (e.g. Authorization).
 */
export async function startHttp(
  configFile: string,
  extraArgs: string[] = [],
  headers: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningHttp> {
  const child = spawn(process.execPath, [MCPX, configFile, "--port", "0", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...cacheEnv(options.cacheHome), ...options.env },
  });
  let stderr = "";
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      const m = /mcpx listening on (\S+)/.exec(stderr);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}: ${stderr}`)));
  });
  const era = options.era ?? "modern";
  const client = options.client ?? newClient(era);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  if (options.waitReady ?? true) await untilStarted(client);
  return {
    client,
    era,
    url,
    child,
    pid: child.pid!,
    stderr: () => stderr + (stdout ? `\nSTDOUT: ${stdout}` : ""),
    close: async () => {
      await client.close();
      await stop(child);
    },
  };
}

/**
 * This build copied to a temp folder as an install of its own (`dist/`, `package.json`, its
 * `node_modules` linked), for tests that change its files under a running mcpx; with `version`,
 * its package.json names that version.
 */
export function installedCopy(version?: string): string {
  const dir = tempDir("mcpx-installed-");
  cpSync(path.join(ROOT, "dist"), path.join(dir, "dist"), { recursive: true });
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as object;
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify(version === undefined ? pkg : { ...pkg, version }),
  );
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  return dir;
}

/**
 * SIGTERM a process and wait for it to exit and for its stdout and stderr to close: "exit" can
 * come before the last of what it wrote has been read, and tests read that output next.
 */
export function stop(child: ChildProcess): Promise<number | null> {
  const exited = child.exitCode !== null || child.signalCode !== null;
  const open = [child.stdout, child.stderr].filter(
    (s): s is NonNullable<typeof s> => s !== null && !s.closed,
  );
  if (exited && open.length === 0) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once("close", (code) => resolve(code));
    // A stream nobody reads would never end, nor would "close" come.
    for (const s of open) s.resume();
    if (!exited) child.kill("SIGTERM");
  });
}

/** The argv[0] of mcpx's watchdog (src/upstream/watchdog.ts). */
const WATCHDOG = "mcpx-watchdog";

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

/** True for mcpx's watchdog process. */
export function isWatchdog(pid: number): boolean {
  return cmdline(pid).includes(WATCHDOG);
}

/**
 * Pids of every live descendant of `pid` (from /proc): its upstream processes. mcpx's watchdog
 * (and what it runs) is left out: it is not an upstream; `watchdogOf` finds it.
 */
export function descendants(pid: number): number[] {
  return processTree(pid, isWatchdog);
}

/** The pid of mcpx's running watchdog, if it has one. */
export function watchdogOf(pid: number): number | undefined {
  return processTree(pid).find(isWatchdog);
}

/** Every live descendant of `pid`, except `skip`ped processes and theirs. */
function processTree(pid: number, skip?: (pid: number) => boolean): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 is the ppid; the command name (field 2) may contain spaces, so parse after ")".
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (after[0] === "Z") continue; // a zombie is dead; its parent has yet to reap it
      parent.set(Number(entry), Number(after[1]));
    } catch {
      // The process exited while we listed: not a descendant any more.
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, pp] of parent) {
      if (pp !== p) continue;
      if (skip?.(child)) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The text of a tool result's first block. */
export function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}

/** Start an HTTP fixture upstream (http-faulty.mjs unless named); resolves once it listens. */
export async function startHttpFixture(
  env: Record<string, string> = {},
  file = "http-faulty.mjs",
): Promise<{ url: string; base: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(FIXTURES, file)], {
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr.resume();
  const port = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`http fixture exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return { url: `${base}/mcp`, base, child };
}

/** Run `mcpx` with arguments to completion; for CLI errors and --help. */
export function runMcpx(
  args: string[],
  timeoutMs = 20_000,
  /** Extra environment, e.g. `cacheEnv(home)` to share a state folder with a spawned mcpx. */
  env: Record<string, string> = cacheEnv(),
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MCPX, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcpx ${args.join(" ")} did not exit: ${stderr}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A raw client's initialize request (id 1). */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
} as const;

/** The `_meta` envelope every 2026-07-28 request carries. */
export const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
} as const;

/** A raw 2026-07-28 client's first request: server/discover (id 1). */
export const DISCOVER = {
  jsonrpc: "2.0",
  id: 1,
  method: "server/discover",
  params: { _meta: ENVELOPE },
} as const;

/** The headers a 2026-07-28 request needs besides its body (`name`: the Mcp-Name of a call). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": method,
    ...(name !== undefined && { "mcp-name": name }),
  };
}

/** A raw HTTP POST of an initialize request, with any headers (Host included). */
export function rawInitialize(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return rawPost(url, INITIALIZE, headers);
}

/**
 * A raw client's first request of `era` (2025: initialize; 2026-07-28: server/discover, with
 * its headers), plus any headers (Host included).
 */
export function rawOpen(
  url: string,
  headers: Record<string, string>,
  era: Era,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return era === "legacy"
    ? rawInitialize(url, headers)
    : rawPost(url, DISCOVER, { ...modernHeaders("server/discover"), ...headers });
}

/** A raw HTTP POST of `body` (JSON unless a string) with JSON-RPC's usual headers and `headers`. */
export function rawPost(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        let data = "";
        res.on("data", (c: Buffer) => (data += c.toString()));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }),
        );
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}
