/**
 * Dashboard benchmark: does watching slow the proxy down? One `call` of server-everything's
 * `echo` (session `shared`, so the call itself is cheap and any overhead shows) through the
 * built mcpx over HTTP, with no dashboard open and with 5 open: 5 event streams in a separate
 * process (bench/dashboard-reader.mjs), each receiving every call and log event and fetching
 * /api/calls once a second as the page does. The two arms alternate round by round, so drift
 * (other load on the machine) hits them alike.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { npmServer, startHttp, stop, tempDir, text, writeConfig } from "../test/helpers/proxy.js";
import { cpuMs, untilOutput } from "./lib/processes.js";
import { stats } from "./lib/stats.js";
import { table, type BenchSection } from "./report.js";
import { ROOT } from "./upstreams.js";

const DASHBOARDS = 5;
const ROUNDS = 10;
const CALLS_PER_ROUND = 50;
const WARMUP = 30;

async function openDashboards(base: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, "bench/dashboard-reader.mjs"), base, String(DASHBOARDS)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await untilOutput(child, "stdout", "open", "dashboard reader");
  return child;
}

export async function runDashboardBench(): Promise<BenchSection> {
  const started = performance.now();
  const file = writeConfig(
    {
      mcpServers: {
        everything: {
          ...npmServer("@modelcontextprotocol/server-everything", "stdio"),
          session: "shared",
        },
      },
    },
    tempDir("mcpx-bench-dashboard-"),
  );
  const proxy = await startHttp(file);
  const base = proxy.url.replace(/\/mcp$/, "");
  const arms = { none: [] as number[], five: [] as number[] };
  const cpu = { none: 0, five: 0 };
  let failed = 0;
  const call = async () => {
    const t0 = performance.now();
    const r = await proxy.client.callTool({
      name: "call",
      arguments: { method: "everything.echo", arguments: { message: "x" } },
    });
    if (r.isError === true || !text(r).includes("x")) failed += 1;
    return performance.now() - t0;
  };
  try {
    for (let i = 0; i < WARMUP; i++) await call();
    for (let round = 0; round < ROUNDS; round++) {
      for (const arm of round % 2 === 0
        ? (["none", "five"] as const)
        : (["five", "none"] as const)) {
        const readers = arm === "five" ? await openDashboards(base) : undefined;
        try {
          const cpu0 = cpuMs(proxy.pid);
          for (let i = 0; i < CALLS_PER_ROUND; i++) arms[arm].push(await call());
          cpu[arm] += cpuMs(proxy.pid) - cpu0;
        } finally {
          if (readers) await stop(readers);
        }
      }
    }
  } finally {
    await proxy.close();
  }
  const fmt = (n: number) => n.toFixed(2);
  const rows = (["none", "five"] as const).map((arm) => {
    const s = stats(arms[arm]);
    return [
      arm === "none" ? "no dashboard open" : `${DASHBOARDS} dashboards open`,
      s.n,
      fmt(s.p50),
      fmt(s.p90),
      fmt(s.p99),
      fmt(cpu[arm] / s.n),
    ];
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    id: "dashboard",
    title: "Dashboard: call latency with 0 and 5 dashboards open",
    markdown: [
      `One \`call\` of server-everything's \`echo\` through the built mcpx over HTTP (session \`shared\`), ${ROUNDS} rounds of ${CALLS_PER_ROUND} calls per arm after ${WARMUP} warm-up calls, the arms alternating round by round. "${DASHBOARDS} dashboards open": ${DASHBOARDS} \`/api/events\` streams in another process, each receiving every call and log event, and fetching \`/api/calls\` once a second while calls flow, as the page does. mcpx CPU ms/call: the mcpx process's user + system time during the arm's calls (its event streams included), per call. Failed calls: ${failed}. Measured in ${seconds.toFixed(1)} s.`,
      "",
      "Reproduce: `npm run bench -- dashboard`.",
      "",
      table(["arm", "calls", "p50 ms", "p90 ms", "p99 ms", "mcpx CPU ms/call"], rows, ["left"]),
    ].join("\n"),
  };
}
