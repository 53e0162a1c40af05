/**
 * Memory benchmark: RSS and heap of the built mcpx (`node dist/bundle/index.js <config> --port 0`, what the bin runs) at
 * idle, after 5,000 and after 20,000 `call` → everything.echo requests from 32 concurrent SDK
 * streamable-HTTP clients (one MCP session each; the upstream session is shared), after calls
 * the clients cancel midway, and once the clients are gone; with the upstream processes under
 * mcpx at each point. A probe preloaded into mcpx (bench/memory-probe.mjs) reports
 * process.memoryUsage() over IPC, as the process runs and after a forced full GC ("live").
 *
 * Side by side in the same run, idle as a user's mcpx mostly is: the bundle the bin runs and tsc's
 * build (a file per module), each with three upstreams, read once their idle trim has run; and
 * the floors under them, node processes that load only the SDK and what serving needs.
 *
 * MCPX_BENCH_SNAPSHOTS=<dir> also writes a heap snapshot at each checkpoint, to compare with
 * bench/heap-diff.ts (writing one inflates RSS afterwards; snapshots are never committed).
 * MCPX_BENCH_MEMORY_CALLS=5000,20000,60000 sets the checkpoints.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  descendants,
  isAlive,
  MCPX,
  MCPX_MODULES,
  stop,
  tempDir,
  writeConfig,
} from "../test/helpers/proxy.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connectHttp } from "./lib/http-client.js";
import { table, type BenchSection } from "./report.js";
import { IDLE_CHECK_MS, QUIET_LOOKS } from "../src/heap.js";
import { threeUpstreams } from "./cpu.js";
import { npmServer, resultText, ROOT } from "./upstreams.js";

const CLIENTS = 32;
/** Cumulative calls at each checkpoint after idle. */
const CHECKPOINTS = (process.env.MCPX_BENCH_MEMORY_CALLS ?? "5000,20000")
  .split(",")
  .map(Number)
  .filter((n) => n > 0);
/** Calls cancelled by their client after the first progress notification. */
const CANCELLED = 2_000;
/** Idle time after startup, and after the clients left, before reading. */
const SETTLE_MS = 1_000;
const PROBE = path.join(ROOT, "bench/memory-probe.mjs");
const EVERYTHING = npmServer("@modelcontextprotocol/server-everything", ["stdio"]);

interface Usage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  newSpace: number;
  oldSpace: number;
}

interface Reading {
  label: string;
  /** As the process runs: no GC forced. */
  now: Usage;
  /** Right after two forced full GCs: what is really retained. */
  live: Usage;
  upstreams: number;
}

const SDK = ["@modelcontextprotocol/server", "@modelcontextprotocol/client"];
/** The floor under mcpx's idle RSS: a node that loads only these, read as mcpx's idle is. */
const FLOORS: { label: string; modules: string[]; serves?: true }[] = [
  { label: "node, nothing loaded", modules: [] },
  { label: "node + the MCP SDK's server and client packages", modules: SDK },
  {
    label: "the same + an HTTP server listening + one child process run",
    modules: SDK,
    serves: true,
  },
];

/** What a proxy does at the least: listen, and start a process. */
const SERVE = `const http = await import("node:http"); const s = http.createServer(); await new Promise((r) => s.listen(0, r)); (await import("node:child_process")).spawnSync(process.execPath, ["-e", ""]);`;

/** RSS of a node process that imports `modules` and then idles SETTLE_MS. */
function floorRss(modules: string[], serves = false): number {
  const code = `${modules.map((m) => `await import(${JSON.stringify(m)});`).join("")}${serves ? SERVE : ""}setTimeout(() => { process.stdout.write(String(process.memoryUsage().rss)); process.exit(0); }, ${SETTLE_MS});`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return Number(out);
}

/** mcpx with the probe and an IPC channel; resolves once it listens. */
async function startMcpx(config: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ["--expose-gc", "--import", PROBE, MCPX, config, "--port", "0", "--log-level", "warn"],
    { stdio: ["ignore", "ignore", "pipe", "ipc"] },
  );
  return { child, url: await listening(child) };
}

