/**
 * Peers: calls per second through mcpx and through every proxy a user could pick instead, side
 * by side in one run (issue 30). server-everything behind each arm (bench/peers-arms.ts); 32 SDK
 * HTTP clients per arm, one MCP session each; every answer checked; the arms interleaved round by
 * round, the order rotating; the median of the rounds. Then each proxy's RSS, and what mcpx adds
 * to one client's p50 latency over stdio and HTTP.
 *
 * MCPX_BENCH_PEERS_CALLS sets the calls per arm and round (default 3,000);
 * MCPX_BENCH_PEERS_LATENCY the calls per latency arm read cold (default 400), and
 * MCPX_BENCH_PEERS_WARM_LATENCY warm (default 1,000);
 * MCPX_BENCH_PEERS_WARM the calls per latency arm before the warm phase (default 4,000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cpuMs, memoryKb, untilQuiet, type QuietWait } from "./lib/processes.js";
import { percentile } from "./lib/stats.js";
import {
  ARMS,
  checkedCall,
  connectRetrying,
  EVERYTHING,
  type ArmKey,
  type Peer,
} from "./peers-arms.js";
import { table, type BenchSection } from "./report.js";
import { MCPX, RELAY } from "./speed-arms.js";
import { resultText } from "./upstreams.js";

const CALLS = Number(process.env.MCPX_BENCH_PEERS_CALLS ?? 3_000);
const LATENCY_CALLS = Number(process.env.MCPX_BENCH_PEERS_LATENCY ?? 400);
const WARM_LATENCY_CALLS = Number(process.env.MCPX_BENCH_PEERS_WARM_LATENCY ?? 1_000);
const CLIENTS = 32;
/**
 * Five rounds: each arm's first one also compiles its own hot code and the clients' code for its
 * transport, and is slower for every arm (by a third to a half); of three rounds the median was
 * then the slower of two warm ones, of five it is the second slowest of four.
 */
const ROUNDS = 5;
const WARMUP = 30;
/**
 * Latency is read twice per arm: over the first calls of a new client (over stdio, of a new mcpx
 * and upstream: every process's code still being compiled by V8, each call slower, a proxy's
 * three processes slower still; its first seconds also hold mcpx's background look at which
 * tools need a client capability), and once each arm has made this many calls (compiled, the
 * look long over: the steady state of a long-lived client or the shared daemon).
 */
const WARM_FROM = Math.max(
  Number(process.env.MCPX_BENCH_PEERS_WARM ?? 4_000) || 0,
  WARMUP + LATENCY_CALLS,
);
const TARGET = { hub: 1, proxy: 1.3, echo: 0.8, stdioMs: 0.25, httpMs: 0.3, rssMb: 120 };

const p50 = (xs: number[]) => percentile(xs, 50);
const f2 = (x: number) => x.toFixed(2);
const mb = (kb: number) => (kb / 1024).toFixed(0);
const load = () => os.loadavg()[0] ?? Number.NaN;

interface Round {
  rate: number;
  /** Calls that failed or answered wrong (each counted, none retried). */
  failed: number;
  /** CPU ms per call of the arm's HTTP server process (its upstreams not counted). */
  cpu: number;
  /**
   * Share of the round the clients' thread was busy (its event loop not waiting for I/O): all 32
   * live in this process, on its main thread, so near 100 % the round's calls/s were bound by the
   * clients' own work, not by the arm.
   */
  clientsBusy: number;
}

interface ArmResult {
  peer: Peer;
  rounds: Round[];
  idleKb: number;
  afterKb: number;
}

