/**
 * Speed: what `"session": "shared"` costs over calling the same server directly, and how many
 * calls per second 32 HTTP clients get through mcpx against the same minimal SDK server on its
 * own. Both arms of each comparison run in one process tree, interleaved call by call (latency)
 * or round by round (throughput), so both see the same machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { descendants } from "../test/helpers/proxy.js";
import { cpuMs } from "./lib/processes.js";
import { percentile } from "./lib/stats.js";
import { table, type BenchSection } from "./report.js";
import {
  ECHO_SERVER,
  echoConfig,
  RELAY,
  httpArm,
  MCPX,
  startEchoHttp,
  startMcpxHttp,
  stdioArm,
  untilReady,
  type Arm,
} from "./speed-arms.js";

const TARGET = { overheadMs: 0.5, throughput: 0.8 };
const CALLS = Number(process.env.MCPX_BENCH_SPEED_CALLS ?? 400);
const WARMUP = 50;
const SPACING_MS = 20;
const CLIENTS = 32;
const ROUNDS = 6;
const PER_CLIENT = 40;

const p50 = (xs: number[]) => percentile(xs, 50);
const f2 = (x: number) => x.toFixed(2);

interface Overhead {
  transport: string;
  spacing: string;
  direct: number;
  mcpx: number;
  /** The byte relay's p50 (stdio only): the floor of any proxy on that transport. */
  relay?: number;
}

/** Calls each arm in turn, `CALLS` each, with `gapMs` of quiet before every call. */
async function interleaved(arms: Arm[], gapMs: number): Promise<number[][]> {
  const times = arms.map((): number[] => []);
  for (let i = 0; i < WARMUP + CALLS; i++) {
    // Rotate which arm goes first, so none always follows the same other arm's call.
    for (let j = 0; j < arms.length; j++) {
      const k = (i + j) % arms.length;
      if (gapMs > 0) await sleep(gapMs);
      const t0 = performance.now();
      await arms[k]!.call();
      if (i >= WARMUP) times[k]!.push(performance.now() - t0);
    }
  }
  return times;
}

async function overheads(
  transport: string,
  direct: Arm,
  mcpx: Arm,
  relay?: Arm,
): Promise<Overhead[]> {
  const rows: Overhead[] = [];
  for (const [spacing, gap] of [
    ["back to back", 0],
    [`spaced ${SPACING_MS} ms`, SPACING_MS],
  ] as const) {
    const [d, m, r] = await interleaved(relay ? [direct, mcpx, relay] : [direct, mcpx], gap);
    rows.push({ transport, spacing, direct: p50(d!), mcpx: p50(m!), ...(r && { relay: p50(r) }) });
    console.error(
      `bench speed: ${transport} ${spacing}: direct ${f2(p50(d!))} mcpx ${f2(p50(m!))}` +
        (r ? ` relay ${f2(p50(r))}` : ""),
    );
  }
  return rows;
}

/** One burst: calls per second, and CPU ms per call of the clients (this process) and of `pids`. */
interface Burst {
  rate: number;
  cpu: number[];
}

/** All clients call back to back, PER_CLIENT calls each. */
async function burst(arms: Arm[], pids: number[]): Promise<Burst> {
  const own = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const before = [own(), ...pids.map(cpuMs)];
  const t0 = performance.now();
  await Promise.all(
    arms.map(async (a) => {
      for (let i = 0; i < PER_CLIENT; i++) await a.call();
    }),
  );
  const calls = arms.length * PER_CLIENT;
  const rate = calls / ((performance.now() - t0) / 1000);
  const after = [own(), ...pids.map(cpuMs)];
  return { rate, cpu: after.map((v, i) => (v - before[i]!) / calls) };
}

interface Throughput {
  direct: Burst[];
  mcpx: Burst[];
}

async function throughput(
  direct: { url: string; pid: number },
  mcpx: { url: string; pid: number },
): Promise<Throughput> {
  const arms = [
    await Promise.all(Array.from({ length: CLIENTS }, () => httpArm(direct.url, false))),
    await Promise.all(Array.from({ length: CLIENTS }, () => httpArm(mcpx.url, true))),
  ];
  // The servers of each arm: the echo server; mcpx and the echo server under it.
  const pids = [[direct.pid], [mcpx.pid, ...descendants(mcpx.pid)]];
  try {
    for (const k of [0, 1]) await burst(arms[k]!, pids[k]!);
    const out: Throughput = { direct: [], mcpx: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate the order of the arms from round to round.
      for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const b = await burst(arms[k]!, pids[k]!);
        (k === 0 ? out.direct : out.mcpx).push(b);
      }
    }
    return out;
  } finally {
    await Promise.all(arms.flat().map((a) => a.close()));
  }
}