/** The URL an mcpx started with `--port` says it listens on. */
function listening(child: ChildProcess): Promise<string> {
  let stderr = "";
  return new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (c: Buffer) => {
      stderr += c.toString();
      const m = /mcpx listening on (\S+)/.exec(stderr);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}: ${stderr}`)));
  });
}

/** Ask the probe for its one reply of `type`. */
function ask<T>(child: ChildProcess, msg: { type: string; file?: string }): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (reply: { type?: string }) => {
      if (reply.type !== msg.type) return;
      child.off("message", onMessage);
      resolve(reply as T);
    };
    child.on("message", onMessage);
    child.send(msg);
  });
}

/** Run `total` numbered jobs on the clients, each client one job at a time; returns failures. */
async function spread(
  clients: Client[],
  total: number,
  job: (client: Client, n: number) => Promise<boolean>,
): Promise<number> {
  let next = 0;
  let failed = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < total) {
        const n = next++;
        const ok = await job(client, n).catch(() => false);
        if (!ok) failed++;
      }
    }),
  );
  return failed;
}

/** One echo with a payload no other call uses. */
async function echo(client: Client, n: number): Promise<boolean> {
  const message = `m${n}-${Math.random().toString(36).slice(2)}`;
  const result = await client.callTool({
    name: "call",
    arguments: { method: "everything.echo", arguments: { message } },
  });
  return result.isError !== true && resultText(result) === `Echo: ${message}`;
}

/** A long operation the client cancels at its first progress notification (the "stop" button). */
async function cancelled(client: Client): Promise<boolean> {
  const stop = new AbortController();
  try {
    await client.callTool(
      {
        name: "call",
        arguments: {
          method: "everything.trigger-long-running-operation",
          arguments: { duration: 0.5, steps: 5 },
        },
      },
      undefined,
      { signal: stop.signal, onprogress: () => stop.abort(new Error("stopped by the user")) },
    );
    return false; // it should not have finished
  } catch {
    return stop.signal.aborted;
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const BUILDS = [
  { label: "the bundle (`dist/bundle/`, what the bin runs)", entry: MCPX },
  { label: "tsc's build (`dist/index.js`, a file per module)", entry: MCPX_MODULES },
];
const MODES = ["stdio", "HTTP"] as const;
/**
 * Quiet before the settled reading: the idle trim's looks, with room for the start-up work that
 * delays its first quiet look, and for the load beside it.
 */
const SETTLED_MS = (QUIET_LOOKS + 3) * IDLE_CHECK_MS;

interface Settled {
  build: string;
  mode: (typeof MODES)[number];
  rss: number;
  upstreams: number;
}

/**
 * RSS of an mcpx with three upstreams and one client connected (that called nothing), SETTLED_MS
 * after the client's session opened.
 */
async function settledIdle(
  build: { label: string; entry: string },
  mode: Settled["mode"],
): Promise<Settled> {
  const dir = tempDir("mcpx-bench-memory-idle-");
  const config = threeUpstreams(dir);
  const env = { ...process.env, XDG_CACHE_HOME: dir, XDG_STATE_HOME: dir } as Record<
    string,
    string
  >;
  const args = [build.entry, config, "--log-level", "warn"];
  let pid: number;
  let close: () => Promise<unknown>;
  if (mode === "stdio") {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args,
      env,
      stderr: "ignore",
    });
    const client = new Client({ name: "mcpx-bench-memory-idle", version: "1.0.0" });
    await client.connect(transport);
    pid = transport.pid!;
    close = () => client.close();
  } else {
    const child = spawn(process.execPath, [...args, "--port", "0"], {
      stdio: ["ignore", "ignore", "pipe"],
      env,
    });
    pid = child.pid!;
    const url = await listening(child);
    const session = await connectHttp(url, "mcpx-bench-memory-idle").catch(async (err: unknown) => {
      await stop(child);
      throw err;
    });
    close = async () => {
      await session.close();
      await stop(child);
    };
  }
  try {
    await sleep(SETTLED_MS);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
    return { build: build.label, mode, rss: kb * 1024, upstreams: upstreamsOf(pid) };
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Upstream processes under mcpx: node processes (its watchdog is a shell). */
function upstreamsOf(pid: number): number {
  return descendants(pid).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "node";
    } catch {
      return false;
    }
  }).length;
}

export async function runMemoryBench(): Promise<BenchSection> {
  const started = performance.now();
  const dir = tempDir("mcpx-bench-memory-");
  const snapshots = process.env.MCPX_BENCH_SNAPSHOTS;
  const config = writeConfig(
    { mcpServers: { everything: { ...EVERYTHING, session: "shared" } } },
    dir,
  );
  const readings: Reading[] = [];
  const failures: string[] = [];
  let left = 0;
  const floors = FLOORS.map((f) => ({ label: f.label, rss: floorRss(f.modules, f.serves) }));
  // Before the load, not beside it: an idle mcpx trims only once its event loop is quiet, and
  // the load's processes slowed its own timers enough to put that off (one read 94 MB).
  const settledRss = await Promise.all(
    BUILDS.flatMap((build) => MODES.map((mode) => settledIdle(build, mode))),
  ).catch((err: unknown) => {
    failures.push(`settled idle: ${String(err)}`);
    return [];
  });
  const { child, url } = await startMcpx(config);
  const pid = child.pid!;
  const read = async (label: string) => {
    const m = await ask<{ now: Usage; live: Usage }>(child, { type: "memory" });
    if (snapshots) {
      const file = path.join(snapshots, `mcpx-${readings.length}.heapsnapshot`);
      await ask(child, { type: "snapshot", file });
    }
    readings.push({ label, ...m, upstreams: descendants(pid).length });
    console.error(
      `bench memory: ${label}: RSS ${mb(m.now.rss)} MB, heapTotal ${mb(m.now.heapTotal)} MB, live heap ${mb(m.live.heapUsed)} MB`,
    );
  };
  try {
    await sleep(SETTLE_MS);
    await read("idle");
    const sessions = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => connectHttp(url, `mcpx-bench-memory-${i}`)),
    );
    try {
      const clients = sessions.map((s) => s.client);
      let done = 0;
      for (const target of CHECKPOINTS) {
        const failed = await spread(clients, target - done, (c, n) => echo(c, done + n));
        if (failed > 0) failures.push(`${failed} of the calls up to ${target} failed`);
        done = target;
        await read(`after ${target.toLocaleString("en-US")} calls`);
      }
      const notCancelled = await spread(clients, CANCELLED, (c) => cancelled(c));
      if (notCancelled > 0) failures.push(`${notCancelled} calls were not cancelled`);
      await read(`then ${CANCELLED.toLocaleString("en-US")} calls cancelled midway`);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
    await sleep(SETTLE_MS);
    await read("clients gone (sessions deleted)");
  } finally {
    const children = descendants(pid);
    await stop(child);
    // Upstreams get SIGTERM, then SIGKILL after a grace period: give them that long.
    const deadline = Date.now() + 5_000;
    while (children.some(isAlive) && Date.now() < deadline) await sleep(50);
    left = children.filter(isAlive).length;
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    id: "memory",
    title: "Memory",
    markdown: render(readings, floors, settledRss, failures, left, performance.now() - started),
  };
}

function render(
  readings: Reading[],
  floors: { label: string; rss: number }[],
  settled: Settled[],
  failures: string[],
  left: number,
  ms: number,
): string {
  const rows = readings.map((r) => [
    r.label,
    mb(r.now.rss),
    mb(r.now.heapTotal),
    `${mb(r.now.newSpace)} / ${mb(r.now.oldSpace)}`,
    mb(r.now.heapUsed),
    mb(r.live.heapUsed),
    mb(r.live.rss),
    r.upstreams,
  ]);
  return [
    "Reproduce with `npm run bench -- memory`.",
    "",
    `The built mcpx over HTTP (\`node dist/bundle/index.js <config> --port 0\`, what the bin runs) with server-everything as a \`"session": "shared"\` upstream. ${CLIENTS} SDK streamable-HTTP clients, one MCP session each, call \`call\` → \`everything.echo\` with unique payloads, back to back; then ${CANCELLED.toLocaleString("en-US")} \`trigger-long-running-operation\` calls that the client cancels at the first progress notification; then every client DELETEs its session. mcpx's own memory is read through a preloaded probe: as it runs, then after two forced full GCs ("live heap": what is really retained). Each reading forces those GCs, which resets V8's heap growth: RSS between readings can run higher than shown. "upstreams": processes under mcpx.`,
    "",
    table(
      [
        "checkpoint",
        "RSS MB",
        "heapTotal MB",
        "new / old space MB",
        "heapUsed MB",
        "live heap MB",
        "RSS after GC MB",
        "upstreams",
      ],
      rows,
    ),
    "",
    interpretation(readings).join("\n\n"),
    "",
    `The floor under mcpx's idle RSS in the same run: node processes that load only these, read at the same point (${SETTLE_MS / 1000} s after start; without mcpx's probe, which itself adds little):`,
    "",
    table(
      ["process", "RSS MB"],
      [...floors.map((f) => [f.label, mb(f.rss)]), ["mcpx, idle", mb(readings[0]?.now.rss ?? 0)]],
    ),
    "",
    `Settled idle, as a user's mcpx mostly is: mcpx with three \`"session": "shared"\` upstreams (an echo server, server-everything, server-memory, as in the CPU bench) and one SDK client connected that calls nothing, over stdio (the client spawns mcpx) and over HTTP (\`--port 0\`); no probe; its RSS read ${SETTLED_MS / 1000} s after the client's session opened, once the idle trim has given the young generation back (src/heap.ts). Both builds in both modes at once, before the load above ("upstreams": node processes under mcpx):`,
    "",
    table(
      ["mcpx build", "mode", "RSS MB", "upstreams"],
      settled.map((r) => [r.build, r.mode, mb(r.rss), r.upstreams]),
    ),
    "",
    `${failures.length === 0 ? "Every call answered as expected" : `Failures: ${failures.join("; ")}`}. Upstream processes left after mcpx exited: ${left}. Run time ${(ms / 1000).toFixed(0)} s.`,
  ].join("\n");
}

