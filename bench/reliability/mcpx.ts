/**
 * The built mcpx as the reliability runs drive it: spawned on a config, over HTTP (`--port 0`)
 * or stdio, watched from /proc while it runs (RSS, the upstream processes under it), and
 * checked for survivors once it is gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { descendants, MCPX } from "../../test/helpers/proxy.js";
import { memoryOf, SeenProcesses } from "../../test/helpers/procfs.js";
import { resultText, type StdioRpc } from "../../test/helpers/rpc.js";
import { stats } from "../lib/stats.js";
import { ROOT } from "../upstreams.js";

/** `node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio`, offline. */
export function everything(env: Record<string, string> = {}) {
  const entry = path.join(
    ROOT,
    "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
  );
  return { command: process.execPath, args: [entry, "stdio"], env };
}

/** A temp folder holding `mcpx.json`; `remove()` when done. */
export function configFile(config: unknown): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "mcpx-reliability-"));
  const file = path.join(dir, "mcpx.json");
  // The catalog cache stays in this folder: no run reads another's, none writes to ~/.cache.
  const own =
    typeof config === "object" && config !== null && !("catalogCache" in config)
      ? { ...config, catalogCache: path.join(dir, "cache") }
      : config;
  writeFileSync(file, JSON.stringify(own, null, 2));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }) };
}

export interface HttpMcpx {
  child: ChildProcess;
  url: string;
  /** The tail of its stderr. */
  stderr(): string;
}

/** `mcpx <config> --port 0`; resolves once it listens. */
export async function startHttpMcpx(config: string, args: string[] = []): Promise<HttpMcpx> {
  const child = spawn(process.execPath, [MCPX, config, "--port", "0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (c: Buffer) => {
    err = (err + c.toString()).slice(-64 * 1024);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /mcpx listening on (\S+)/.exec(err);
      if (m?.[1]) {
        child.stderr.off("data", onData);
        resolve(m[1]);
      }
    };
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}: ${err}`)));
  });
  return { child, url, stderr: () => err };
}

/** Poll /healthz until every upstream is ready (bounded). */
export async function untilHealthy(url: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const body = (await fetch(new URL("/healthz", url))
      .then((r) => r.json())
      .catch(() => ({}))) as { servers?: Record<string, { status: string }> };
    const servers = Object.values(body.servers ?? {});
    if (servers.length > 0 && servers.every((s) => s.status === "ready")) return;
    if (Date.now() > deadline) throw new Error(`upstreams not ready: ${JSON.stringify(body)}`);
    await sleep(100);
  }
}

/** Over stdio: wait until describe's description no longer marks a server "[starting]". */
export async function untilStdioReady(rpc: StdioRpc, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await rpc.request("tools/list", {});
    const tools = (answer.result?.tools ?? []) as { name: string; description?: string }[];
    const description = tools.find((t) => t.name === "describe")?.description ?? "";
    if (description !== "" && !description.includes("[starting]")) return;
    if (Date.now() > deadline) throw new Error("upstreams did not start");
    await sleep(100);
  }
}

/** SIGTERM and wait for the exit (SIGKILL after `ms`); resolves with the exit code. */
export function stopProcess(child: ChildProcess, ms = 20_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}

export interface Sample {
  /** Seconds since the monitor started. */
  t: number;
  /** mcpx's resident memory, bytes. */
  rss: number;
  /** Processes under mcpx (its upstreams; the watchdog is not counted). */
  upstreams: number;
}

/**
 * Samples mcpx's RSS and upstream count every `intervalMs`, and remembers every upstream
 * process it ever saw, to check for survivors after mcpx is gone.
 */
export class Monitor {
  readonly samples: Sample[] = [];
  readonly seen = new SeenProcesses();
  private timer: NodeJS.Timeout | undefined;
  private readonly t0 = performance.now();
  private peak = 0;

  constructor(
    readonly pid: number,
    private readonly intervalMs = 250,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One reading now (also recorded). */
  sample(): Sample {
    const pids = descendants(this.pid);
    this.seen.add(pids);
    const mem = memoryOf(this.pid);
    if (mem) this.peak = Math.max(this.peak, mem.peak);
    const s = {
      t: (performance.now() - this.t0) / 1000,
      rss: mem?.rss ?? 0,
      upstreams: pids.length,
    };
    this.samples.push(s);
    return s;
  }

  /** mcpx's peak RSS so far (the kernel's high-water mark, VmHWM), bytes. */
  get peakRss(): number {
    return this.peak;
  }

  /** The samples taken between two times (seconds since start). */
  between(from: number, to: number): Sample[] {
    return this.samples.filter((s) => s.t >= from && s.t <= to);
  }
}

/** Megabytes with one decimal. */
export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** p50 / p99 / mean of latencies in ms. */
export function latencies(ms: number[]): { p50: number; p99: number; mean: number } {
  const s = stats(ms);
  // No calls: a mean of 0, as the reports have always printed it.
  return { p50: s.p50, p99: s.p99, mean: s.n === 0 ? 0 : s.mean };
}

/** The echo text server-everything answers for `message`. */
export const echoOf = (message: string) => `Echo: ${message}`;

/** The payload an echo answer carries back, if it is one. */
export function payloadOf(text: string): string | undefined {
  return text.startsWith("Echo: ") ? text.slice("Echo: ".length) : undefined;
}

export { resultText };
