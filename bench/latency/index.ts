/**
 * Latency benchmark: what one `call` through mcpx costs next to calling the upstream directly, per
 * session policy, over stdio and HTTP downstream. Every case runs against the real
 * server-everything `echo` tool, side by side in one run; mcpx is the built `dist/index.js`
 * spawned as a user would run it, except one case run in-process to read the pool's state.
 */
import os from "node:os";
import { descendants } from "../../test/helpers/proxy.js";
import { createReaper } from "../lib/processes.js";
import { percentile } from "../lib/stats.js";
import type { BenchSection } from "../report.js";
import {
  concurrencyCase,
  directCold,
  directHttp,
  directWarm,
  naiveCase,
  prewarmBackToBackCase,
  prewarmSpacedCase,
  sharedCase,
} from "./cases.js";
import { MIN_GAP_MS, type CaseResult } from "./harness.js";
import { prewarmPoolWaitCase } from "./pool-wait.js";
import { render, type TransportCases } from "./render.js";

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
  const perTransport = {} as Record<"stdio" | "http", TransportCases>;
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