/** All clients call back to back; `calls` in all, spread evenly. */
async function burst(peer: Peer, clients: Client[], calls: number, round: number): Promise<Round> {
  const cpu0 = cpuMs(peer.pid);
  const loop0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  let failed = 0;
  await Promise.all(
    clients.map(async (client, c) => {
      const mine = Math.floor(calls / clients.length) + (c < calls % clients.length ? 1 : 0);
      for (let i = 0; i < mine; i++) {
        await checkedCall(client, peer, `r${round}-c${c}-${i}`).catch((err: unknown) => {
          failed++;
          console.error(`bench peers: ${peer.name}: ${String(err)}`);
        });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    rate: (calls - failed) / seconds,
    failed,
    cpu: (cpuMs(peer.pid) - cpu0) / calls,
    clientsBusy: performance.eventLoopUtilization(loop0).utilization,
  };
}

/** The waits for a quiet machine, as the report says them. */
function quietText(waits: QuietWait[]): string {
  const when = ["before the rounds", "before the latency arms"];
  const said = waits.map(
    (w, i) =>
      `${(w.waitedMs / 1000).toFixed(1)} s ${when[i] ?? ""}${w.quiet ? "" : " (never quiet: went on)"}`,
  );
  return `the CPUs busy under 15 % for half a second; waited ${said.join(", ")}`;
}

/** p50 in ms of each arm, over the first calls after start and once warm. */
interface Latency {
  cold: number[];
  warm: number[];
}

/**
 * Alternates one call per arm: `LATENCY_CALLS` each read after `WARMUP` (cold), and
 * `WARM_LATENCY_CALLS` after `WARM_FROM` (warm); p50 of each arm in each phase.
 */
async function interleaved(arms: { call(i: number): Promise<void> }[]): Promise<Latency> {
  const cold: number[][] = arms.map(() => []);
  const warm: number[][] = arms.map(() => []);
  for (let i = 0; i < WARM_FROM + WARM_LATENCY_CALLS; i++) {
    const into =
      i < WARMUP ? undefined : i < WARMUP + LATENCY_CALLS ? cold : i < WARM_FROM ? undefined : warm;
    // Rotate which arm goes first, so none always follows the same other arm's call.
    for (let j = 0; j < arms.length; j++) {
      const k = (i + j) % arms.length;
      const t0 = performance.now();
      await arms[k]!.call(i);
      into?.[k]!.push(performance.now() - t0);
    }
  }
  return { cold: cold.map(p50), warm: warm.map(p50) };
}

/** An SDK client over stdio to `node <args>`, calling echo as `request` says. */
async function stdioClient(args: string[], env: Record<string, string>, viaMcpx: boolean) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "mcpx-bench-peers", version: "1.0.0" });
  await client.connect(transport);
  if (viaMcpx) {
    // The upstream is ready when a call goes through.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await client.callTool({
        name: "call",
        arguments: { method: "everything.echo", arguments: { message: "ready" } },
      });
      if (!r.isError) break;
      if (Date.now() > deadline) throw new Error(`mcpx over stdio never ready: ${resultText(r)}`);
      await sleep(50);
    }
  }
  return {
    call: async (i: number) => {
      const message = `s${i}`;
      const r = await client.callTool(
        viaMcpx
          ? { name: "call", arguments: { method: "everything.echo", arguments: { message } } }
          : { name: "echo", arguments: { message } },
      );
      if (r.isError || resultText(r) !== `Echo: ${message}`)
        throw new Error(`stdio answered ${JSON.stringify(r).slice(0, 300)}`);
    },
    close: () => client.close(),
  };
}

/**
 * p50 over stdio of a direct client of server-everything, of mcpx (shared) in front of it, and of
 * a byte relay in front of it (bench/relay.mjs: the floor of any stdio proxy).
 */
async function stdioLatency(dir: string): Promise<Latency> {
  const config = path.join(dir, "mcpx-everything", "mcpx.json");
  const env = {
    XDG_CACHE_HOME: path.join(dir, "stdio-cache"),
    XDG_STATE_HOME: path.join(dir, "stdio-state"),
  };
  const direct = await stdioClient([EVERYTHING, "stdio"], {}, false);
  try {
    const mcpx = await stdioClient([MCPX, config, "--log-level", "warn"], env, true);
    const relay = await stdioClient([RELAY, EVERYTHING, "stdio"], {}, false);
    try {
      return await interleaved([direct, mcpx, relay]);
    } finally {
      await Promise.all([mcpx.close(), relay.close()]);
    }
  } finally {
    await direct.close();
  }
}

