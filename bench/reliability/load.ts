/**
 * `npm run load`: many `call`s of everything.echo, each with a unique payload, through the built
 * mcpx — from 32 concurrent HTTP clients (half 2025-era sessions, half 2026-07-28 stateless) with
 * the upstream `shared` and then `isolated`, and with 32 in flight on one stdio session. Every
 * request must get exactly one answer carrying its own id and payload; mcpx's RSS and the
 * upstream processes under it are read from /proc before, during and after, and every upstream
 * it ever had must be gone once it is stopped. Exit 1 on any lost, duplicated, crossed or failed
 * answer, or a leaked process.
 *
 *   node --import tsx bench/reliability/load.ts [--calls 5000] [--clients 32]
 *        [--stdio-calls 2000] [--in-flight 32] [--ci] [--no-write]
 *   --ci  a short run for CI (1,000 / 100 isolated / 500 stdio calls), RESULTS.md untouched
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { table, type BenchSection } from "../report.js";
import { writeSections } from "../results.js";
import { HttpRpc, StdioRpc, type RpcAnswer } from "../../test/helpers/rpc.js";
import {
  configFile,
  echoOf,
  everything,
  latencies,
  mb,
  Monitor,
  resultText,
  startHttpMcpx,
  stopProcess,
  untilHealthy,
  untilStdioReady,
} from "./mcpx.js";
import { untilCount, type Tally, newTally, problems } from "./tally.js";

type Policy = "shared" | "isolated";

interface Run {
  name: string;
  calls: number;
  concurrency: number;
  tally: Tally;
  seconds: number;
  peakRss: number;
  before: number;
  during: number;
  after: number;
  survivors: number;
}

const { values: opts } = parseArgs({
  options: {
    calls: { type: "string" },
    "isolated-calls": { type: "string" },
    clients: { type: "string", default: "32" },
    "stdio-calls": { type: "string" },
    "in-flight": { type: "string", default: "32" },
    ci: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
  },
});
const CALLS = Number(opts.calls ?? (opts.ci ? 1000 : 5000));
// Isolated spawns one upstream process per call: CI's 2 cores get fewer of them.
const ISOLATED_CALLS = Number(opts["isolated-calls"] ?? (opts.ci ? 100 : CALLS));
const CLIENTS = Number(opts.clients);
const STDIO_CALLS = Number(opts["stdio-calls"] ?? (opts.ci ? 500 : 2000));
const IN_FLIGHT = Number(opts["in-flight"]);
const CALL_TIMEOUT_MS = 120_000;

function configOf(policy: Policy): unknown {
  // A burst grows isolated spares up to maxSessions; they close after idleTimeout. A short one
  // lets "after" show that they do (the default, 5 minutes, would outlast the run).
  const idle = policy === "isolated" ? { idleTimeout: 2_000 } : {};
  return { mcpServers: { everything: { ...everything(), session: policy, ...idle } } };
}

/** The arguments of `call` for one echo. */
const echoCall = (message: string) => ({
  name: "call",
  arguments: { method: "everything.echo", arguments: { message } },
});

/** Check one answer against the payload sent; counts into `tally`. */
function judge(tally: Tally, answer: RpcAnswer, payload: string, ms: number): void {
  tally.latencies.push(ms);
  if (answer.error || answer.result?.isError) {
    tally.failed++;
    if (tally.samples.length < 5) tally.samples.push(JSON.stringify(answer).slice(0, 300));
    return;
  }
  if (resultText(answer) === echoOf(payload)) tally.ok++;
  else {
    tally.crossed++;
    if (tally.samples.length < 5)
      tally.samples.push(`crossed: ${resultText(answer).slice(0, 200)}`);
  }
}

/** `workers` loops taking the next call number until `calls` are sent. */
async function drive(
  calls: number,
  workers: number,
  one: (i: number, worker: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = next++; i < calls; i = next++) await one(i, w);
    }),
  );
}

/** The watched mcpx run: before, the load, after, then stop and count survivors. */
async function watched(
  monitor: Monitor,
  load: () => Promise<void>,
  stop: () => Promise<unknown>,
): Promise<Pick<Run, "seconds" | "peakRss" | "before" | "during" | "after" | "survivors">> {
  const before = monitor.sample().upstreams;
  monitor.start();
  const t0 = performance.now();
  await load();
  const seconds = (performance.now() - t0) / 1000;
  const during = Math.max(...monitor.samples.map((s) => s.upstreams));
  // Isolated sessions end and their processes exit after the answers: wait for the count to
  // settle back (bounded) before reading "after".
  const after = await untilCount(() => monitor.sample().upstreams, before, 30_000);
  monitor.stop();
  const peakRss = monitor.peakRss;
  await stop();
  const survivors = (await monitor.seen.untilGone(20_000)).length;
  return { seconds, peakRss, before, during, after, survivors };
}

