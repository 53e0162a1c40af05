/**
 * Isolated sessions: the `isolated` pool of the built mcpx (HTTP) in front of server-everything
 * (stdio), two patterns.
 * - Burst: 32 HTTP clients (half 2025-era sessions, half 2026-07-28) calling `everything.echo`
 *   back to back, every answer checked against its payload; failed calls counted with their
 *   errors; mcpx's RSS (and its children's) and its upstream processes read from /proc.
 * - Paced: one client calling every 400 ms and every 1,000 ms, and calls to a pool without
 *   spares (a fresh session's cost: spawn + initialize + the call), the three arms interleaved
 *   round by round in one mcpx.
 *
 *   npm run bench -- isolated   (MCPX_BENCH_ISOLATED_CALLS: burst calls, default 900)
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { memoryOf } from "../test/helpers/procfs.js";
import { descendants } from "../test/helpers/proxy.js";
import { HttpRpc, type RpcAnswer } from "../test/helpers/rpc.js";
import { percentile } from "./lib/stats.js";
import {
  configFile,
  echoOf,
  everything,
  resultText,
  startHttpMcpx,
  stopProcess,
  untilHealthy,
} from "./reliability/mcpx.js";
import { SeenProcesses } from "../test/helpers/procfs.js";
import { table, type BenchSection } from "./report.js";

const CALLS = Number(process.env.MCPX_BENCH_ISOLATED_CALLS ?? 900);
const CLIENTS = 32;
const MAX_SESSIONS = 8;
const ROUNDS = 3;
/** Paced calls per arm and round (after one warm-up call each). */
const PACED = Number(process.env.MCPX_BENCH_ISOLATED_PACED ?? 15);
const FRESH = 6;
const CALL_TIMEOUT_MS = 120_000;

const MB = 1024 * 1024;
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);

/** mcpx's RSS, its children's summed RSS, and how many children, now. */
function sample(pid: number): { rss: number; children: number; upstreams: number } {
  const kids = descendants(pid);
  let children = 0;
  for (const k of kids) {
    // A child exiting between the listing and the read has no VmRSS left: not counted.
    const rss = memoryOf(k)?.rss;
    if (rss !== undefined && Number.isFinite(rss)) children += rss;
  }
  return { rss: memoryOf(pid)?.rss ?? 0, children, upstreams: kids.length };
}

const echoCall = (message: string) => ({
  name: "call",
  arguments: { method: "everything.echo", arguments: { message } },
});

function failure(answer: RpcAnswer, payload: string): string | undefined {
  if (answer.error) return `error ${answer.error.code}: ${answer.error.message}`;
  const text = resultText(answer);
  if (answer.result?.isError) return text;
  return text === echoOf(payload) ? undefined : `crossed: ${text.slice(0, 120)}`;
}

interface Burst {
  calls: number;
  failed: number;
  errors: Map<string, number>;
  seconds: number;
  p50: number;
  p99: number;
  peakRss: number;
  peakChildren: number;
  peakUpstreams: number;
  settledRss: number;
  survivors: number;
}

async function burst(): Promise<Burst> {
  const cfg = configFile({
    mcpServers: {
      everything: { ...everything(), session: "isolated", maxSessions: MAX_SESSIONS },
    },
  });
  const mcpx = await startHttpMcpx(cfg.file, ["--log-level", "warn"]);
  const seen = new SeenProcesses();
  try {
    await untilHealthy(mcpx.url);
    const pid = mcpx.child.pid!;
    const clients = Array.from(
      { length: CLIENTS },
      (_, i) => new HttpRpc(mcpx.url, i % 2 === 0 ? "legacy" : "modern", `isolated-${i}`),
    );
    await Promise.all(clients.map((c) => c.open()));
    let peakRss = 0;
    let peakChildren = 0;
    let peakUpstreams = 0;
    const watch = setInterval(() => {
      const s = sample(pid);
      seen.add(descendants(pid));
      peakRss = Math.max(peakRss, s.rss);
      peakChildren = Math.max(peakChildren, s.children);
      peakUpstreams = Math.max(peakUpstreams, s.upstreams);
    }, 100);
    const errors = new Map<string, number>();
    const times: number[] = [];
    let failed = 0;
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        for (let i = next++; i < CALLS; i = next++) {
          const payload = `iso-${i}-${randomUUID()}`;
          const start = performance.now();
          let why: string | undefined;
          try {
            const answer = await client.request(
              "tools/call",
              echoCall(payload),
              `${client.name}-${i}`,
              AbortSignal.timeout(CALL_TIMEOUT_MS),
            );
            why = failure(answer, payload);
          } catch (err) {
            const cause = err instanceof Error ? err.cause : undefined;
            const detail = cause instanceof Error ? ` (${cause.message})` : "";
            why = `no answer: ${String(err)}${detail}`.slice(0, 300);
          }
          times.push(performance.now() - start);
          if (why !== undefined) {
            failed++;
            const key = why.replace(/iso-\d+-[0-9a-f-]+/g, "<payload>").slice(0, 200);
            errors.set(key, (errors.get(key) ?? 0) + 1);
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(watch);
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await sleep(2_000);
    const settledRss = sample(pid).rss;
    await stopProcess(mcpx.child);
    const survivors = (await seen.untilGone(20_000)).length;
    return {
      calls: CALLS,
      failed,
      errors,
      seconds,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      peakRss,
      peakChildren,
      peakUpstreams,
      settledRss,
      survivors,
    };
  } finally {
    await stopProcess(mcpx.child);
    cfg.remove();
  }
}

interface Paced {
  gap400: number[];
  gap1000: number[];
  fresh: number[];
}

export async function paced(): Promise<Paced> {
  const cfg = configFile({
    mcpServers: {
      p400: { ...everything(), session: "isolated", prewarm: 1 },
      p1000: { ...everything(), session: "isolated", prewarm: 1 },
      fresh: { ...everything(), session: "isolated", prewarm: 0 },
    },
  });
  const mcpx = await startHttpMcpx(cfg.file, ["--log-level", "warn"]);
  try {
    await untilHealthy(mcpx.url);
    const client = new HttpRpc(mcpx.url, "legacy", "paced");
    await client.open();
    const one = async (server: string): Promise<number> => {
      const payload = `${server}-${randomUUID()}`;
      const t0 = performance.now();
      const answer = await client.request("tools/call", {
        name: "call",
        arguments: { method: `${server}.echo`, arguments: { message: payload } },
      });
      const ms = performance.now() - t0;
      const why = failure(answer, payload);
      if (why !== undefined) throw new Error(`${server}: ${why}`);
      return ms;
    };
    /** `n` calls to `server` starting `gapMs` apart (start to start), after one warm-up call. */
    const series = async (server: string, gapMs: number, n: number): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i <= n; i++) {
        const t0 = performance.now();
        const ms = await one(server);
        if (i > 0) out.push(ms);
        await sleep(Math.max(0, gapMs - (performance.now() - t0)));
      }
      console.error(`isolated: ${server}: ${out.map((x) => x.toFixed(0)).join(" ")} ms`);
      return out;
    };
    const result: Paced = { gap400: [], gap1000: [], fresh: [] };
    for (let round = 0; round < ROUNDS; round++) {
      result.gap400.push(...(await series("p400", 400, PACED)));
      result.gap1000.push(...(await series("p1000", 1_000, PACED)));
      result.fresh.push(...(await series("fresh", 0, FRESH)));
    }
    await client.close();
    return result;
  } finally {
    await stopProcess(mcpx.child);
    cfg.remove();
  }
}

