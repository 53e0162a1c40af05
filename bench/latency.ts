/**
 * Latency benchmark: what one `call` through mcpx costs next to calling the upstream directly, per
 * session policy, over stdio and HTTP downstream. Every case runs against the real
 * server-everything `echo` tool, side by side in one run; mcpx is the built `dist/index.js`
 * spawned as a user would run it, except one case run in-process to read the pool's state.
 */
import { rmSync } from "node:fs";
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client as V2Client } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import getPort from "get-port";
import { parseConfig } from "../src/config/load.js";
import { createLogger } from "../src/logger.js";
import { createProxy } from "../src/proxy.js";
import { createClientFactory } from "../src/upstream/connection.js";
import { connectClient } from "../test/helpers/inmemory.js";
import {
  descendants,
  startHttp,
  startStdio,
  stop,
  tempDir,
  writeConfig,
  type Running,
} from "../test/helpers/proxy.js";
import { connectHttp } from "./lib/http-client.js";
import { createReaper, memoryKb, untilOutput, type Reaper } from "./lib/processes.js";
import { percentile, stats } from "./lib/stats.js";
import { table, verdict, type BenchSection } from "./report.js";
import { connectDirect, npmServer, resultText, ROOT } from "./upstreams.js";

/** Targets from the design brief: reported next to the numbers, never asserted. */
const TARGET = {
  /** shared p50 − direct p50, ms. */
  sharedOverheadMs: 1,
  /** isolated with pre-warm (spaced) p50 / isolated without pre-warm p50. */
  prewarmRatio: 0.05,
  failed: 0,
  leaked: 0,
} as const;

