/**
 * Start-up: time from spawning mcpx (stdio) to its answer to `initialize`, and to a complete
 * catalog (tools/list whose describe description marks no server as still starting), with the
 * example upstreams, with one upstream that needs 5 s to start, and with 16 upstreams.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { table, type BenchSection } from "./report.js";
import { npmServer, replayServer, ROOT, type StdioSpec } from "./upstreams.js";

const MCPX = path.join(ROOT, "dist/index.js");
const RUNS = 5;
const SLOW_MS = 5_000;
/** Quiet time after the catalog is complete before mcpx's idle RSS is read. */
const IDLE_MS = 2_000;

interface Case {
  name: string;
  servers: Record<string, StdioSpec & { discoveryTimeout?: number }>;
}

function cases(dir: string): Case[] {
  const three = {
    everything: npmServer("@modelcontextprotocol/server-everything", ["stdio"]),
    filesystem: npmServer("@modelcontextprotocol/server-filesystem", [dir]),
    memory: npmServer("@modelcontextprotocol/server-memory", [], {
      MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"),
    }),
  };
  const slow = {
    command: process.execPath,
    args: [path.join(ROOT, "test/fixtures/upstreams/faulty.mjs")],
    env: { FAULT_START_DELAY_MS: String(SLOW_MS) },
  };
  // Distinct env per replay: identical specs would share one pool and one discovery.
  const replays = Object.fromEntries(
    Array.from({ length: 13 }, (_, i) => [`github${i + 1}`, replayServer({ REPLAY_ID: `${i}` })]),
  );
  return [
    { name: "3 upstreams (example servers)", servers: three },
    {
      name: `3 upstreams + 1 that needs ${SLOW_MS / 1000} s to start`,
      servers: { ...three, slow },
    },
    { name: "16 upstreams (3 example + 13 × 117-tool corpus)", servers: { ...three, ...replays } },
  ];
}

/** VmRSS of a process in MB, from /proc (NaN where there is none). */
function rssMb(pid: number | null): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * One cold start: ms to the initialize answer, ms until no server shows [starting], and mcpx's
 * RSS once it idled IDLE_MS after that.
 */
async function coldStart(
  configFile: string,
): Promise<{ initialize: number; catalog: number; rss: number }> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPX, configFile, "--log-level", "warn"],
    stderr: "ignore",
  });
  const client = new Client({ name: "mcpx-bench-startup", version: "1.0.0" });
  try {
    await client.connect(transport);
    const initialize = performance.now() - started;
    for (;;) {
      const { tools } = await client.listTools();
      const description = tools.find((t) => t.name === "describe")?.description ?? "";
      if (!description.includes("[starting]")) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const catalog = performance.now() - started;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { initialize, catalog, rss: rssMb(transport.pid) };
  } finally {
    await client.close();
    // The client's close ends mcpx's stdin; mcpx then stops every upstream and exits.
    await waitExit(transport.pid);
  }
}

async function waitExit(pid: number | null): Promise<void> {
  if (pid === null) return;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function runStartupBench(): Promise<BenchSection> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcpx-bench-startup-"));
  try {
    const rows: (string | number)[][] = [];
    for (const c of cases(dir)) {
      const file = path.join(dir, `${rows.length}.json`);
      writeFileSync(file, JSON.stringify({ mcpServers: c.servers }));
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await coldStart(file));
      rows.push([
        c.name,
        `${median(runs.map((r) => r.initialize)).toFixed(0)} ms`,
        `${Math.max(...runs.map((r) => r.initialize)).toFixed(0)} ms`,
        `${median(runs.map((r) => r.catalog)).toFixed(0)} ms`,
        `${median(runs.map((r) => r.rss)).toFixed(1)} MB`,
      ]);
    }
    const markdown = [
      `Cold starts of \`node dist/index.js <config>\` over stdio, ${RUNS} runs per case (\`npm run bench -- startup\`). ` +
        "**initialize**: spawn until the answer to `initialize`; **catalog**: spawn until `tools/list` " +
        "shows no server still starting. mcpx answers `initialize` before any upstream has started; " +
        "late servers arrive through `notifications/tools/list_changed`. **RSS idle**: mcpx's VmRSS " +
        `${IDLE_MS / 1000} s after its catalog was complete (upstream processes not included). ` +
        `1-minute load average at the start: ${os.loadavg()[0]?.toFixed(2)} (${os.cpus().length} cores).`,
      "",
      table(["case", "initialize p50", "initialize max", "catalog p50", "RSS idle p50"], rows),
    ].join("\n");
    return { id: "startup", title: "Start-up", markdown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
