/**
 * The latency cases run against server-everything's `echo`: direct (the floor), and mcpx out of
 * process per session policy over stdio and HTTP downstream.
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import getPort from "get-port";
import { descendants, stop } from "../../test/helpers/proxy.js";
import { connectHttp } from "../lib/http-client.js";
import { untilOutput, type Reaper } from "../lib/processes.js";
import { connectDirect } from "../upstreams.js";
import {
  CLIENT_NAME,
  directEcho,
  EVERYTHING,
  mcpxEcho,
  measure,
  merge,
  ping,
  SERVER,
  SETTLE_MS,
  SIZE,
  warmAndMeasure,
  withMcpx,
  type CaseResult,
  type Timings,
} from "./harness.js";

export async function directWarm(reap: Reaper): Promise<CaseResult> {
  const d = await connectDirect(SERVER, EVERYTHING);
  let timings: Timings;
  let pings: Timings;
  let watched: number[] = [];
  try {
    timings = await warmAndMeasure(directEcho(d.client), SIZE.warmup, SIZE.warm);
    pings = await warmAndMeasure(ping(d.client), SIZE.warmup, SIZE.warm);
  } finally {
    watched = descendants(process.pid);
    await d.close();
  }
  return {
    id: "direct",
    label: "direct, warm session (the floor)",
    downstream: "direct",
    timings,
    backToBack: true,
    leaked: await reap(watched),
    ping: pings,
  };
}

/**
 * server-everything's own streamable HTTP transport, straight from an SDK client: context for the
 * HTTP rows (a different server stack from mcpx's, so only roughly like for like).
 */
export async function directHttp(reap: Reaper): Promise<CaseResult> {
  const port = await getPort({ host: "127.0.0.1" });
  const child = spawn(process.execPath, [...EVERYTHING.args.slice(0, 1), "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    // It logs every request to stdout: not read, so not piped.
    stdio: ["ignore", "ignore", "pipe"],
  });
  let timings: Timings;
  let pings: Timings;
  try {
    await untilOutput(child, "stderr", "listening on port", "server-everything");
    const d = await connectHttp(`http://127.0.0.1:${port}/mcp`, CLIENT_NAME);
    try {
      timings = await warmAndMeasure(directEcho(d.client), SIZE.warmup, SIZE.warm);
      pings = await warmAndMeasure(ping(d.client), SIZE.warmup, SIZE.warm);
    } finally {
      await d.close();
    }
  } finally {
    await stop(child);
  }
  return {
    id: "direct-http",
    label: "direct, warm session, server-everything over streamable HTTP",
    downstream: "direct http",
    timings,
    backToBack: true,
    leaked: await reap(child.pid === undefined ? [] : [child.pid]),
    ping: pings,
  };
}

/**
 * The first call on a fresh, idle upstream session: what an isolated call costs at best even
 * with its session pre-warmed (the upstream's own first-call work, JIT and lazy init included).
 */
export async function directCold(reap: Reaper): Promise<CaseResult> {
  const parts: Timings[] = [];
  let closing: Promise<void> = Promise.resolve();
  let watched: number[] = [];
  try {
    for (let i = 0; i < SIZE.cold; i++) {
      const d = await connectDirect(SERVER, EVERYTHING);
      // The previous session exits while this one starts, as a used isolated session does.
      await closing;
      await sleep(SETTLE_MS / 3);
      parts.push(await measure(directEcho(d.client), 1));
      watched = descendants(process.pid);
      closing = d.close();
    }
  } finally {
    await closing;
  }
  return {
    id: "direct-cold",
    label: "direct, first call on a fresh idle session",
    downstream: "direct",
    timings: merge(parts),
    backToBack: false,
    leaked: await reap(watched),
    note: `${SIZE.cold} sessions, one call each, ${Math.round(SETTLE_MS / 3)} ms after initialize`,
  };
}

export async function sharedCase(downstream: "stdio" | "http", reap: Reaper): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "shared" },
    reap,
    async (m) => ({
      calls: await warmAndMeasure(mcpxEcho(m.run.client), SIZE.warmup, SIZE.warm),
      pings: await warmAndMeasure(ping(m.run.client), SIZE.warmup, SIZE.warm),
    }),
  );
  return {
    id: `shared-${downstream}`,
    label: "mcpx shared",
    downstream,
    timings: value.calls,
    backToBack: true,
    leaked,
    rss,
    ping: value.pings,
  };
}

export async function naiveCase(downstream: "stdio" | "http", reap: Reaper): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "isolated", prewarm: 0 },
    reap,
    (m) => warmAndMeasure(mcpxEcho(m.run.client), SIZE.spawnWarmup, SIZE.naive),
  );
  return {
    id: `naive-${downstream}`,
    label: "mcpx isolated, no pre-warm (spawn + initialize per call)",
    downstream,
    timings: value,
    backToBack: true,
    leaked,
    rss,
  };
}

export async function prewarmSpacedCase(
  downstream: "stdio" | "http",
  gapMs: number,
  reap: Reaper,
): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "isolated", prewarm: 1 },
    reap,
    (m) =>
      warmAndMeasure(mcpxEcho(m.run.client), SIZE.spawnWarmup, SIZE.prewarm, () => sleep(gapMs)),
  );
  return {
    id: `spaced-${downstream}`,
    label: "mcpx isolated, pre-warm 1, spaced",
    downstream,
    timings: value,
    backToBack: false,
    leaked,
    rss,
    note: `fixed ${gapMs} ms gap before each call`,
  };
}

export async function prewarmBackToBackCase(
  downstream: "stdio" | "http",
  reap: Reaper,
): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx(
    downstream,
    { session: "isolated", prewarm: 1 },
    reap,
    (m) => warmAndMeasure(mcpxEcho(m.run.client), SIZE.spawnWarmup, SIZE.prewarm),
  );
  return {
    id: `b2b-${downstream}`,
    label: "mcpx isolated, pre-warm 1, back to back",
    downstream,
    timings: value,
    backToBack: true,
    leaked,
    rss,
  };
}

/** 16 HTTP clients (each its own MCP session) against one mcpx, each N calls back to back. */
export async function concurrencyCase(reap: Reaper): Promise<CaseResult> {
  const { value, rss, leaked } = await withMcpx("http", { session: "shared" }, reap, async (m) => {
    const url = m.url!;
    const extra = await Promise.all(
      Array.from({ length: SIZE.clients - 1 }, () => connectHttp(url, CLIENT_NAME)),
    );
    try {
      const clients = [m.run.client, ...extra.map((e) => e.client)];
      await Promise.all(clients.map((c) => measure(mcpxEcho(c), 10)));
      const t0 = performance.now();
      const parts = await Promise.all(clients.map((c) => measure(mcpxEcho(c), SIZE.perClient)));
      return { timings: merge(parts), wallMs: performance.now() - t0 };
    } finally {
      await Promise.all(extra.map((e) => e.close()));
    }
  });
  return {
    id: "concurrent-http",
    label: `mcpx shared, ${SIZE.clients} concurrent HTTP clients`,
    downstream: "http",
    timings: value.timings,
    backToBack: true,
    wallMs: value.wallMs,
    leaked,
    rss,
    note: `${SIZE.clients} SDK clients × ${SIZE.perClient} calls, one mcpx process`,
  };
}