export async function runSpeedBench(): Promise<BenchSection> {
  const started = performance.now();
  const load = [os.loadavg()[0] ?? Number.NaN];
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcpx-bench-speed-"));
  const echoHttp = await startEchoHttp();
  const mcpxHttp = await startMcpxHttp(dir);
  try {
    const stdioDirect = await stdioArm([ECHO_SERVER], false);
    const stdioMcpx = await stdioArm([MCPX, echoConfig(dir), "--log-level", "warn"], true);
    const stdioRelay = await stdioArm([RELAY, ECHO_SERVER], false);
    const httpDirect = await httpArm(echoHttp.url, false);
    const httpMcpx = await httpArm(mcpxHttp.url, true);
    let rows: Overhead[];
    try {
      await untilReady(stdioMcpx.client);
      await untilReady(httpMcpx.client);
      rows = [
        ...(await overheads("stdio", stdioDirect, stdioMcpx, stdioRelay)),
        ...(await overheads("http", httpDirect, httpMcpx)),
      ];
    } finally {
      await Promise.all([
        stdioDirect.stop(),
        stdioMcpx.stop(),
        stdioRelay.stop(),
        httpDirect.close(),
        httpMcpx.close(),
      ]);
    }
    const tp = await throughput(echoHttp, mcpxHttp);
    load.push(os.loadavg()[0] ?? Number.NaN);
    return {
      id: "speed",
      title: "Speed",
      markdown: render(rows, tp, performance.now() - started, load),
    };
  } finally {
    await Promise.all([echoHttp.stop(), mcpxHttp.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

function render(rows: Overhead[], tp: Throughput, elapsedMs: number, load: number[]): string {
  const direct = tp.direct.map((b) => b.rate);
  const mcpx = tp.mcpx.map((b) => b.rate);
  const ratio = p50(mcpx) / p50(direct);
  const cpu = (bursts: Burst[], i: number) => f2(p50(bursts.map((b) => b.cpu[i]!)));
  const total = (bursts: Burst[]) => p50(bursts.map((b) => b.cpu.reduce((a, c) => a + c, 0)));
  const cpuRows = [
    ["direct", cpu(tp.direct, 0), cpu(tp.direct, 1), "—", "—", f2(total(tp.direct))],
    ["mcpx", cpu(tp.mcpx, 0), "—", cpu(tp.mcpx, 1), cpu(tp.mcpx, 2), f2(total(tp.mcpx))],
  ];
  const summary = [
    ...rows.flatMap((r) => {
      const over = r.mcpx - r.direct;
      const row = [
        `shared p50 overhead, ${r.transport}, ${r.spacing}`,
        `${f2(over)} ms (${f2(r.mcpx)} − ${f2(r.direct)})`,
        `≤ ${TARGET.overheadMs} ms`,
        over <= TARGET.overheadMs ? "met" : "MISSED",
      ];
      if (r.relay === undefined) return [row];
      const floor = [
        `byte relay p50 overhead, ${r.transport}, ${r.spacing} (the floor)`,
        `${f2(r.relay - r.direct)} ms (${f2(r.relay)} − ${f2(r.direct)})`,
        "—",
        "—",
      ];
      return [row, floor];
    }),
    [
      `throughput, ${CLIENTS} HTTP clients: mcpx / direct (median of ${ROUNDS} rounds)`,
      `${(ratio * 100).toFixed(0)} % (${p50(mcpx).toFixed(0)} / ${p50(direct).toFixed(0)} calls/s)`,
      `≥ ${TARGET.throughput * 100} %`,
      ratio >= TARGET.throughput ? "met" : "MISSED",
    ],
  ];
  const rounds = direct.map((d, i) => [
    String(i + 1),
    d.toFixed(0),
    (mcpx[i] ?? Number.NaN).toFixed(0),
    `${(((mcpx[i] ?? Number.NaN) / d) * 100).toFixed(0)} %`,
  ]);
  return [
    `Reproduce with \`npm run bench -- speed\`. Measured in ${(elapsedMs / 1000).toFixed(1)} s; ` +
      `1-minute load average ${load.map((l) => l.toFixed(2)).join(" at the start, ")} at the end ` +
      `(${os.cpus().length} cores: above that, other work competed for the CPU).`,
    "",
    "The upstream is `bench/echo-server.mjs`, a minimal SDK server (`McpServer`, one `echo` tool). " +
      "**direct**: an SDK client to it, over stdio, or over streamable HTTP on `node:http` (stateful, as the SDK's example). " +
      "**mcpx**: the built mcpx (`node dist/bundle/index.js`, stdio or `--port 0`) with that server as its one " +
      '`"session": "shared"` stdio upstream, called as `call({ method: "echo.echo" })`; the client speaks the same ' +
      "downstream transport as in the direct arm. Both arms are open at once and called alternately, call by call " +
      `(${CALLS} calls each after ${WARMUP} warm-up; spaced: ${SPACING_MS} ms of quiet before each call, as a model's calls are spaced). ` +
      "Over stdio a third arm runs with them: `bench/relay.mjs`, a process that copies bytes between the client " +
      "and the echo server and parses nothing, the floor of any stdio proxy (a second process hop: two pipe " +
      "writes, two wake-ups). " +
      `Throughput: ${CLIENTS} SDK clients, one MCP session each, ${PER_CLIENT} calls back to back per client per round, ` +
      `${ROUNDS} rounds alternating the arms after one warm-up round each.`,
    "",
    table(["metric", "value", "target", "status"], summary, ["left", "right", "left", "left"]),
    "",
    table(["round", "direct calls/s", "mcpx calls/s", "mcpx / direct"], rounds),
    "",
    "Where the CPU goes in the throughput rounds: CPU ms per call (user + system, from /proc; " +
      "median over the rounds) of the 32 clients (this bench process) and of each server process.",
    "",
    table(
      ["arm", "clients", "echo server, HTTP", "mcpx, HTTP", "echo server, stdio under mcpx", "all"],
      cpuRows,
    ),
    "",
    `With every core busy, calls/s follow the CPU a call costs in all processes: ` +
      `direct / mcpx = ${(total(tp.direct) / total(tp.mcpx)).toFixed(2)} here. The mcpx arm runs ` +
      "the same clients, an HTTP server (mcpx) and the echo server behind it; the direct arm the clients " +
      "and one HTTP server. For 80 %, mcpx + its upstream may use at most the echo HTTP server's CPU " +
      "plus a quarter of the direct arm's total.",
  ].join("\n");
}
