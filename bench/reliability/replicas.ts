/**
 * Replicas with Redis (issue 31): the 32-client load run (load.ts's HTTP run: half 2025-era
 * sessions, half 2026-07-28 stateless, `call` of everything.echo with a unique payload each)
 * once against one mcpx, then through real nginx round-robin over two mcpx replicas sharing
 * state through a real redis-server. Every request must get exactly its own answer. Writes
 * "## Replicas with Redis" in bench/RESULTS.md, the single-process figure beside it (same run,
 * same machine load). Exit 1 on any lost, duplicated, crossed or failed answer.
 *
 *   node --import tsx bench/reliability/replicas.ts [--calls 3000] [--clients 32] [--no-write]
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { table, type BenchSection } from "../report.js";
import { writeSections } from "../results.js";
import { HttpRpc } from "../../test/helpers/rpc.js";
import { findNginx, startNginx } from "../../test/helpers/nginx.js";
import { findRedis, startRedis } from "../../test/helpers/redis.js";
import {
  configFile,
  echoOf,
  everything,
  latencies,
  resultText,
  startHttpMcpx,
  stopProcess,
  untilHealthy,
} from "./mcpx.js";
import { newTally, problems, type Tally } from "./tally.js";

const { values: opts } = parseArgs({
  options: {
    calls: { type: "string", default: "3000" },
    clients: { type: "string", default: "32" },
    "no-write": { type: "boolean", default: false },
  },
});
const CALLS = Number(opts.calls);
const CLIENTS = Number(opts.clients);
const CALL_TIMEOUT_MS = 120_000;

interface Run {
  name: string;
  tally: Tally;
  seconds: number;
}

/** 32 clients over `url`, CALLS echo calls in all; each answer checked by id and payload. */
async function drive(name: string, url: string): Promise<Run> {
  const clients = Array.from(
    { length: CLIENTS },
    (_, i) => new HttpRpc(url, i % 2 === 0 ? "legacy" : "modern", `replicas-${i}`),
  );
  await Promise.all(clients.map((c) => c.open()));
  const tally = newTally();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (let i = next++; i < CALLS; i = next++) {
        const payload = `${i}-${randomUUID()}-ü"\\`;
        const started = performance.now();
        tally.sent++;
        try {
          const answer = await client.request(
            "tools/call",
            {
              name: "call",
              arguments: { method: "everything.echo", arguments: { message: payload } },
            },
            `${client.name}-${i}`,
            AbortSignal.timeout(CALL_TIMEOUT_MS),
          );
          tally.latencies.push(performance.now() - started);
          if (answer.error || answer.result?.isError) {
            tally.failed++;
            if (tally.samples.length < 5) tally.samples.push(JSON.stringify(answer).slice(0, 300));
          } else if (resultText(answer) === echoOf(payload)) tally.ok++;
          else tally.crossed++;
        } catch (error) {
          tally.lost++;
          if (tally.samples.length < 5) tally.samples.push(String(error).slice(0, 300));
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(clients.map((c) => c.close()));
  return { name, tally, seconds };
}

async function main(): Promise<void> {
  const nginxBin = findNginx();
  const redisBin = findRedis();
  if (!nginxBin || !redisBin) throw new Error("needs nginx and redis-server (apt-get install)");
  const servers = { everything: { ...everything(), session: "shared" } };
  const runs: Run[] = [];

  console.log(`replicas: ${CALLS} calls, ${CLIENTS} clients, one mcpx...`);
  const single = configFile({ mcpServers: servers });
  const one = await startHttpMcpx(single.file, ["--log-level", "warn"]);
  try {
    await untilHealthy(one.url);
    runs.push(await drive("one mcpx (no Redis)", one.url));
  } finally {
    await stopProcess(one.child);
    single.remove();
  }

  console.log(`replicas: ${CALLS} calls, ${CLIENTS} clients, nginx → two mcpx with Redis...`);
  const redis = await startRedis(redisBin);
  const shared = configFile({
    sessionSecret: "replicas-bench-secret-0123456789abcdef",
    redis: redis.url,
    mcpServers: servers,
  });
  const replicas = await Promise.all([
    startHttpMcpx(shared.file, ["--log-level", "warn"]),
    startHttpMcpx(shared.file, ["--log-level", "warn"]),
  ]);
  try {
    await Promise.all(replicas.map((r) => untilHealthy(r.url)));
    const ports = replicas.map((r) => Number(new URL(r.url).port)) as [number, number];
    const nginx = await startNginx(nginxBin, ports, 1024);
    try {
      runs.push(await drive("nginx → two mcpx, Redis", `${nginx.base}/mcp`));
    } finally {
      await nginx.close();
    }
  } finally {
    await Promise.all(replicas.map((r) => stopProcess(r.child)));
    shared.remove();
    await redis.stop();
  }

  const rows = runs.map((r) => {
    const l = latencies(r.tally.latencies);
    return [
      r.name,
      CALLS,
      r.tally.ok,
      r.tally.lost,
      r.tally.crossed,
      r.tally.failed,
      l.p50.toFixed(1),
      l.p99.toFixed(1),
      (CALLS / r.seconds).toFixed(0),
    ];
  });
  const markdown = [
    `${CLIENTS} HTTP clients (half 2025-era sessions, half 2026-07-28), each call \`call({ method: "everything.echo", arguments: { message } })\` with a unique message, the upstream \`shared\`; an answer counts as right only with its request's id and message. Both runs in one process, one after the other, on the same machine. Reproduce with \`npm run build && node --import tsx bench/reliability/replicas.ts\`.`,
    "",
    table(
      [
        "run",
        "calls",
        "answered right",
        "lost",
        "crossed",
        "errors",
        "p50 ms",
        "p99 ms",
        "calls/s",
      ],
      rows,
    ),
  ].join("\n");
  console.log(`\n${markdown}\n`);
  const bad = runs.flatMap((r) => problems(r.name, r.tally, CALLS, 0, false));
  for (const line of bad) console.error(`FAIL ${line}`);
  if (!opts["no-write"] && bad.length === 0) {
    const section: BenchSection = { id: "replicas", title: "Replicas with Redis", markdown };
    writeSections([section]);
  }
  process.exitCode = bad.length === 0 ? 0 : 1;
}

await main();