/** Sample sizes: stable p50/p90 within a ~2 minute run on 2 cores. */
const SIZE = {
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
const SETTLE_MS = 300;
/** Fixed gap between spaced calls out of process: at least this, and ≥ 2× the naive call. */
const MIN_GAP_MS = 400;
/** In-process experiment: how long the bench's factory wrapper holds back a refill's spawn. */
const DEFER_MS = 50;

const SERVER = "everything";
const EVERYTHING = npmServer("@modelcontextprotocol/server-everything", ["stdio"]);
const ECHO = { message: "x" };
const CLIENT_NAME = "mcpx-bench-latency";
const EXPECTED = "Echo: x";

type Downstream = "stdio" | "http" | "in-process" | "direct" | "direct http";

/** Session keys of an mcpx server entry (src/config/schema.ts). */
interface SessionKeys {
  session: "isolated" | "shared";
  prewarm?: number;
}

interface Timings {
  ms: number[];
  /** isError, an exception, or a text other than the echo. */
  failed: number;
}

interface Rss {
  idleKb: number;
  afterKb: number;
  peakKb: number;
}

interface CaseResult {
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

function mcpxEcho(client: DownstreamClient): () => Promise<unknown> {
  return () =>
    client.callTool({
      name: "call",
      arguments: { method: `${SERVER}.echo`, arguments: ECHO },
    });
}

function directEcho(client: Client): () => Promise<unknown> {
  return () => client.callTool({ name: "echo", arguments: ECHO });
}

/** A ping is timed like a call; it fails only by throwing. */
function ping(client: DownstreamClient): () => Promise<unknown> {
  return async () => {
    await client.ping();
    return { content: [{ type: "text", text: EXPECTED }] };
  };
}

function isEcho(result: unknown): boolean {
  return (result as { isError?: boolean }).isError !== true && resultText(result) === EXPECTED;
}

/** Time `n` sequential calls; `between` runs before each call, outside the timing. */
async function measure(
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
async function warmAndMeasure(
  call: () => Promise<unknown>,
  warmup: number,
  n: number,
  between?: () => Promise<void>,
): Promise<Timings> {
  const w = await measure(call, warmup, between);
  const m = await measure(call, n, between);
  return { ms: m.ms, failed: m.failed + w.failed };
}

function merge(parts: readonly Timings[]): Timings {
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
 * Start `node dist/index.js <config>` over stdio or with `--port 0`, run `body`, close, and
 * check nothing is left. RSS of the mcpx process is read idle after startup and after `body`.
 */
async function withMcpx<T>(
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

// ---------------------------------------------------------------------------------------------
// The cases.

async function directWarm(reap: Reaper): Promise<CaseResult> {
  const d = await connectDirect(SERVER, EVERYTHING);
  let timings: Timings;
  let pings: Timings;
  let watched: number[] = [];
  try {
    timings = await warmAndMeasure(directEcho(d.client), SIZE.warmup, SIZE.warm);
    pings = await warmAndMeasure(ping(d.client), SIZE.warmup, SIZE.warm);
  } finally {
    watched = descendants(process.pid);
    await d.close();
  }
  return {
    id: "direct",
    label: "direct, warm session (the floor)",
    downstream: "direct",
    timings,
    backToBack: true,
    leaked: await reap(watched),
    ping: pings,
  };
}

/**
 * server-everything's own streamable HTTP transport, straight from an SDK client: context for the
 * HTTP rows (a different server stack from mcpx's, so only roughly like for like).
 */
async function directHttp(reap: Reaper): Promise<CaseResult> {
  const port = await getPort({ host: "127.0.0.1" });
  const child = spawn(process.execPath, [...EVERYTHING.args.slice(0, 1), "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    // It logs every request to stdout: not read, so not piped.
    stdio: ["ignore", "ignore", "pipe"],
  });
  let timings: Timings;
  let pings: Timings;
  try {
    await untilOutput(child, "stderr", "listening on port", "server-everything");
    const d = await connectHttp(`http://127.0.0.1:${port}/mcp`, CLIENT_NAME);
    try {
      timings = await warmAndMeasure(directEcho(d.client), SIZE.warmup, SIZE.warm);
      pings = await warmAndMeasure(ping(d.client), SIZE.warmup, SIZE.warm);
    } finally {
      await d.close();
    }
  } finally {
    await stop(child);
  }
  return {
    id: "direct-http",
    label: "direct, warm session, server-everything over streamable HTTP",
    downstream: "direct http",
    timings,
    backToBack: true,
    leaked: await reap(child.pid === undefined ? [] : [child.pid]),
    ping: pings,
  };
}

/**
 * The first call on a fresh, idle upstream session: what an isolated call costs at best even
 * with its session pre-warmed (the upstream's own first-call work, JIT and lazy init included).
 */
async function directCold(reap: Reaper): Promise<CaseResult> {
  const parts: Timings[] = [];
  let closing: Promise<void> = Promise.resolve();
  let watched: number[] = [];
  try {
    for (let i = 0; i < SIZE.cold; i++) {
      const d = await connectDirect(SERVER, EVERYTHING);
      // The previous session exits while this one starts, as a used isolated session does.
      await closing;
      await sleep(SETTLE_MS / 3);
      parts.push(await measure(directEcho(d.client), 1));
      watched = descendants(process.pid);
      closing = d.close();
    }
  } finally {
    await closing;
  }
  return {
    id: "direct-cold",
    label: "direct, first call on a fresh idle session",
    downstream: "direct",
    timings: merge(parts),
    backToBack: false,
    leaked: await reap(watched),
    note: `${SIZE.cold} sessions, one call each, ${Math.round(SETTLE_MS / 3)} ms after initialize`,
  };
}

async function sharedCase(downstream: "stdio" | "http", reap: Reaper): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "shared" },
    reap,
    async (m) => ({
      calls: await warmAndMeasure(mcpxEcho(m.run.client), SIZE.warmup, SIZE.warm),
      pings: await warmAndMeasure(ping(m.run.client), SIZE.warmup, SIZE.warm),
    }),
  );
  return {
    id: `shared-${downstream}`,
    label: "mcpx shared",
    downstream,
    timings: value.calls,
    backToBack: true,
    leaked,
    rss,
    ping: value.pings,
  };
}

async function naiveCase(downstream: "stdio" | "http", reap: Reaper): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "isolated", prewarm: 0 },
    reap,
    (m) => warmAndMeasure(mcpxEcho(m.run.client), SIZE.spawnWarmup, SIZE.naive),
  );
  return {
    id: `naive-${downstream}`,
    label: "mcpx isolated, no pre-warm (spawn + initialize per call)",
    downstream,
    timings: value,
    backToBack: true,
    leaked,
    rss,
  };
}

async function prewarmSpacedCase(
  downstream: "stdio" | "http",
  gapMs: number,
  reap: Reaper,
): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "isolated", prewarm: 1 },
    reap,
    (m) =>
      warmAndMeasure(mcpxEcho(m.run.client), SIZE.spawnWarmup, SIZE.prewarm, () => sleep(gapMs)),
  );
  return {
    id: `spaced-${downstream}`,
    label: "mcpx isolated, pre-warm 1, spaced",
    downstream,
    timings: value,
    backToBack: false,
    leaked,
    rss,
    note: `fixed ${gapMs} ms gap before each call`,
  };
}