/** What the numbers say: growth that continues with calls is a leak; the rest is V8 sizing. */
function interpretation(readings: Reading[]): string[] {
  const at = (prefix: string) => readings.find((r) => r.label.startsWith(prefix));
  const idle = at("idle");
  const calls = readings.filter((r) => r.label.startsWith("after "));
  const first = calls[0];
  const last = calls.at(-1);
  if (!idle || !first || !last || first === last) return [];
  const headroom = last.now.heapTotal - last.live.heapUsed;
  const outside = last.now.rss - last.now.heapTotal;
  return [
    `Live heap ${first.label}: ${mb(first.live.heapUsed)} MB; ${last.label}: ${mb(last.live.heapUsed)} MB (${signed(last.live.heapUsed - first.live.heapUsed)} MB). Retained memory does not grow with calls.`,
    `RSS above idle follows V8's heap size, not what is retained: at ${last.label.replace("after ", "")}, heapTotal is ${mb(last.now.heapTotal)} MB for ${mb(last.live.heapUsed)} MB live (${mb(headroom)} MB of new space and of garbage awaiting the next full GC); RSS beyond heapTotal (code, stacks, native memory) is ${mb(outside)} MB, ${mb(idle.now.rss - idle.now.heapTotal)} MB at idle.`,
  ];
}

function signed(bytes: number): string {
  return `${bytes >= 0 ? "+" : "−"}${mb(Math.abs(bytes))}`;
}