/** Added p50 over HTTP: one client of server-everything's own HTTP vs one of mcpx's. */
async function httpLatency(direct: Peer, mcpx: Peer): Promise<Latency> {
  const clients = [await connectRetrying(direct), await connectRetrying(mcpx)];
  try {
    const peers = [direct, mcpx];
    return await interleaved(
      clients.map((c, k) => ({ call: (i: number) => checkedCall(c, peers[k]!, `h${i}`) })),
    );
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export async function runPeersBench(): Promise<BenchSection> {
  const started = performance.now();
  const loads = [load()];
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcpx-bench-peers-"));
  const peers = new Map<ArmKey, Peer>();
  // The SDK 1.x client rejects some of its own background sends (a socket a server closed while
  // idle) with no one to catch them: counted and reported, never a crash that leaves servers up.
  let stray = 0;
  const onStray = (err: unknown) => {
    stray++;
    console.error(`bench peers: client error outside a call: ${String(err)}`);
  };
  process.on("unhandledRejection", onStray);
  /** The waits for a quiet machine: before the rounds, before the latency arms. */
  const quiet: QuietWait[] = [];
  try {
    for (const [key, startArm] of Object.entries(ARMS) as [
      ArmKey,
      (d: string) => Promise<Peer>,
    ][]) {
      console.error(`bench peers: starting ${key}`);
      peers.set(key, await startArm(dir));
    }
    await sleep(500);
    const results = new Map<ArmKey, ArmResult>();
    for (const [key, peer] of peers)
      results.set(key, { peer, rounds: [], idleKb: memoryKb(peer.pid).rssKb, afterKb: Number.NaN });

    const clients = new Map<ArmKey, Client[]>();
    try {
      for (const [key, peer] of peers) {
        const list: Client[] = [];
        clients.set(key, list);
        // A few at a time: supergateway starts a server per session.
        for (let c = 0; c < CLIENTS; c += 8) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(8, CLIENTS - c) }, () => connectRetrying(peer)),
          );
          list.push(...batch);
        }
        // Warm-up: every session answers once, checked.
        await Promise.all(list.map((client, c) => checkedCall(client, peer, `warm-${c}`)));
      }
      const keys = [...peers.keys()];
      // Rounds start on a quiet machine: the sessions just opened (supergateway started a
      // server-everything for each) have finished starting.
      quiet.push(await untilQuiet());
      for (let r = 0; r < ROUNDS; r++) {
        // Rotate the order round by round, so no arm always runs first or after the same one.
        const order = keys.map((_, i) => keys[(i + r * 3) % keys.length]!);
        for (const key of order) {
          const round = await burst(peers.get(key)!, clients.get(key)!, CALLS, r);
          results.get(key)!.rounds.push(round);
          console.error(
            `bench peers: round ${r + 1} ${key}: ${round.rate.toFixed(0)} calls/s, ${f2(round.cpu)} ms CPU per call, clients ${(round.clientsBusy * 100).toFixed(0)} % busy`,
          );
        }
      }
      for (const [key, peer] of peers) results.get(key)!.afterKb = memoryKb(peer.pid).rssKb;
    } finally {
      await Promise.all([...clients.values()].flat().map((c) => c.close()));
    }

    // The latency arms alone on the machine: the other peers (supergateway's 32 upstreams among
    // them) stopped.
    await Promise.all(
      [...peers].filter(([k]) => k !== "direct" && k !== "mcpx").map(([, p]) => p.stop()),
    );
    quiet.push(await untilQuiet());
    const stdio = await stdioLatency(dir);
    const http = await httpLatency(peers.get("direct")!, peers.get("mcpx")!);
    loads.push(load());
    return {
      id: "peers",
      title: "Peers: mcpx and the proxies a user could pick instead",
      markdown: render(results, stdio, http, loads, performance.now() - started, stray, quiet),
    };
  } finally {
    process.off("unhandledRejection", onStray);
    await Promise.all([...peers.values()].map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The round whose calls/s is the median (the middle one of an odd count). */
function medianRound(rounds: Round[]): Round {
  const sorted = [...rounds].sort((a, b) => a.rate - b.rate);
  // The nearest rank, as p50 reads calls/s (bench/lib/stats.ts).
  return sorted[Math.ceil(sorted.length / 2) - 1]!;
}

function render(
  results: Map<ArmKey, ArmResult>,
  stdio: Latency,
  http: Latency,
  loads: number[],
  elapsedMs: number,
  stray: number,
  quiet: QuietWait[],
): string {
  const rate = (key: ArmKey) => p50(results.get(key)!.rounds.map((r) => r.rate));
  const pct = (key: ArmKey, base: ArmKey) => `${((rate(key) / rate(base)) * 100).toFixed(0)} %`;
  const rows = [...results].map(([key, r]) => [
    key === "mcpx" || key === "mcpxEcho" ? `**${r.peer.name}**` : r.peer.name,
    rate(key).toFixed(0),
    key === "echo" || key === "mcpxEcho"
      ? `${pct(key, "echo")} of the echo server`
      : pct(key, "direct"),
    r.rounds.map((x) => x.rate.toFixed(0)).join(" / "),
    f2(p50(r.rounds.map((x) => x.cpu))),
    `${(medianRound(r.rounds).clientsBusy * 100).toFixed(0)} %`,
    mb(r.idleKb),
    mb(r.afterKb),
    String(r.rounds.reduce((n, x) => n + x.failed, 0)),
  ]);
  const mcpx = rate("mcpx");
  const added = (ms: number[], arm = 1) => ms[arm]! - ms[0]!;
  const stdioAdded = added(stdio.warm);
  const httpAdded = added(http.warm);
  const shown = (ms: number[], arm = 1) =>
    `${f2(added(ms, arm))} ms (${f2(ms[arm]!)} − ${f2(ms[0]!)})`;
  const afterMb = results.get("mcpx")!.afterKb / 1024;
  const check = (ok: boolean) => (ok ? "met" : "MISSED");
  const targets = [
    [
      "throughput vs mcp-hub",
      `${((mcpx / rate("hub")) * 100).toFixed(0)} %`,
      `≥ ${TARGET.hub * 100} %`,
      check(mcpx >= TARGET.hub * rate("hub")),
    ],
    [
      "throughput vs mcp-proxy",
      `${(mcpx / rate("proxy")).toFixed(2)} ×`,
      `≥ ${TARGET.proxy} ×`,
      check(mcpx >= TARGET.proxy * rate("proxy")),
    ],
    [
      "mcpx → echo server vs the echo server alone",
      pct("mcpxEcho", "echo"),
      `≥ ${TARGET.echo * 100} %`,
      check(rate("mcpxEcho") >= TARGET.echo * rate("echo")),
    ],
    [
      "added p50, stdio (one client, server-everything)",
      shown(stdio.warm),
      `≤ ${TARGET.stdioMs} ms`,
      check(stdioAdded <= TARGET.stdioMs),
    ],
    ["added p50, stdio, byte relay (the floor of any stdio proxy)", shown(stdio.warm, 2), "—", "—"],
    [
      "added p50, HTTP (one client, server-everything)",
      shown(http.warm),
      `≤ ${TARGET.httpMs} ms`,
      check(httpAdded <= TARGET.httpMs),
    ],
    [
      `the same over a new client's first ${LATENCY_CALLS} calls: stdio · byte relay · HTTP`,
      `${shown(stdio.cold)} · ${shown(stdio.cold, 2)} · ${shown(http.cold)}`,
      "—",
      "—",
    ],
    [
      `mcpx (shared) RSS after ${(ROUNDS * CALLS + CLIENTS).toLocaleString("en-US")} calls from ${CLIENTS} clients`,
      `${afterMb.toFixed(0)} MB`,
      `≤ ${TARGET.rssMb} MB`,
      check(afterMb <= TARGET.rssMb),
    ],
  ];
  return [
    `Reproduce with \`npm run bench -- peers\` (\`MCPX_BENCH_PEERS_CALLS=1000\` for a shorter run). ` +
      `Measured in ${(elapsedMs / 1000).toFixed(1)} s; 1-minute load average ` +
      `${loads.map((l) => l.toFixed(2)).join(" at the start, ")} at the end (${os.cpus().length} cores: ` +
      "above that, other work competed for the CPU, and every arm's figure is lower than on a quiet machine).",
    "",
    `Each arm serves server-everything's \`echo\` (the minimal SDK echo server, bench/echo-server.mjs, for the last two) over HTTP; ` +
      `${CLIENTS} SDK clients per arm (SDK 1.x, one MCP session each) make ${CALLS.toLocaleString("en-US")} calls per round back to back, ` +
      `every answer checked; ${ROUNDS} rounds, the arms interleaved in a rotating order, started once the machine is quiet (${quietText(quiet)}); calls/s is the median round (each arm's first round is slower: it also compiles the arm's code and the clients' code for its transport). ` +
      "server-everything direct: its own streamable HTTP (express, stateful). mcp-hub: its `/mcp` endpoint, the deprecated HTTP+SSE transport " +
      "(started offline: HOME and XDG folders in a temp folder with its registry cache seeded). mcp-proxy: `--port`, streamable HTTP. " +
      "supergateway: `--outputTransport streamableHttp --stateful` (one server-everything per session). mcpx: the built " +
      '`dist/bundle/index.js --port 0`, the upstream `"session": "shared"` over stdio, called as `call({ method: "everything.echo" })`. ' +
      "CPU: user + system ms per call of the arm's HTTP process alone (from /proc; its upstreams not counted). " +
      "Clients busy: the share of the median round (by calls/s) that the clients' thread was busy, its event loop not waiting for I/O " +
      "(all 32 clients share this process's main thread): near 100 %, that round's calls/s were bound by the clients' own work " +
      "(the SDK client's fetch, parsing, GC) more than by the arm. " +
      "RSS (VmRSS) of the arm's HTTP process: idle after start, and after the rounds with the clients still connected.",
    "",
    table(
      [
        `${CLIENTS} HTTP clients, ${CALLS.toLocaleString("en-US")} calls`,
        `calls/s (median of ${ROUNDS})`,
        "vs server-everything's own HTTP",
        "rounds",
        "CPU ms/call",
        "clients busy",
        "RSS idle MB",
        "RSS after MB",
        "failed calls",
      ],
      rows,
      ["left", "right", "right", "right", "right", "right", "right", "right", "right"],
    ),
    "",
    `Client errors outside any call (a background send of the SDK client failing): ${stray}.`,
    "",
    `Added p50 latency (the other peers stopped first): one SDK client per arm, the arms taking turns call by call: ` +
      "a direct client of server-everything vs the same calls through mcpx (shared), over stdio and over HTTP; " +
      "over stdio also through `bench/relay.mjs`, a process that copies bytes both ways and parses nothing " +
      "(what a second process hop costs at the least: two pipe writes and two wake-ups). " +
      `Read over ${WARM_LATENCY_CALLS.toLocaleString("en-US")} calls per arm from call ${WARM_FROM.toLocaleString("en-US")} on, once V8 has compiled every process's hot code ` +
      "(as in a long-lived client or the shared daemon), " +
      `and, in the last row, over a new client's first ${LATENCY_CALLS} calls after ${WARMUP} warm-up ones. ` +
      "Over stdio each client spawns its own processes (mcpx and server-everything, or the relay, or server-everything alone), " +
      "whose code V8 has not compiled yet: every arm is slower then, mcpx most (a call runs through three processes' code instead of two, " +
      "and its first seconds hold its background look at which tools need a client capability, four short sessions of server-everything). " +
      "Over HTTP the servers have served the rounds above: only the clients are new.",
    "",
    table(["target (issue 30)", "value", "target", "status"], targets, [
      "left",
      "right",
      "left",
      "left",
    ]),
  ].join("\n");
}