async function prewarmBackToBackCase(
  downstream: "stdio" | "http",
  reap: Reaper,
): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "isolated", prewarm: 1 },
    reap,
    (m) => warmAndMeasure(mcpxEcho(m.run.client), SIZE.spawnWarmup, SIZE.prewarm),
  );
  return {
    id: `b2b-${downstream}`,
    label: "mcpx isolated, pre-warm 1, back to back",
    downstream,
    timings: value,
    backToBack: true,
    leaked,
    rss,
  };
}

/**
 * Isolated with pre-warm, in-process, each call made once the pool has its spare back. The
 * client factory is wrapped to see when a spare's spawn + initialize is over: `poolStats().spares`
 * counts a spare from the moment its spawn starts, so it alone cannot tell (see the report).
 *
 * Two arms, interleaved call by call so machine load hits both alike: (a) the pool as it is,
 * which spawns the replacement spare while the call runs; (b) the wrapper holds that spawn back
 * DEFER_MS, so it starts once the call is over (what refilling on release would do).
 */
async function prewarmPoolWaitCase(
  reap: Reaper,
): Promise<{ asIs: CaseResult; deferred: CaseResult; refill: number[] }> {
  const config = parseConfig(
    { mcpServers: { [SERVER]: { ...EVERYTHING, session: "isolated", prewarm: 1 } } },
    path.join(ROOT, "bench/mcpx.bench.json"),
    {},
  );
  const logger = createLogger({ level: "warn" });
  let opening = 0;
  let deferNext = false;
  const refill: number[] = [];
  const proxy = createProxy(config, {
    logger,
    factoryFor: (server) => {
      const open = createClientFactory(server, {
        logger,
        connectTimeoutMs: config.discoveryTimeoutMs,
      });
      return async () => {
        opening += 1;
        try {
          if (deferNext) await sleep(DEFER_MS);
          const t0 = performance.now();
          const session = await open();
          refill.push(performance.now() - t0);
          return session;
        } finally {
          opening -= 1;
        }
      };
    },
  });
  const spareBack = async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const s = proxy.context.registry.poolStats()[SERVER];
      // Spare initialized, the used session closed, nothing leased.
      if (opening === 0 && s && s.spares === 1 && s.open === 1 && s.leased === 0) return;
      if (Date.now() > deadline) throw new Error(`spare never came back: ${JSON.stringify(s)}`);
      await sleep(5);
    }
  };
  const arms: [Timings[], Timings[]] = [[], []];
  let watched: number[] = [];
  let downstream: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    await proxy.start();
    if (proxy.context.registry.server(SERVER)?.status !== "ready") {
      throw new Error(`${SERVER} did not start: ${proxy.context.registry.server(SERVER)?.error}`);
    }
    downstream = await connectClient(proxy, { era: "legacy" });
    const call = mcpxEcho(downstream.client);
    const total = SIZE.spawnWarmup + 2 * SIZE.arm;
    for (let i = 0; i < total; i++) {
      await spareBack();
      // The same idle time before each call as the fresh direct sessions get.
      await sleep(SETTLE_MS / 3);
      deferNext = i % 2 === 1;
      const t = await measure(call, 1);
      // Warm-up calls count only their failures.
      (deferNext ? arms[1] : arms[0]).push(
        i >= SIZE.spawnWarmup ? t : { ms: [], failed: t.failed },
      );
    }
    deferNext = false;
  } finally {
    watched = descendants(process.pid);
    try {
      await downstream?.close();
    } finally {
      await proxy.close();
    }
  }
  const leaked = await reap(watched);
  const base = {
    downstream: "in-process" as const,
    backToBack: false,
    leaked,
  };
  return {
    asIs: {
      ...base,
      id: "spaced-inprocess",
      label: "mcpx isolated, pre-warm 1, spaced",
      timings: merge(arms[0]),
      note: `each call once the spare is initialized, + ${Math.round(SETTLE_MS / 3)} ms`,
    },
    deferred: {
      ...base,
      id: "spaced-inprocess-deferred",
      label: `same, refill spawn held back ${DEFER_MS} ms by the bench (experiment)`,
      timings: merge(arms[1]),
      leaked: 0, // one proxy for both arms: its leaks are counted once, on the row above
      note: `interleaved with the row above, call by call; not how mcpx behaves today`,
    },
    // The first open is discovery's session, at startup; the rest are refills.
    refill: refill.slice(1),
  };
}

