/**
 * Speed: what `"session": "shared"` costs over calling the same server directly, and how many
 * calls per second 32 HTTP clients get through mcpx against the same minimal SDK server on its
 * own. Both arms of each comparison run in one process tree, interleaved call by call (latency)
 * or round by round (throughput), so both see the same machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { percentile, table, type BenchSection } from "./report.js";
import {
  ECHO_SERVER,
  echoConfig,
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
const f2 = (x: number) => x.toFixed(2);

interface Overhead {
  transport: string;
  spacing: string;
  direct: number;
  mcpx: number;
}

/** Alternates one call per arm, `CALLS` each, with `gapMs` of quiet before every call. */
async function interleaved(direct: Arm, mcpx: Arm, gapMs: number): Promise<[number[], number[]]> {
  const times: [number[], number[]] = [[], []];
  const arms = [direct, mcpx];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    // Alternate which arm goes first, so neither always follows the other's call.
    for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
      if (gapMs > 0) await sleep(gapMs);
      const t0 = performance.now();
      await arms[k]!.call();
      if (i >= WARMUP) times[k]!.push(performance.now() - t0);
    }
  }
  return times;
}

async function overheads(transport: string, direct: Arm, mcpx: Arm): Promise<Overhead[]> {
  const rows: Overhead[] = [];
  for (const [spacing, gap] of [
    ["back to back", 0],
    [`spaced ${SPACING_MS} ms`, SPACING_MS],
  ] as const) {
    const [d, m] = await interleaved(direct, mcpx, gap);
    rows.push({ transport, spacing, direct: p50(d), mcpx: p50(m) });
    console.error(`bench speed: ${transport} ${spacing}: direct ${f2(p50(d))} mcpx ${f2(p50(m))}`);
  }
  return rows;
}

/** All clients call back to back, PER_CLIENT calls each; calls per second of wall time. */
async function burst(arms: Arm[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    arms.map(async (a) => {
      for (let i = 0; i < PER_CLIENT; i++) await a.call();
    }),
  );
  return (arms.length * PER_CLIENT) / ((performance.now() - t0) / 1000);
}

async function throughput(directUrl: string, mcpxUrl: string): Promise<[number[], number[]]> {
  const direct = await Promise.all(
    Array.from({ length: CLIENTS }, () => httpArm(directUrl, false)),
  );
  const mcpx = await Promise.all(Array.from({ length: CLIENTS }, () => httpArm(mcpxUrl, true)));
  try {
    await burst(direct);
    await burst(mcpx);
    const rates: [number[], number[]] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate the order of the arms from round to round.
      for (const k of r % 2 === 0 ? [0, 1] : [1, 0])
        rates[k]!.push(await burst([direct, mcpx][k]!));
    }
    return rates;
  } finally {
    await Promise.all([...direct, ...mcpx].map((a) => a.close()));
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
    const httpDirect = await httpArm(echoHttp.url, false);
    const httpMcpx = await httpArm(mcpxHttp.url, true);
    let rows: Overhead[];
    try {
      await untilReady(stdioMcpx.client);
      await untilReady(httpMcpx.client);
      rows = [
        ...(await overheads("stdio", stdioDirect, stdioMcpx)),
        ...(await overheads("http", httpDirect, httpMcpx)),
      ];
    } finally {
      await Promise.all([
        stdioDirect.stop(),
        stdioMcpx.stop(),
        httpDirect.close(),
        httpMcpx.close(),
      ]);
    }
    const [direct, mcpx] = await throughput(echoHttp.url, mcpxHttp.url);
    load.push(os.loadavg()[0] ?? Number.NaN);
    return {
      id: "speed",
      title: "Speed",
      markdown: render(rows, direct, mcpx, performance.now() - started, load),
    };
  } finally {
    await Promise.all([echoHttp.stop(), mcpxHttp.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

function render(
  rows: Overhead[],
  direct: number[],
  mcpx: number[],
  elapsedMs: number,
  load: number[],
): string {
  const ratio = p50(mcpx) / p50(direct);
  const summary = [
    ...rows.map((r) => {
      const over = r.mcpx - r.direct;
      return [
        `shared p50 overhead, ${r.transport}, ${r.spacing}`,
        `${f2(over)} ms (${f2(r.mcpx)} − ${f2(r.direct)})`,
        `≤ ${TARGET.overheadMs} ms`,
        over <= TARGET.overheadMs ? "met" : "MISSED",
      ];
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
      "**mcpx**: the built mcpx (`node dist/index.js`, stdio or `--port 0`) with that server as its one " +
      '`"session": "shared"` stdio upstream, called as `call({ method: "echo.echo" })`; the client speaks the same ' +
      "downstream transport as in the direct arm. Both arms are open at once and called alternately, call by call " +
      `(${CALLS} calls each after ${WARMUP} warm-up; spaced: ${SPACING_MS} ms of quiet before each call, as a model's calls are spaced). ` +
      `Throughput: ${CLIENTS} SDK clients, one MCP session each, ${PER_CLIENT} calls back to back per client per round, ` +
      `${ROUNDS} rounds alternating the arms after one warm-up round each.`,
    "",
    table(["metric", "value", "target", "status"], summary, ["left", "right", "left", "left"]),
    "",
    table(["round", "direct calls/s", "mcpx calls/s", "mcpx / direct"], rounds),
  ].join("\n");
}
