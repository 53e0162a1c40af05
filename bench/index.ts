/**
 * Benchmark runner: `npm run bench` runs every section, `npm run bench -- tokens` only the named
 * ones. Prints the report and writes bench/RESULTS.md; sections not run this time keep their
 * previous text there (bench/results.ts), so running one section never erases another.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { descendants } from "../test/helpers/proxy.js";
import { removeFileTempDirs } from "../test/helpers/temp.js";
import type { BenchSection } from "./report.js";
import { runBaselineBench } from "./baseline.js";
import { runDashboardBench } from "./dashboard.js";
import { commandLine } from "./lib/processes.js";
import { runCodeModeBench } from "./codemode.js";
import { runCpuBench } from "./cpu.js";
import { runDaemonBench } from "./daemon.js";
import { runErasBench } from "./eras.js";
import { runIsolatedBench } from "./isolated.js";
import { runLatencyBench } from "./latency/index.js";
import { runTracingBench } from "./latency/tracing.js";
import { runSandboxBench } from "./sandbox.js";
import { runSpeedBench } from "./speed.js";
import { runStartupBench } from "./startup.js";
import { runMemoryBench } from "./memory.js";
import { runPeersBench } from "./peers.js";
import { runTokenBench } from "./tokens/index.js";
import { runTrustBench } from "./trust.js";
import { RESULTS, writeSections } from "./results.js";

/** Every section, in report order. Add a benchmark here. */
const SECTIONS: Record<string, () => Promise<BenchSection>> = {
  tokens: runTokenBench,
  latency: runLatencyBench,
  tracing: runTracingBench,
  speed: runSpeedBench,
  baseline: runBaselineBench,
  peers: runPeersBench,
  eras: runErasBench,
  startup: runStartupBench,
  daemon: runDaemonBench,
  memory: runMemoryBench,
  cpu: runCpuBench,
  isolated: runIsolatedBench,
  sandbox: runSandboxBench,
  dashboard: runDashboardBench,
  codemode: runCodeModeBench,
  trust: runTrustBench,
};

async function main(): Promise<void> {
  // Children that exist before any benchmark (tsx's esbuild service) are not ours to account for.
  const before = new Set(livingChildren());
  const asked = process.argv.slice(2).filter((a) => a !== "--");
  const unknown = asked.filter((a) => !(a in SECTIONS));
  if (unknown.length > 0) {
    console.error(
      `Unknown benchmark ${unknown.map((u) => `"${u}"`).join(", ")}. Available: ${Object.keys(SECTIONS).join(", ")}.`,
    );
    process.exitCode = 2;
    return;
  }
  const ids =
    asked.length > 0
      ? Object.keys(SECTIONS).filter((id) => asked.includes(id))
      : Object.keys(SECTIONS);

  const at = new Date();
  const fresh = new Map<string, BenchSection>();
  try {
    for (const id of ids) {
      const section = await SECTIONS[id]!();
      fresh.set(id, section);
      console.log(`\n## ${section.title}\n\n${section.markdown}\n`);
    }
  } finally {
    // Sections make their folders with the tests' tempDir(); outside vitest nothing removes them.
    removeFileTempDirs();
  }

  writeSections([...fresh.values()], at);
  console.log(`Wrote ${path.relative(process.cwd(), RESULTS)}`);
  await checkNoChildren(before);
}

/** Live descendants of this process; empty where there is no /proc to inspect cheaply. */
function livingChildren(): number[] {
  return existsSync("/proc") ? descendants(process.pid) : [];
}

/** Every benchmark closes what it started; a leftover upstream process is a bug worth failing on. */
async function checkNoChildren(before: ReadonlySet<number>): Promise<void> {
  const ours = () => livingChildren().filter((pid) => !before.has(pid));
  const deadline = Date.now() + 3_000;
  let left = ours();
  // Children that got SIGTERM may take a moment to exit.
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(50);
    left = ours();
  }
  if (left.length > 0) {
    const describe = (pid: number) => `${pid} (${commandLine(pid)})`;
    console.error(
      `bench: child processes still running after close: ${left.map(describe).join(", ")}`,
    );
    process.exitCode = 1;
  }
}

await main();