/** 16 HTTP clients (each its own MCP session) against one mcpx, each N calls back to back. */
async function concurrencyCase(reap: Reaper): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx("http", { session: "shared" }, reap, async (m) => {
    const url = m.url!;
    const extra = await Promise.all(
      Array.from({ length: SIZE.clients - 1 }, () => connectHttp(url, CLIENT_NAME)),
    );
    try {
      const clients = [m.run.client, ...extra.map((e) => e.client)];
      await Promise.all(clients.map((c) => measure(mcpxEcho(c), 10)));
      const t0 = performance.now();
      const parts = await Promise.all(clients.map((c) => measure(mcpxEcho(c), SIZE.perClient)));
      return { timings: merge(parts), wallMs: performance.now() - t0 };
    } finally {
      await Promise.all(extra.map((e) => e.close()));
    }
  });
  return {
    id: "concurrent-http",
    label: `mcpx shared, ${SIZE.clients} concurrent HTTP clients`,
    downstream: "http",
    timings: value.timings,
    backToBack: true,
    wallMs: value.wallMs,
    leaked,
    rss,
    note: `${SIZE.clients} SDK clients × ${SIZE.perClient} calls, one mcpx process`,
  };
}

// ---------------------------------------------------------------------------------------------

export async function runLatencyBench(): Promise<BenchSection> {
  const started = performance.now();
  const loadBefore = os.loadavg()[0] ?? Number.NaN;
  const reap = createReaper(new Set(descendants(process.pid)), "bench latency");
  const cases: CaseResult[] = [];
  const add = (c: CaseResult) => {
    cases.push(c);
    const p50 = percentile(c.timings.ms, 50);
    console.error(`bench latency: ${c.label} [${c.downstream}] p50 ${p50.toFixed(2)} ms`);
    return c;
  };

  const direct = add(await directWarm(reap));
  const directOverHttp = add(await directHttp(reap));
  const cold = add(await directCold(reap));
  const perTransport: Record<
    "stdio" | "http",
    { shared: CaseResult; naive: CaseResult; spaced: CaseResult; b2b: CaseResult; gapMs: number }
  > = {} as never;
  for (const downstream of ["stdio", "http"] as const) {
    const shared = add(await sharedCase(downstream, reap));
    const naive = add(await naiveCase(downstream, reap));
    // Spares refill in about one naive call; twice that leaves them time even on a busy machine.
    const gapMs = Math.max(MIN_GAP_MS, Math.ceil((2 * percentile(naive.timings.ms, 50)) / 50) * 50);
    const spaced = add(await prewarmSpacedCase(downstream, gapMs, reap));
    const b2b = add(await prewarmBackToBackCase(downstream, reap));
    perTransport[downstream] = { shared, naive, spaced, b2b, gapMs };
  }
  const inProcess = await prewarmPoolWaitCase(reap);
  add(inProcess.asIs);
  add(inProcess.deferred);
  add(await concurrencyCase(reap));

  const markdown = render({
    direct,
    directHttp: directOverHttp,
    cold,
    perTransport,
    inProcess: inProcess.asIs,
    deferred: inProcess.deferred,
    refill: inProcess.refill,
    cases,
    elapsedMs: performance.now() - started,
    load: [loadBefore, os.loadavg()[0] ?? Number.NaN],
  });
  return { id: "latency", title: "Latency", markdown };
}

// ---------------------------------------------------------------------------------------------
// Report.

/** Calls per second: overlapping calls over their wall time, sequential ones over their sum. */
function callsPerSec(c: CaseResult): number | undefined {
  if (!c.backToBack) return undefined;
  const ms = c.wallMs ?? c.timings.ms.reduce((a, b) => a + b, 0);
  return (c.timings.ms.length / ms) * 1000;
}

const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
const mb = (kb: number) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : "n/a");

