/**
 * One mcpx per user (`--daemon`): a client's attach time with a warm daemon (spawn of the shim
 * until a complete `tools/list`), the shim's RSS, a cold `initialize` of plain stdio mcpx and its
 * idle RSS, and the memory of 10 clients over the example servers with and without the daemon
 * (every process of the tree: mcpx or shims + daemon, and the upstreams), each next to its target.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { descendants } from "../test/helpers/proxy.js";
import { memoryKb } from "./lib/processes.js";
import { percentile } from "./lib/stats.js";
import { table, type BenchSection } from "./report.js";
import { npmServer, ROOT } from "./upstreams.js";

/** The package's bin, what `install` writes into a client's file. */
const MCPX = path.join(ROOT, "dist/mcpx.cjs");
const RUNS = 10;
const CLIENTS = 10;
/** Quiet time before memory is read. */
const SETTLE_MS = 2_000;

interface Attached {
  client: Client;
  transport: StdioClientTransport;
  /** ms from spawn to the answer to initialize, and to a complete tools/list. */
  initialize: number;
  catalog: number;
}

async function attach(config: string, env: Record<string, string>, daemon: boolean) {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPX, config, "--log-level", "warn", ...(daemon ? ["--daemon"] : [])],
    env: { ...getDefaultEnvironment(), ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "mcpx-bench-daemon", version: "1.0.0" });
  await client.connect(transport);
  const initialize = performance.now() - started;
  for (;;) {
    const { tools } = await client.listTools();
    if (!(tools.find((t) => t.name === "describe")?.description ?? "").includes("[starting]"))
      break;
    await sleep(10);
  }
  return { client, transport, initialize, catalog: performance.now() - started };
}

const rssMb = (pid: number) => memoryKb(pid).rssKb / 1024;
const treeMb = (pid: number) => [pid, ...descendants(pid)].reduce((n, p) => n + rssMb(p), 0);

function daemonPid(config: string, env: Record<string, string>): number {
  const out = spawnSync(process.execPath, [MCPX, "daemon", "status", config], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  }).stdout;
  return Number(/pid (\d+)/.exec(out)?.[1] ?? 0);
}

function stopDaemon(config: string, env: Record<string, string>): void {
  spawnSync(process.execPath, [MCPX, "daemon", "stop", config], {
    env: { ...process.env, ...env },
  });
}

async function untilGone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

export async function runDaemonBench(): Promise<BenchSection> {
  const dir = mkdtempSync(path.join(tmpdir(), "mcpx-bench-daemon-"));
  const runtime = path.join(dir, "run");
  const config = path.join(dir, "mcpx.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        // Every client calls it: one `client` session each, more than the default maxSessions (8).
        everything: {
          ...npmServer("@modelcontextprotocol/server-everything", ["stdio"]),
          maxSessions: 16,
        },
        filesystem: npmServer("@modelcontextprotocol/server-filesystem", [dir]),
        memory: npmServer("@modelcontextprotocol/server-memory", [], {
          MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"),
        }),
      },
    }),
  );
  const env = { XDG_RUNTIME_DIR: runtime, XDG_CACHE_HOME: path.join(dir, "cache") };
  mkdirSync(runtime, { mode: 0o700 });
  try {
    // Cold stdio mcpx (the catalog cache warm, as a user's second start): initialize and idle RSS.
    const cold: number[] = [];
    const coldCatalog: number[] = [];
    const idle: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const a = await attach(config, env, false);
      cold.push(a.initialize);
      coldCatalog.push(a.catalog);
      if (i === 0) {
        await sleep(SETTLE_MS);
        idle.push(rssMb(a.transport.pid!));
      }
      await a.client.close();
    }
    // A warm daemon: each attach is a new shim.
    const first = await attach(config, env, true);
    const daemon = daemonPid(config, env);
    const attachMs: number[] = [];
    const shimMb: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const a = await attach(config, env, true);
      attachMs.push(a.catalog);
      shimMb.push(rssMb(a.transport.pid!));
      await a.client.close();
    }
    // 10 clients, each calling one tool, with and without the daemon.
    const clients: Attached[] = [first];
    for (let i = 1; i < CLIENTS; i++) clients.push(await attach(config, env, true));
    for (const c of clients) {
      await c.client.callTool({
        name: "call",
        arguments: { method: "everything.echo", arguments: { message: "x" } },
      });
    }
    await sleep(SETTLE_MS);
    const withDaemon = treeMb(daemon) + clients.reduce((n, c) => n + rssMb(c.transport.pid!), 0);
    const daemonProcesses = 1 + descendants(daemon).length + clients.length;
    for (const c of clients) await c.client.close();
    stopDaemon(config, env);
    await untilGone(daemon);
    const plain: Attached[] = [];
    for (let i = 0; i < CLIENTS; i++) plain.push(await attach(config, env, false));
    for (const c of plain) {
      await c.client.callTool({
        name: "call",
        arguments: { method: "everything.echo", arguments: { message: "x" } },
      });
    }
    await sleep(SETTLE_MS);
    const withoutDaemon = plain.reduce((n, c) => n + treeMb(c.transport.pid!), 0);
    const plainProcesses = plain.reduce((n, c) => n + 1 + descendants(c.transport.pid!).length, 0);
    for (const c of plain) await c.client.close();

    const p50 = (xs: number[]) => percentile(xs, 50);
    const rows = [
      [
        "attach with a warm daemon: spawn → complete tools/list, p50",
        `${p50(attachMs).toFixed(0)} ms`,
        "≤ 150 ms",
      ],
      ["shim RSS, p50", `${p50(shimMb).toFixed(1)} MB`, "≤ 45 MB"],
      ["cold stdio mcpx: spawn → initialize, p50", `${p50(cold).toFixed(0)} ms`, "≤ 300 ms"],
      [
        "cold stdio mcpx: spawn → complete tools/list (catalog cache warm), p50",
        `${p50(coldCatalog).toFixed(0)} ms`,
        "",
      ],
      [
        "cold stdio mcpx: idle RSS (3 upstreams, mcpx only)",
        `${idle[0]!.toFixed(1)} MB`,
        "≤ 70 MB",
      ],
      [
        `${CLIENTS} clients without the daemon: total RSS (processes)`,
        `${withoutDaemon.toFixed(0)} MB (${plainProcesses})`,
        "",
      ],
      [
        `${CLIENTS} clients with the daemon: total RSS (processes)`,
        `${withDaemon.toFixed(0)} MB (${daemonProcesses})`,
        "",
      ],
      ["with / without", `${((withDaemon / withoutDaemon) * 100).toFixed(0)} %`, ""],
    ];
    const markdown = [
      `\`npm run bench -- daemon\`: the example servers (everything, filesystem, memory), ${RUNS} runs per figure, ` +
        `${CLIENTS} SDK clients over stdio for the totals (each made one call; a \`client\`-policy ` +
        "session per client per server it called). Total RSS: every process of the tree (mcpx, or " +
        "the shims and the daemon, and the upstreams), read from /proc after " +
        `${SETTLE_MS / 1000} s. 1-minute load average at the start: ${os.loadavg()[0]?.toFixed(2)} (${os.cpus().length} cores).`,
      "",
      table(["figure", "measured", "target"], rows),
    ].join("\n");
    return { id: "daemon", title: "Daemon", markdown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
