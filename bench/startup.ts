/**
 * Start-up: time from spawning mcpx (stdio) to its answer to `initialize`, and to a complete
 * catalog (tools/list whose describe description marks no server as still starting), with the
 * example upstreams, with one upstream that needs 5 s to start, and with 16 upstreams. Then the
 * persistent catalog cache: each start with an empty cache folder is followed by one on the
 * cache that start left (interleaved), for 3 and 16 servers and with one that needs 9 s.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { memoryKb } from "./lib/processes.js";
import { table, type BenchSection } from "./report.js";
import { npmServer, replayServer, ROOT, type StdioSpec } from "./upstreams.js";

const MCPX = path.join(ROOT, "dist/bundle/index.js");
const RUNS = 5;
const SLOW_MS = 5_000;
/** The slow upstream of the cache arms (the start time of issue #22's example). */
const SLOWER_MS = 9_000;
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
  const slower = { ...slow, env: { FAULT_START_DELAY_MS: String(SLOWER_MS) } };
  return [
    { name: "3 upstreams (example servers)", servers: three },
    {
      name: `3 upstreams + 1 that needs ${SLOWER_MS / 1000} s to start`,
      servers: { ...three, slower },
    },
    {
      name: `3 upstreams + 1 that needs ${SLOW_MS / 1000} s to start`,
      servers: { ...three, slow },
    },
    { name: "16 upstreams (3 example + 13 × 117-tool corpus)", servers: { ...three, ...replays } },
  ];
}

/** VmRSS of a process in MB, from /proc (NaN where there is none). */
function rssMb(pid: number | null): number {
  return pid === null ? Number.NaN : memoryKb(pid).rssKb / 1024;
}

/**
 * One cold start with `cacheHome` as XDG_CACHE_HOME: ms to the initialize answer, to the first
 * tools/list answer, until no server shows [starting], and mcpx's RSS once it idled `idleMs`.
 */
async function coldStart(
  configFile: string,
  cacheHome: string,
  idleMs = IDLE_MS,
): Promise<{ initialize: number; first: number; catalog: number; rss: number }> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPX, configFile, "--log-level", "warn"],
    env: { ...getDefaultEnvironment(), XDG_CACHE_HOME: cacheHome },
    stderr: "ignore",
  });
  const client = new Client({ name: "mcpx-bench-startup", version: "1.0.0" });
  try {
    await client.connect(transport);
    const initialize = performance.now() - started;
    let first: number | undefined;
    for (;;) {
      const { tools } = await client.listTools();
      first ??= performance.now() - started;
      const description = tools.find((t) => t.name === "describe")?.description ?? "";
      if (!description.includes("[starting]")) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const catalog = performance.now() - started;
    if (idleMs > 0) await new Promise((r) => setTimeout(r, idleMs));
    return { initialize, first: first ?? catalog, catalog, rss: rssMb(transport.pid) };
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
    const cacheRows: (string | number)[][] = [];
    // An empty cache folder per start: these rows measure discovery from scratch.
    const emptyCache = () => mkdtempSync(path.join(dir, "cache-"));
    const all = cases(dir);
    for (const c of all.filter((x) => !x.name.includes(`${SLOWER_MS / 1000} s`))) {
      const file = path.join(dir, `${rows.length}.json`);
      writeFileSync(file, JSON.stringify({ mcpServers: c.servers }));
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await coldStart(file, emptyCache()));
      rows.push([
        c.name,
        `${median(runs.map((r) => r.initialize)).toFixed(0)} ms`,
        `${Math.max(...runs.map((r) => r.initialize)).toFixed(0)} ms`,
        `${median(runs.map((r) => r.catalog)).toFixed(0)} ms`,
        `${median(runs.map((r) => r.rss)).toFixed(1)} MB`,
      ]);
    }
    for (const c of all.filter((x) => !x.name.includes(`${SLOW_MS / 1000} s`))) {
      const file = path.join(dir, `cache-${cacheRows.length}.json`);
      writeFileSync(file, JSON.stringify({ mcpServers: c.servers }));
      const cold = [];
      const warm = [];
      for (let i = 0; i < RUNS; i++) {
        // Interleaved: the start with the cache reads what the start before it wrote.
        const home = emptyCache();
        cold.push(await coldStart(file, home, 0));
        warm.push(await coldStart(file, home, 0));
      }
      const ms = (xs: number[]) => `${median(xs).toFixed(0)} ms`;
      cacheRows.push([
        c.name,
        ms(cold.map((r) => r.first)),
        ms(cold.map((r) => r.catalog)),
        ms(warm.map((r) => r.first)),
        ms(warm.map((r) => r.catalog)),
      ]);
    }
    const markdown = [
      `Cold starts of \`node dist/bundle/index.js <config>\` over stdio, ${RUNS} runs per case (\`npm run bench -- startup\`). ` +
        "**initialize**: spawn until the answer to `initialize`; **catalog**: spawn until `tools/list` " +
        "shows no server still starting. mcpx answers `initialize` before any upstream has started; " +
        "late servers arrive through `notifications/tools/list_changed`. **RSS idle**: mcpx's VmRSS " +
        `${IDLE_MS / 1000} s after its catalog was complete (upstream processes not included). ` +
        `1-minute load average at the start: ${os.loadavg()[0]?.toFixed(2)} (${os.cpus().length} cores).`,
      "",
      table(["case", "initialize p50", "initialize max", "catalog p50", "RSS idle p50"], rows),
      "",
      "**Catalog cache** (`$XDG_CACHE_HOME/mcpx/`): each start with an empty cache folder is followed " +
        `by one on the cache it left, ${RUNS} pairs per case. **first tools/list**: spawn until the ` +
        "answer to the first `tools/list`; **complete**: spawn until a `tools/list` names every " +
        "server's tools (no server marked starting). With the cache the first answer is complete: " +
        "discovery refreshes the catalog in the background.",
      "",
      table(
        [
          "case",
          "no cache: first tools/list p50",
          "no cache: complete p50",
          "cache: first tools/list p50",
          "cache: complete p50",
        ],
        cacheRows,
      ),
    ].join("\n");
    return { id: "startup", title: "Start-up", markdown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