function machine(): string {
  const cpus = os.cpus();
  return `${cpus[0]?.model.trim() ?? "unknown CPU"}, ${cpus.length} cores, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

interface Measures {
  direct: CaseResult;
  directHttp: CaseResult;
  cold: CaseResult;
  perTransport: Record<
    "stdio" | "http",
    { shared: CaseResult; naive: CaseResult; spaced: CaseResult; b2b: CaseResult; gapMs: number }
  >;
  inProcess: CaseResult;
  deferred: CaseResult;
  refill: number[];
  cases: CaseResult[];
  elapsedMs: number;
  /** 1-minute load average when the section started and ended. */
  load: [number, number];
}

/** Whether the fixed gaps covered the refill times measured in-process (said, not assumed). */
function gapVerdict(m: Measures): string {
  const gap = Math.min(m.perTransport.stdio.gapMs, m.perTransport.http.gapMs);
  const over = m.refill.filter((ms) => ms > gap).length;
  return over === 0
    ? `Every refill was shorter than the smaller gap (${gap} ms): out of process the spare was ready for each spaced call.`
    : `${over} of ${m.refill.length} refills took longer than the smaller gap (${gap} ms): a few spaced calls out of process may have waited for their spare, which inflates their tail.`;
}

function render(m: Measures): string {
  const p50 = (c: CaseResult) => stats(c.timings.ms).p50;
  const directP50 = p50(m.direct);
  const failed = m.cases.reduce((s, c) => s + c.timings.failed, 0);
  const calls = m.cases.reduce((s, c) => s + c.timings.ms.length, 0);
  const leaked = m.cases.reduce((s, c) => s + c.leaked, 0);
  const refill = stats(m.refill);
  const out: string[] = [];

  out.push(
    `Machine: ${machine()}. Command: \`npm run bench -- latency\` (builds first). ` +
      "Upstream: `@modelcontextprotocol/server-everything` (stdio) from node_modules, tool `echo` " +
      '`{ message: "x" }`. Direct = an SDK `Client` on a stdio session straight to it; mcpx = ' +
      "`node dist/index.js <config>` spawned per case, spoken to by the SDK `StdioClientTransport` " +
      "(stdio) or `StreamableHTTPClientTransport` (`--port 0`), with " +
      '`call({ method: "everything.echo", arguments: { message: "x" } })`. Times are ' +
      "`performance.now()` around one `callTool` in the client; bench, mcpx and upstreams share " +
      `the machine. Measured in ${(m.elapsedMs / 1000).toFixed(1)} s; 1-minute load average ` +
      `${f2(m.load[0])} at the start, ${f2(m.load[1])} at the end (anything above the core ` +
      "count means other work competed for the CPU and the spawning cases read slow).",
  );

  out.push("### Summary");
  const summary: (string | number)[][] = [];
  for (const d of ["stdio", "http"] as const) {
    const t = m.perTransport[d];
    const overhead = p50(t.shared) - directP50;
    summary.push([
      `shared p50 overhead over direct, ${d} downstream`,
      `${f2(overhead)} ms (${f2(p50(t.shared))} − ${f2(directP50)})`,
      `≤ ${TARGET.sharedOverheadMs} ms`,
      verdict(overhead, TARGET.sharedOverheadMs),
    ]);
  }
  const ratioRow = (label: string, spaced: CaseResult, naive: CaseResult) => {
    const r = p50(spaced) / p50(naive);
    return [
      label,
      `${f2(r * 100)} % (${f2(p50(spaced))} / ${f2(p50(naive))} ms)`,
      `≤ ${TARGET.prewarmRatio * 100} %`,
      verdict(r, TARGET.prewarmRatio),
    ];
  };
  for (const d of ["stdio", "http"] as const) {
    const t = m.perTransport[d];
    summary.push(
      ratioRow(`isolated pre-warm (spaced) p50 / naive isolated p50, ${d}`, t.spaced, t.naive),
    );
  }
  summary.push(
    ratioRow(
      "isolated pre-warm (spaced, pool-state wait, in-process) p50 / naive isolated p50, stdio",
      m.inProcess,
      m.perTransport.stdio.naive,
    ),
  );
  {
    const overHttp = p50(m.perTransport.http.shared) - p50(m.directHttp);
    summary.push([
      "context: shared http p50 − server-everything's own HTTP transport p50",
      `${f2(overHttp)} ms (${f2(p50(m.perTransport.http.shared))} − ${f2(p50(m.directHttp))})`,
      "—",
      "—",
    ]);
  }
  const experiment = ratioRow(
    `experiment: the same with the refill spawn held back ${DEFER_MS} ms (in-process)`,
    m.deferred,
    m.perTransport.stdio.naive,
  );
  summary.push([...experiment.slice(0, 2), experiment[2]!, `(${experiment[3]!})`]);
  summary.push(
    [`failed calls (all cases, ${calls} calls)`, failed, "0", verdict(failed, TARGET.failed)],
    ["leaked processes (all cases)", leaked, "0", verdict(leaked, TARGET.leaked)],
  );
  out.push(table(["metric", "value", "target", "status"], summary, ["left", "right", "left"]));

  out.push("### Per case");
  out.push(
    table(
      [
        "case",
        "downstream",
        "n",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "mean ms",
        "p50 − direct",
        "calls/s",
        "failed",
        "leaked",
      ],
      m.cases.map((c) => {
        const s = stats(c.timings.ms);
        const rate = callsPerSec(c);
        return [
          c.label,
          c.downstream,
          s.n,
          f2(s.p50),
          f2(s.p90),
          f2(s.p99),
          f2(s.mean),
          c === m.direct ? "—" : f2(s.p50 - directP50),
          rate === undefined ? "— (spaced)" : f1(rate),
          c.timings.failed,
          c.leaked,
        ];
      }),
      ["left", "left"],
    ),
  );
  const notes = m.cases.filter((c) => c.note).map((c) => `${c.label} [${c.downstream}]: ${c.note}`);
  out.push(
    "calls/s: one client's sequential calls over the sum of their times; for the concurrent " +
      "case, all calls over the wall time. Warm-up calls (30 for warm cases, 3 for spawning " +
      "ones, 10 per concurrent client) are not in n; their failures are counted. " +
      notes.map((n) => `${n}.`).join(" "),
  );

  out.push("### Where the shared overhead goes");
  const pingRows = [
    m.direct,
    m.directHttp,
    m.perTransport.stdio.shared,
    m.perTransport.http.shared,
  ].map((c) => {
    const pingP50 = stats(c.ping?.ms ?? []).p50;
    const directPing = stats(m.direct.ping?.ms ?? []).p50;
    return [
      c === m.direct || c === m.directHttp ? "direct" : "mcpx shared",
      c.downstream,
      f2(pingP50),
      f2(p50(c)),
      c === m.direct ? "—" : f2(pingP50 - directPing),
      f2(p50(c) - pingP50),
    ];
  });
  out.push(
    table(
      ["session", "downstream", "ping p50 ms", "echo p50 ms", "ping − direct ping", "echo − ping"],
      pingRows,
      ["left", "left"],
    ),
  );
  out.push(
    `${SIZE.warm} pings on the same session after the calls (mcpx answers ping itself). ` +
      "ping − direct ping is what the downstream transport costs; echo − ping is the work of " +
      "the call itself (for mcpx: validation, the forward over the shared upstream session, " +
      "result shaping).",
  );

  out.push("### Isolated with pre-warm: spacing and refill");
  out.push(
    "Out of process the pool cannot be seen, so spaced calls wait a fixed gap of 2× the naive " +
      `call's p50, rounded up to 50 ms and at least ${MIN_GAP_MS} ms ` +
      `(stdio ${m.perTransport.stdio.gapMs} ms, http ${m.perTransport.http.gapMs} ms). ` +
      "The in-process case builds the same proxy with `createProxy` (downstream: `connectClient`, " +
      "in memory) and waits until the pool has its spare back: the client factory is wrapped " +
      "to know when a spare's spawn + initialize is over, and `poolStats()` must show 1 spare, " +
      "1 open session, none leased. Its calls alternate between the pool as it is and the pool " +
      `with each refill's spawn held back ${DEFER_MS} ms by the wrapper (so it starts after the ` +
      "call instead of during it). " +
      `A refill (spawn + initialize of one spare, measured there) took p50 ${f1(refill.p50)} ms, ` +
      `p90 ${f1(refill.p90)} ms, max ${f1(Math.max(...m.refill))} ms over ${refill.n} refills. ` +
      `${gapVerdict(m)} ` +
      `A first call on a fresh, idle direct session costs p50 ${f2(p50(m.cold))} ms against ` +
      `${f2(directP50)} ms warm: the floor of any isolated call, pre-warmed or not.`,
  );

  out.push("### mcpx process memory");
  const rssRows = m.cases
    .filter((c) => c.rss)
    .map((c) => [
      c.label,
      c.downstream,
      mb(c.rss!.idleKb),
      mb(c.rss!.afterKb),
      mb(c.rss!.peakKb),
      c.timings.ms.length,
    ]);
  out.push(
    table(
      [
        "case",
        "downstream",
        "RSS idle after startup, MB",
        "RSS after load, MB",
        "peak, MB",
        "calls",
      ],
      rssRows,
      ["left", "left"],
    ),
  );
  out.push(
    `VmRSS of the mcpx process from /proc/<pid>/status ${SETTLE_MS} ms after it answered ` +
      "initialize, and again right after the case's last call; peak is VmHWM. Upstream " +
      "processes are not included.",
  );
  return out.join("\n\n");
}
