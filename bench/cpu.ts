/**
 * CPU and memory per call, in figures that hold on a loaded machine: the CPU time (utime + stime
 * from /proc/<pid>/stat) the server process spends per call, and its resident memory (VmRSS from
 * /proc/<pid>/status) idle and after the calls. Wall-clock throughput depends on what else runs;
 * CPU time per call and RSS do not (much).
 *
 * Arms, interleaved round by round (three rounds): the built mcpx over HTTP with the minimal echo
 * server (bench/echo-server.mjs) as a shared stdio upstream, beside server-everything and
 * server-memory (three upstreams, as the issue's idle target says); and the echo server itself
 * over HTTP (the SDK's own cost, the floor). 32 SDK streamable-HTTP clients, one session each,
 * call echo back to back. MCPX_BENCH_CPU_CALLS sets the calls per round (default 5,000),
 * MCPX_BENCH_CPU_ROUNDS the rounds (default 3); MCPX_BENCH_NODE_ARGS adds node options to mcpx's
 * command line (e.g. `--max-semi-space-size=4`, to compare V8 settings).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cpuMs, memoryKb } from "./lib/processes.js";
import { percentile } from "./lib/stats.js";
import { table, verdict, type BenchSection } from "./report.js";
import {
  ECHO_SERVER,
  httpArm,
  MCPX,
  startEchoHttp,
  startProcess,
  untilReady,
  type Arm,
  type Proc,
} from "./speed-arms.js";
import { npmServer } from "./upstreams.js";

const CALLS = Number(process.env.MCPX_BENCH_CPU_CALLS ?? 5_000);
const WARMUP = 500;
const CLIENTS = 32;
const ROUNDS = Number(process.env.MCPX_BENCH_CPU_ROUNDS ?? 3);
const NODE_ARGS = (process.env.MCPX_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
/** Quiet after the upstreams are ready, before the first idle reading. */
const SETTLE_MS = 2_000;
/**
 * Quiet before the settled readings of mcpx (after start, and after the calls): mcpx gives memory
 * back once idle for 40–50 s (src/heap.ts, IdleTrim).
 */
export const SETTLED_MS = 55_000;
const TARGET = { idleMb: 70, afterMb: 120 };

interface Round {
  arm: "mcpx" | "mcpx, V8 defaults" | "echo server";
  round: number;
  idleMb: number;
  /** mcpx only: RSS `SETTLED_MS` after ready, and `SETTLED_MS` after the calls (clients connected). */
  settledMb?: number;
  afterMb: number;
  afterSettledMb?: number;
  peakMb: number;
  cpuPerCallMs: number;
}

/** The mcpx config: echo (called) beside two more upstreams, every one shared. */
export function threeUpstreams(dir: string): string {
  const file = path.join(dir, "cpu.json");
  const shared = (spec: { command: string; args: string[] }) => ({ ...spec, session: "shared" });
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        echo: shared({ command: process.execPath, args: [ECHO_SERVER] }),
        everything: shared(npmServer("@modelcontextprotocol/server-everything", ["stdio"])),
        memory: shared(npmServer("@modelcontextprotocol/server-memory")),
      },
    }),
  );
  return file;
}

/** `total` calls spread over the arms, each arm one call at a time. */
async function spread(arms: Arm[], total: number): Promise<void> {
  let next = 0;
  await Promise.all(
    arms.map(async (arm) => {
      while (next++ < total) await arm.call();
    }),
  );
}

