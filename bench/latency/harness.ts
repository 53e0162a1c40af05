/**
 * The latency benchmark's harness: sample sizes, what a case returns, timing calls, and mcpx
 * spawned out of process as a user runs it.
 */
import { rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client as V2Client } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  descendants,
  startHttp,
  startStdio,
  tempDir,
  writeConfig,
  type Running,
} from "../../test/helpers/proxy.js";
import { memoryKb, type Reaper } from "../lib/processes.js";
import { npmServer, resultText } from "../upstreams.js";

/** Sample sizes: stable p50/p90 within a ~2 minute run on 2 cores. */
export const SIZE = {
  /** Warm cases (direct, shared): measured calls and warm-up calls before them. */
  warm: 300,
  warmup: 30,
  /** Naive isolated: one spawn per call. */
  naive: 40,
  /** Isolated with pre-warm, spaced and back to back. */
  prewarm: 25,
  /** In-process spaced calls per arm (refill as mcpx does it / refill deferred). */
  arm: 20,
  /** Warm-up calls of the cases that spawn. */
  spawnWarmup: 3,
  /** Fresh direct sessions, one first call each. */
  cold: 12,
  /** 16 HTTP clients, each this many calls back to back. */
  clients: 16,
  perClient: 60,
} as const;

/** Idle time after a process or session starts before it is measured (RSS, first call). */
export const SETTLE_MS = 300;
/** Fixed gap between spaced calls out of process: at least this, and ≥ 2× the naive call. */
export const MIN_GAP_MS = 400;
/** In-process experiment: how long the bench's factory wrapper holds back a refill's spawn. */
export const DEFER_MS = 50;

export const SERVER = "everything";
export const EVERYTHING = npmServer("@modelcontextprotocol/server-everything", ["stdio"]);
const ECHO = { message: "x" };
export const CLIENT_NAME = "mcpx-bench-latency";
const EXPECTED = "Echo: x";

export type Downstream = "stdio" | "http" | "in-process" | "direct" | "direct http";

/** Session keys of an mcpx server entry (src/config/schema.ts). */
interface SessionKeys {
  session: "isolated" | "shared";
  prewarm?: number;
}

export interface Timings {
  ms: number[];
  /** isError, an exception, or a text other than the echo. */
  failed: number;
}

export interface Rss {
  idleKb: number;
  afterKb: number;
  peakKb: number;
}

export interface CaseResult {
  id: string;
  label: string;
  downstream: Downstream;
  timings: Timings;
  /** Calls ran back to back: calls/s is meaningful. */
  backToBack: boolean;
  /** Wall time of the measured calls, when they overlapped (concurrency). */
  wallMs?: number;
  leaked: number;
  rss?: Rss;
  /** Pings on the same session: the downstream round trip without an upstream. */
  ping?: Timings;
  note?: string;
}

/** A downstream client of mcpx: the test helpers' (SDK v2) or a plain SDK 1.x one. */
type DownstreamClient = Client | V2Client;

export function mcpxEcho(client: DownstreamClient): () => Promise<unknown> {
  return () =>
    client.callTool({
      name: "call",
      arguments: { method: `${SERVER}.echo`, arguments: ECHO },
    });
}

export function directEcho(client: Client): () => Promise<unknown> {
  return () => client.callTool({ name: "echo", arguments: ECHO });
}

/** A ping is timed like a call; it fails only by throwing. */
export function ping(client: DownstreamClient): () => Promise<unknown> {
  return async () => {
    await client.ping();
    return { content: [{ type: "text", text: EXPECTED }] };
  };
}

function isEcho(result: unknown): boolean {
  return (result as { isError?: boolean }).isError !== true && resultText(result) === EXPECTED;
}

/** Time `n` sequential calls; `between` runs before each call, outside the timing. */
export async function measure(
  call: () => Promise<unknown>,
  n: number,
  between?: () => Promise<void>,
): Promise<Timings> {
  const ms: number[] = [];
  let failed = 0;
  for (let i = 0; i < n; i++) {
    if (between) await between();
    const t0 = performance.now();
    let ok: boolean;
    try {
      ok = isEcho(await call());
    } catch {
      ok = false; // counted, and the run goes on: a failure is a data point here
    }
    ms.push(performance.now() - t0);
    if (!ok) failed++;
  }
  return { ms, failed };
}

/** Warm up, then measure; failed warm-up calls count too. */
export async function warmAndMeasure(
  call: () => Promise<unknown>,
  warmup: number,
  n: number,
  between?: () => Promise<void>,
): Promise<Timings> {
  const w = await measure(call, warmup, between);
  const m = await measure(call, n, between);
  return { ms: m.ms, failed: m.failed + w.failed };
}

export function merge(parts: readonly Timings[]): Timings {
  return { ms: parts.flatMap((p) => p.ms), failed: parts.reduce((s, p) => s + p.failed, 0) };
}

// ---------------------------------------------------------------------------------------------
// mcpx out of process, as a user runs it.

interface McpxRun {
  run: Running;
  /** The HTTP URL, for extra clients. */
  url?: string;
}

/**
 * Start `node dist/bundle/index.js <config>` over stdio or with `--port 0`, run `body`, close, and
 * check nothing is left. RSS of the mcpx process is read idle after startup and after `body`.
 */
export async function withMcpx<T>(
  downstream: "stdio" | "http",
  session: SessionKeys,
  reap: Reaper,
  body: (m: McpxRun) => Promise<T>,
): Promise<{ value: T; rss: Rss; leaked: number }> {
  const dir = tempDir("mcpx-bench-latency-");
  const file = writeConfig({ mcpServers: { [SERVER]: { ...EVERYTHING, ...session } } }, dir);
  const args = ["--log-level", "warn"];
  let started: McpxRun | undefined;
  let watched: number[] = [];
  let outcome: { value: T; rss: Rss } | undefined;
  try {
    if (downstream === "stdio") {
      // 2025-era clients: the ping case needs ping, which 2026-07-28 dropped.
      started = { run: await startStdio(file, args, { era: "legacy" }) };
    } else {
      const http = await startHttp(file, args, {}, { era: "legacy" });
      started = { run: http, url: http.url };
    }
    const pid = started.run.pid;
    await sleep(SETTLE_MS);
    const idleKb = memoryKb(pid).rssKb;
    const value = await body(started);
    const after = memoryKb(pid);
    outcome = { value, rss: { idleKb, afterKb: after.rssKb, peakKb: after.peakKb } };
  } finally {
    if (started) {
      watched = [started.run.pid, ...descendants(started.run.pid)];
      await started.run.close().catch((err: unknown) => console.error("bench: close failed", err));
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const leaked = await reap(watched);
  return { ...outcome, leaked };
}
