/**
 * Upstream eras benchmark: what an `isolated` call through mcpx costs to a modern (2026-07-28)
 * HTTP upstream, which needs no session, next to a legacy (2025-11-25) one, which needs
 * initialize before every fresh session. Upstreams: the SDK v2 fixture
 * (test/fixtures/upstreams/modern.mjs) and server-everything over streamable HTTP, both real
 * processes on loopback; mcpx is the built `dist/bundle/index.js` over stdio. The arms are interleaved
 * call by call, so drift (other load on the machine) hits them alike.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/client";
import getPort from "get-port";
import {
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../test/helpers/proxy.js";
import { runDirectVsProxy } from "./eras-direct.js";
import { untilOutput } from "./lib/processes.js";
import { stats } from "./lib/stats.js";
import { table, type BenchSection } from "./report.js";
import { ROOT } from "./upstreams.js";

/** Measured calls per arm, after WARMUP calls per arm. */
const CALLS = 200;
const WARMUP = 20;
/** Pause between rounds: room for a legacy spare to be refilled, as between a model's calls. */
const GAP_MS = 50;

interface Arm {
  id: string;
  label: string;
  server: string;
  answer: string;
}

const ARMS: Arm[] = [
  {
    id: "modern",
    label: "modern HTTP upstream (no session; prewarm ignored)",
    server: "modern",
    answer: "x (modern)",
  },
  {
    id: "legacy",
    label: "legacy HTTP upstream, prewarm 0 (the HTTP default)",
    server: "legacy",
    answer: "Echo: x",
  },
  {
    id: "legacy_warm",
    label: "legacy HTTP upstream, prewarm 1 (a spare initialized ahead)",
    server: "legacy_warm",
    answer: "Echo: x",
  },
];

/** server-everything over streamable HTTP; counts the HTTP requests it logs. */
async function startEverythingHttp(): Promise<{
  url: string;
  child: ChildProcess;
  requests: () => number;
}> {
  const port = await getPort();
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
      "streamableHttp",
    ],
    { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let requests = 0;
  // It logs one "Received MCP <METHOD> request" line per HTTP request on /mcp.
  child.stdout.on("data", (c: Buffer) => {
    requests += (c.toString().match(/Received MCP \w+ request/g) ?? []).length;
  });
  await untilOutput(child, "stderr", "listening on port", "server-everything");
  return { url: `http://127.0.0.1:${port}/mcp`, child, requests: () => requests };
}

function call(client: Client, arm: Arm): () => Promise<boolean> {
  return async () => {
    const result = await client.callTool({
      name: "call",
      arguments: { method: `${arm.server}.echo`, arguments: { message: "x" } },
    });
    return result.isError !== true && text(result) === arm.answer;
  };
}

interface ArmResult {
  ms: number[];
  failed: number;
  /** HTTP requests the upstream received per measured call (its spare refills included). */
  requestsPerCall: number;
}

export async function runErasBench(): Promise<BenchSection> {
  const started = performance.now();
  const modern = await startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs");
  // One process per legacy arm, so each arm's requests are counted apart.
  const legacy = await startEverythingHttp();
  const legacyWarm = await startEverythingHttp();
  const dir = tempDir("mcpx-bench-eras-");
  const results = new Map<string, ArmResult>();
  try {
    const file = writeConfig(
      {
        mcpServers: {
          // What an isolated call costs per era (the default is now "client").
          modern: { url: modern.url, prewarm: 1, session: "isolated" },
          legacy: { url: legacy.url, session: "isolated" },
          legacy_warm: { url: legacyWarm.url, prewarm: 1, session: "isolated" },
        },
        // Health checks would add requests to the counts.
        health: { interval: 3_600_000 },
      },
      dir,
    );
    const proxy = await startStdio(file, ["--log-level", "warn"]);
    try {
      const calls = ARMS.map((arm) => call(proxy.client, arm));
      for (let i = 0; i < WARMUP; i++) {
        for (const c of calls) await c();
        await sleep(GAP_MS);
      }
      const requests = [
        async () =>
          ((await (await fetch(`${modern.base}/control/requests`)).json()) as unknown[]).length,
        () => Promise.resolve(legacy.requests()),
        () => Promise.resolve(legacyWarm.requests()),
      ];
      await fetch(`${modern.base}/control/reset`, { method: "POST" });
      const before = await Promise.all(requests.map((r) => r()));
      const timings = ARMS.map(() => ({ ms: [] as number[], failed: 0 }));
      for (let i = 0; i < CALLS; i++) {
        for (const [k, c] of calls.entries()) {
          const t0 = performance.now();
          const ok = await c().catch(() => false);
          timings[k]!.ms.push(performance.now() - t0);
          if (!ok) timings[k]!.failed += 1;
        }
        await sleep(GAP_MS);
      }
      const after = await Promise.all(requests.map((r) => r()));
      ARMS.forEach((arm, k) => {
        results.set(arm.id, {
          ...timings[k]!,
          requestsPerCall: (after[k]! - before[k]!) / CALLS,
        });
      });
    } finally {
      await proxy.close();
    }
  } finally {
    await stop(modern.child);
    await stop(legacy.child);
    await stop(legacyWarm.child);
    rmSync(dir, { recursive: true, force: true });
  }
  const isolated = render(results, (performance.now() - started) / 1000);
  const direct = await runDirectVsProxy();
  return {
    id: "eras",
    title:
      "Protocol eras: mcpx vs a direct client per era; isolated calls to modern vs legacy HTTP upstreams",
    markdown: [
      "Reproduce: `npm run bench -- eras` (both parts, one run).",
      "",
      "### mcpx vs a direct client, per downstream era",
      "",
      direct,
      "",
      "### Isolated calls: modern vs legacy HTTP upstream",
      "",
      isolated,
    ].join("\n"),
  };
}

function render(results: Map<string, ArmResult>, seconds: number): string {
  const fmt = (n: number) => n.toFixed(1);
  const rows = ARMS.map((arm) => {
    const r = results.get(arm.id)!;
    const s = stats(r.ms);
    return [arm.label, fmt(s.p50), fmt(s.p90), fmt(s.p99), r.requestsPerCall.toFixed(2), r.failed];
  });
  return [
    `One \`call\` of \`echo\` through mcpx (built, over stdio, session policy \`isolated\`), ${CALLS} per arm after ${WARMUP} warm-up calls each, the arms interleaved call by call with ${GAP_MS} ms between rounds. Upstreams on loopback: the SDK v2 fixture \`test/fixtures/upstreams/modern.mjs\` over streamable HTTP (modern, 2026-07-28) and server-everything \`streamableHttp\` (legacy, 2025-11-25). Requests per call: HTTP requests the upstream received per measured call, the refill of spares included (counted at the fixture and from server-everything's request log). Measured in ${seconds.toFixed(1)} s.`,
    "",
    table(["arm", "p50 ms", "p90 ms", "p99 ms", "requests/call", "failed"], rows, ["left"]),
  ].join("\n");
}