async function measure(
  label: Round["arm"],
  round: number,
  server: Proc & { url: string },
  viaMcpx: boolean,
  settle = false,
): Promise<Round> {
  const arms: (Arm & { close(): Promise<void> })[] = [];
  try {
    const first = await httpArm(server.url, viaMcpx);
    arms.push(first);
    if (viaMcpx) await untilReady(first.client);
    await sleep(SETTLE_MS);
    const idle = memoryKb(server.pid).rssKb;
    if (settle) await sleep(SETTLED_MS - SETTLE_MS);
    const settled = memoryKb(server.pid).rssKb;
    for (let i = 1; i < CLIENTS; i++) arms.push(await httpArm(server.url, viaMcpx));
    await spread(arms, WARMUP);
    const cpuBefore = cpuMs(server.pid);
    await spread(arms, CALLS);
    const cpu = cpuMs(server.pid) - cpuBefore;
    const after = memoryKb(server.pid);
    if (settle) await sleep(SETTLED_MS);
    const afterSettled = memoryKb(server.pid).rssKb;
    return {
      arm: label,
      round,
      idleMb: idle / 1024,
      afterMb: after.rssKb / 1024,
      ...(settle ? { settledMb: settled / 1024, afterSettledMb: afterSettled / 1024 } : {}),
      peakMb: after.peakKb / 1024,
      cpuPerCallMs: cpu / CALLS,
    };
  } finally {
    await Promise.all(arms.map((a) => a.close()));
    await server.stop();
  }
}

/**
 * V8's own heap sizing, which mcpx replaces before serving (src/heap.ts): naming the flags on
 * node's command line makes mcpx leave them as V8 has them, for the comparison. The old
 * generation's growth (0: V8's default), and the young generation's largest size at V8's own
 * (16 MB semi-spaces), which also turns off mcpx's growth factor and its cap at 16 MB in all.
 */
const V8_DEFAULTS = ["--heap-growing-percent=0", "--max-semi-space-size=16"];

async function mcpxRound(dir: string, round: number, v8Defaults: boolean): Promise<Round> {
  const p = await startProcess(
    [
      ...NODE_ARGS,
      ...(v8Defaults ? V8_DEFAULTS : []),
      MCPX,
      threeUpstreams(dir),
      "--port",
      "0",
      "--log-level",
      "warn",
    ],
    /mcpx listening on (\S+)/,
  );
  return measure(
    v8Defaults ? "mcpx, V8 defaults" : "mcpx",
    round,
    { ...p, url: p.match[1]! },
    true,
    !v8Defaults,
  );
}

