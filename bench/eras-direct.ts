/**
 * Per downstream era, what a `call` through mcpx costs next to a client that talks to the upstream
 * itself: a 2026-07-28 client and a 2025 client (both the SDK v2 client, pinned or in its default
 * mode), over stdio and over streamable HTTP, to the SDK v2 fixture (test/fixtures/upstreams/
 * modern.mjs, speaks both eras) and to server-everything (2025 only). The transport is the same on
 * both hops: a stdio row is client ⇄ mcpx over stdio with stdio upstreams, an HTTP row HTTP twice.
 * mcpx keeps one warm `shared` session per upstream, as the direct client does, so the difference
 * is the proxy itself. Every arm runs in one loop, interleaved call by call.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import getPort from "get-port";
import { newClient, type Era } from "../test/helpers/clients.js";
import {
  FIXTURES,
  startHttp,
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
  type Running,
} from "../test/helpers/proxy.js";
import { untilOutput } from "./lib/processes.js";
import { stats } from "./lib/stats.js";
import { table } from "./report.js";
import { ROOT } from "./upstreams.js";

/** Measured calls per arm, after WARMUP calls per arm. */
const CALLS = 300;
const WARMUP = 30;

const EVERYTHING_BIN = path.join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const MODERN_BIN = path.join(FIXTURES, "modern.mjs");

type Transport = "stdio" | "http";
type Upstream = "modern fixture" | "server-everything";
const ERA_LABEL: Record<Era, string> = { modern: "2026-07-28", legacy: "2025" };

interface Arm {
  era: Era;
  transport: Transport;
  upstream: Upstream;
  via: "direct" | "mcpx";
  call: () => Promise<boolean>;
  ms: number[];
  failed: number;
}