async function httpRun(policy: Policy, calls: number): Promise<Run> {
  const cfg = configFile(configOf(policy));
  const mcpx = await startHttpMcpx(cfg.file, ["--log-level", "warn"]);
  try {
    await untilHealthy(mcpx.url);
    const clients = Array.from(
      { length: CLIENTS },
      (_, i) => new HttpRpc(mcpx.url, i % 2 === 0 ? "legacy" : "modern", `load-${policy}-${i}`),
    );
    await Promise.all(clients.map((c) => c.open()));
    const tally = newTally();
    const monitor = new Monitor(mcpx.child.pid!);
    const run = await watched(
      monitor,
      () =>
        drive(calls, CLIENTS, async (i, w) => {
          const client = clients[w]!;
          const payload = `${policy}-${i}-${randomUUID()}-ü"\\`;
          const id = `${client.name}-${i}`;
          const t0 = performance.now();
          tally.sent++;
          try {
            const signal = AbortSignal.timeout(CALL_TIMEOUT_MS);
            const answer = await client.request("tools/call", echoCall(payload), id, signal);
            judge(tally, answer, payload, performance.now() - t0);
          } catch (error) {
            // No answer, several, or one with another id (HttpRpc.request checks each POST).
            tally.lost++;
            if (tally.samples.length < 5) tally.samples.push(String(error).slice(0, 300));
          }
        }),
      async () => {
        await Promise.all(clients.map((c) => c.close()));
        await stopProcess(mcpx.child);
      },
    );
    return {
      name: `HTTP, ${CLIENTS} clients, ${policy}`,
      calls,
      concurrency: CLIENTS,
      tally,
      ...run,
    };
  } finally {
    await stopProcess(mcpx.child);
    cfg.remove();
  }
}

async function stdioRun(calls: number): Promise<Run> {
  const cfg = configFile(configOf("shared"));
  const rpc = await StdioRpc.start(cfg.file, { args: ["--log-level", "warn"] });
  try {
    await untilStdioReady(rpc);
    const tally = newTally();
    const monitor = new Monitor(rpc.pid);
    const run = await watched(
      monitor,
      () =>
        drive(calls, IN_FLIGHT, async (i) => {
          const payload = `stdio-${i}-${randomUUID()}`;
          const t0 = performance.now();
          tally.sent++;
          try {
            const answer = await rpc.request("tools/call", echoCall(payload), CALL_TIMEOUT_MS);
            judge(tally, answer, payload, performance.now() - t0);
          } catch (error) {
            tally.lost++;
            if (tally.samples.length < 5) tally.samples.push(String(error).slice(0, 300));
          }
        }),
      () => rpc.close(),
    );
    Object.assign(tally, rpc.anomalies);
    return {
      name: `stdio, ${IN_FLIGHT} in flight, shared`,
      calls,
      concurrency: IN_FLIGHT,
      tally,
      ...run,
    };
  } finally {
    await rpc.close();
    cfg.remove();
  }
}

function render(runs: Run[]): string {
  const rows = runs.map((r) => {
    const l = latencies(r.tally.latencies);
    return [
      r.name,
      r.calls,
      r.tally.ok,
      r.tally.lost + r.tally.duplicates + r.tally.strays,
      r.tally.crossed,
      r.tally.failed,
      l.p50.toFixed(1),
      l.p99.toFixed(1),
      (r.calls / r.seconds).toFixed(0),
      mb(r.peakRss),
      `${r.before} / ${r.during} / ${r.after}`,
      r.survivors,
    ];
  });
  const headers = [
    "run",
    "calls",
    "answered right",
    "lost or duplicated",
    "crossed",
    "errors",
    "p50 ms",
    "p99 ms",
    "calls/s",
    "mcpx peak RSS MB",
    "upstreams before / during (max) / after",
    "left after mcpx stopped",
  ];
  return [
    "Each call is `call({ method: \"everything.echo\", arguments: { message } })` with a unique message; an answer counts as right only when it carries its request's id and echoes that request's message. Latency is from the client's send to its answer. Reproduce with `npm run load`.",
    "",
    table(headers, rows),
  ].join("\n");
}

async function main(): Promise<void> {
  const runs: Run[] = [];
  for (const [policy, calls] of [
    ["shared", CALLS],
    ["isolated", ISOLATED_CALLS],
  ] as const) {
    console.log(`load: ${calls} calls over HTTP, ${CLIENTS} clients, ${policy}...`);
    runs.push(await httpRun(policy, calls));
  }
  console.log(`load: ${STDIO_CALLS} calls over stdio, ${IN_FLIGHT} in flight...`);
  runs.push(await stdioRun(STDIO_CALLS));
  const markdown = render(runs);
  console.log(`\n${markdown}\n`);
  const bad = runs.flatMap((r) =>
    problems(r.name, r.tally, r.calls, r.survivors, r.after > r.before),
  );
  for (const line of bad) console.error(`FAIL ${line}`);
  if (!opts.ci && !opts["no-write"] && bad.length === 0) {
    const section: BenchSection = { id: "load", title: "Load", markdown };
    writeSections([section]);
  }
  process.exitCode = bad.length === 0 ? 0 : 1;
}

await main();