export async function runIsolatedBench(): Promise<BenchSection> {
  const load0 = os.loadavg();
  console.log(`isolated: ${CALLS} calls from ${CLIENTS} HTTP clients...`);
  const b = await burst();
  console.log(`isolated: one client every 400 ms / 1 s, and fresh sessions, ${ROUNDS} rounds...`);
  const p = await paced();
  const load1 = os.loadavg();
  const fresh = percentile(p.fresh, 50);
  const pct = (xs: number[]) => `${f1((percentile(xs, 50) / fresh) * 100)} %`;
  const burstTable = table(
    [
      "calls",
      "failed",
      "calls/s",
      "p50 ms",
      "p99 ms",
      "mcpx peak RSS MB",
      "children peak RSS MB (sum)",
      "upstreams peak",
      "mcpx RSS 2 s after MB",
      "left after stop",
    ],
    [
      [
        b.calls,
        b.failed,
        f1(b.calls / b.seconds),
        f1(b.p50),
        f1(b.p99),
        f1(b.peakRss / MB),
        f1(b.peakChildren / MB),
        b.peakUpstreams,
        f1(b.settledRss / MB),
        b.survivors,
      ],
    ],
  );
  const pacedTable = table(
    ["arm", "n", "p50 ms", "p90 ms", "max ms", "p50 / fresh session p50"],
    [
      ["one client, a call every 400 ms", p.gap400, true],
      ["one client, a call every 1 s", p.gap1000, true],
      ["fresh session per call (prewarm 0)", p.fresh, false],
    ].map(([label, xs, ratio]) => {
      const v = xs as number[];
      return [
        label as string,
        v.length,
        f2(percentile(v, 50)),
        f2(percentile(v, 90)),
        f2(Math.max(...v)),
        ratio ? pct(v) : "100 %",
      ];
    }),
  );
  const errors =
    b.errors.size === 0
      ? "No call failed."
      : `Failed calls by error:\n\n${[...b.errors].map(([e, n]) => `- ${n} × ${e}`).join("\n")}`;
  const markdown = [
    `server-everything (stdio) behind the built mcpx (HTTP), \`"session": "isolated"\`, \`maxSessions\` ${MAX_SESSIONS}, default \`prewarm\` (1). Load average ${load0.map(f2).join(" / ")} before, ${load1.map(f2).join(" / ")} after (1 / 5 / 15 min; the machine is shared). Reproduce with \`npm run bench -- isolated\`.`,
    "",
    `Burst: ${CLIENTS} HTTP clients (half 2025-era sessions, half 2026-07-28) calling \`everything.echo\` back to back with unique payloads, ${b.calls} calls; a call fails on an error, an \`isError\` result or another call's payload. RSS and upstream processes sampled from /proc every 100 ms.`,
    "",
    burstTable,
    "",
    errors,
    "",
    `Paced: one 2025-era HTTP client; ${PACED} calls per arm and round (after one warm-up call), a call every 400 ms or 1 s (start to start) to a pool with \`prewarm\` 1, and ${FRESH} back-to-back calls to a pool with \`prewarm\` 0 (what a fresh session costs); ${ROUNDS} rounds, the arms interleaved round by round in one mcpx.`,
    "",
    pacedTable,
  ].join("\n");
  return { id: "isolated", title: "Isolated sessions", markdown };
}