/** server-everything over streamable HTTP on a free port. */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await getPort();
  const child = spawn(process.execPath, [EVERYTHING_BIN, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await untilOutput(child, "stderr", "listening on port", "server-everything");
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

/** The echo answer: the fixture names the era of the connection that reached it. */
function echoOf(upstream: Upstream, era: Era): string {
  return upstream === "server-everything" ? "Echo: x" : `x (${era})`;
}

function directCall(client: Client, upstream: Upstream, era: Era) {
  const expected = echoOf(upstream, era);
  return async () => {
    const result = await client.callTool({ name: "echo", arguments: { message: "x" } });
    return result.isError !== true && text(result) === expected;
  };
}

function mcpxCall(client: Client, upstream: Upstream) {
  const server = upstream === "server-everything" ? "everything" : "modern";
  // mcpx speaks 2026-07-28 to the fixture whatever its client speaks.
  const expected = echoOf(upstream, "modern");
  return async () => {
    const result = await client.callTool({
      name: "call",
      arguments: { method: `${server}.echo`, arguments: { message: "x" } },
    });
    return result.isError !== true && text(result) === expected;
  };
}

/** Opened clients and processes, closed in reverse order. */
type Closer = () => Promise<unknown>;

async function directClient(
  era: Era,
  transport: Transport,
  upstream: Upstream,
  url: string,
): Promise<Client> {
  const client = newClient(era, "mcpx-bench-direct");
  const bin = upstream === "server-everything" ? EVERYTHING_BIN : MODERN_BIN;
  await client.connect(
    transport === "stdio"
      ? new StdioClientTransport({
          command: process.execPath,
          args: upstream === "server-everything" ? [bin, "stdio"] : [bin],
          stderr: "ignore",
        })
      : new StreamableHTTPClientTransport(new URL(url)),
  );
  return client;
}

function sharedConfig(dir: string, servers: Record<string, Record<string, unknown>>): string {
  const mcpServers = Object.fromEntries(
    Object.entries(servers).map(([name, entry]) => [name, { ...entry, session: "shared" }]),
  );
  // Health checks would add traffic to the measured upstreams.
  mkdirSync(dir, { recursive: true });
  return writeConfig({ mcpServers, health: { interval: 3_600_000 } }, dir);
}

/** Build every arm: 2 eras × 2 transports × 2 upstreams × direct/mcpx, less the impossible. */
async function openArms(dir: string, closers: Closer[]): Promise<Arm[]> {
  const modernHttp = await startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs");
  closers.push(() => stop(modernHttp.child));
  const everythingHttp = await startEverythingHttp();
  closers.push(() => stop(everythingHttp.child));
  const stdioFile = sharedConfig(path.join(dir, "stdio"), {
    modern: { command: process.execPath, args: [MODERN_BIN] },
    everything: { command: process.execPath, args: [EVERYTHING_BIN, "stdio"] },
  });
  const httpFile = sharedConfig(path.join(dir, "http"), {
    modern: { url: modernHttp.url },
    everything: { url: everythingHttp.url },
  });
  const quiet = ["--log-level", "warn"];
  const httpProxy = await startHttp(httpFile, quiet, {}, { era: "modern" });
  closers.push(() => httpProxy.close());
  const arms: Arm[] = [];
  const add = (arm: Omit<Arm, "ms" | "failed">) => arms.push({ ...arm, ms: [], failed: 0 });
  const upstreamUrl = (u: Upstream) =>
    u === "server-everything" ? everythingHttp.url : modernHttp.url;
  for (const era of ["modern", "legacy"] as const) {
    const stdioProxy: Running = await startStdio(stdioFile, quiet, { era });
    closers.push(() => stdioProxy.close());
    const httpClient =
      era === "modern"
        ? httpProxy.client
        : await connectTo(newClient(era, "mcpx-bench-2025"), httpProxy.url, closers);
    for (const transport of ["stdio", "http"] as const) {
      const viaMcpx = transport === "stdio" ? stdioProxy.client : httpClient;
      for (const upstream of ["modern fixture", "server-everything"] as const) {
        // server-everything speaks only 2025: a 2026-07-28 client cannot reach it directly.
        if (!(era === "modern" && upstream === "server-everything")) {
          const direct = await directClient(era, transport, upstream, upstreamUrl(upstream));
          closers.push(() => direct.close());
          add({ era, transport, upstream, via: "direct", call: directCall(direct, upstream, era) });
        }
        add({ era, transport, upstream, via: "mcpx", call: mcpxCall(viaMcpx, upstream) });
      }
    }
  }
  return arms;
}

async function connectTo(client: Client, url: string, closers: Closer[]): Promise<Client> {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  closers.push(() => client.close());
  return client;
}

/** Run the arms interleaved: each round calls every arm once, in turn. */
async function measure(arms: Arm[]): Promise<void> {
  for (let i = 0; i < WARMUP; i++) for (const arm of arms) await arm.call();
  for (let i = 0; i < CALLS; i++) {
    for (const arm of arms) {
      const t0 = performance.now();
      const ok = await arm.call().catch(() => false);
      arm.ms.push(performance.now() - t0);
      if (!ok) arm.failed += 1;
    }
  }
}

/** The markdown of the proxy-vs-direct part of the eras section. */
export async function runDirectVsProxy(): Promise<string> {
  const started = performance.now();
  const closers: Closer[] = [];
  const dir = tempDir("mcpx-bench-direct-");
  let arms: Arm[];
  try {
    arms = await openArms(dir, closers);
    await measure(arms);
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  return render(arms, (performance.now() - started) / 1000);
}

function render(arms: Arm[], seconds: number): string {
  const fmt = (n: number) => n.toFixed(2);
  const armStats = (arm: Arm | undefined) => {
    if (!arm) return { p50: Number.NaN, p99: Number.NaN, failed: 0 };
    return { ...stats(arm.ms), failed: arm.failed };
  };
  const rows: (string | number)[][] = [];
  const seen = new Set<string>();
  for (const arm of arms) {
    const key = `${arm.era}/${arm.transport}/${arm.upstream}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const same = (via: Arm["via"]) =>
      arms.find((a) => `${a.era}/${a.transport}/${a.upstream}` === key && a.via === via);
    const direct = armStats(same("direct"));
    const proxy = armStats(same("mcpx"));
    const na = (n: number) => (Number.isNaN(n) ? "n/a" : fmt(n));
    rows.push([
      ERA_LABEL[arm.era],
      arm.transport,
      arm.upstream,
      na(direct.p50),
      na(direct.p99),
      fmt(proxy.p50),
      fmt(proxy.p99),
      na(proxy.p50 - direct.p50),
      direct.failed + proxy.failed,
    ]);
  }
  return [
    `One \`echo\` call per arm and round, ${CALLS} rounds after ${WARMUP} warm-up rounds, every arm interleaved call by call in one loop (${seconds.toFixed(1)} s). Direct: the SDK v2 client of that era connected to the upstream itself (warm session). mcpx: the same client calling \`call\` on the built mcpx, whose upstream session is \`shared\` (warm). The transport is the same on both hops (stdio: client ⇄ mcpx over stdio, upstreams spawned over stdio; http: streamable HTTP twice, on loopback). mcpx talks to the fixture in 2026-07-28 and to server-everything in 2025-11-25 whatever its client speaks; a 2026-07-28 client cannot use server-everything directly (n/a).`,
    "",
    table(
      [
        "client",
        "transport",
        "upstream",
        "direct p50 ms",
        "direct p99 ms",
        "mcpx p50 ms",
        "mcpx p99 ms",
        "mcpx − direct p50",
        "failed",
      ],
      rows,
      ["left", "left", "left"],
    ),
  ].join("\n");
}