export async function runCpuBench(): Promise<BenchSection> {
  const started = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcpx-bench-cpu-"));
  const rounds: Round[] = [];
  const load: number[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      load.push(os.loadavg()[0]!);
      rounds.push(await mcpxRound(dir, r + 1, false));
      rounds.push(await mcpxRound(dir, r + 1, true));
      rounds.push(await measure("echo server", r + 1, await startEchoHttp(), false));
      const last = rounds.slice(-3);
      console.error(
        `bench cpu: round ${r + 1}: ${last.map((x) => `${x.arm} ${x.cpuPerCallMs.toFixed(3)} ms/call, RSS ${x.idleMb.toFixed(1)} (settled ${x.settledMb?.toFixed(1) ?? "—"}) → ${x.afterMb.toFixed(1)} (settled ${x.afterSettledMb?.toFixed(1) ?? "—"}) MB`).join("; ")}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    id: "cpu",
    title: "CPU and memory per call",
    markdown: render(rounds, load, performance.now() - started),
  };
}

const med = (xs: number[]) => percentile(xs, 50);

function render(rounds: Round[], load: number[], ms: number): string {
  const of = (arm: Round["arm"]) => rounds.filter((r) => r.arm === arm);
  const mcpx = of("mcpx");
  const defaults = of("mcpx, V8 defaults");
  const echo = of("echo server");
  const mb = (x: number | undefined) => (x === undefined ? "—" : x.toFixed(1));
  const row = (r: Round) => [
    `${r.arm}, round ${r.round}`,
    r.cpuPerCallMs.toFixed(3),
    mb(r.idleMb),
    mb(r.settledMb),
    mb(r.afterMb),
    mb(r.afterSettledMb),
    mb(r.peakMb),
  ];
  const start = med(mcpx.map((r) => r.idleMb));
  const idle = med(mcpx.map((r) => r.settledMb ?? r.idleMb));
  const afterIdle = med(mcpx.map((r) => r.afterSettledMb ?? r.afterMb));
  const after = med(mcpx.map((r) => r.afterMb));
  const cpu = med(mcpx.map((r) => r.cpuPerCallMs));
  const floor = med(echo.map((r) => r.cpuPerCallMs));
  const plain = {
    idle: med(defaults.map((r) => r.idleMb)),
    after: med(defaults.map((r) => r.afterMb)),
    cpu: med(defaults.map((r) => r.cpuPerCallMs)),
  };
  return [
    "Reproduce with `npm run bench -- cpu`.",
    "",
    `CPU time (utime + stime from /proc/<pid>/stat, 10 ms ticks) the server process spends per call over ${CALLS.toLocaleString("en-US")} calls after ${WARMUP} warm-up calls, and its resident memory (VmRSS) idle and after those calls, with ${CLIENTS} SDK streamable-HTTP clients calling echo back to back. "mcpx": the built mcpx over HTTP with the minimal echo server as a shared stdio upstream beside server-everything and server-memory (three upstreams; RSS is read ${SETTLE_MS / 1000} s after they are ready, "settled" ${SETTLED_MS / 1000} s after, once mcpx has given back what start-up took (src/heap.ts, IdleTrim), and again ${SETTLED_MS / 1000} s after the calls, the clients still connected). "mcpx, V8 defaults": the same with \`${V8_DEFAULTS.join(" ")}\` on node's command line, V8's own heap sizing, which mcpx otherwise replaces (src/heap.ts). "echo server": the same minimal SDK server over HTTP on its own (one SDK server per session): the floor. ${ROUNDS} rounds, the arms interleaved; load average (1 min) at each round's start: ${load.map((l) => l.toFixed(1)).join(", ")}. These figures hold on a loaded machine; calls per second do not.`,
    "",
    table(
      [
        "arm, round",
        "CPU ms/call",
        "RSS 2 s after ready MB",
        "RSS settled MB",
        "RSS after calls MB",
        "RSS settled after calls MB",
        "peak RSS MB",
      ],
      [...rounds.map(row)],
    ),
    "",
    table(
      ["metric (median of rounds)", "value", "target", "status"],
      [
        ["mcpx RSS 2 s after its upstreams are ready", `${start.toFixed(1)} MB`, "—", "—"],
        [
          "mcpx RSS idle, 3 upstreams (settled)",
          `${idle.toFixed(1)} MB`,
          `≤ ${TARGET.idleMb} MB`,
          verdict(idle, TARGET.idleMb),
        ],
        [
          `mcpx RSS after ${(WARMUP + CALLS).toLocaleString("en-US")} calls`,
          `${after.toFixed(1)} MB`,
          `≤ ${TARGET.afterMb} MB`,
          verdict(after, TARGET.afterMb),
        ],
        [
          `mcpx RSS ${SETTLED_MS / 1000} s after the calls (clients connected)`,
          `${afterIdle.toFixed(1)} MB`,
          "—",
          "—",
        ],
        ["mcpx CPU per call", `${cpu.toFixed(3)} ms`, "down", "—"],
        [
          "mcpx with V8's default heap sizing: RSS idle / after, CPU per call",
          `${plain.idle.toFixed(1)} MB / ${plain.after.toFixed(1)} MB, ${plain.cpu.toFixed(3)} ms`,
          "(comparison)",
          "—",
        ],
        ["echo server CPU per call", `${floor.toFixed(3)} ms`, "(floor)", "—"],
        ["mcpx / echo server CPU", `${(cpu / floor).toFixed(2)} ×`, "—", "—"],
      ],
      ["left", "right", "left", "left"],
    ),
    "",
    `Measured in ${(ms / 1000).toFixed(0)} s.`,
  ].join("\n");
}
