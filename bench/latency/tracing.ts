/**
 * Tracing overhead (issue 29): the same warm `call` of server-everything's echo through two mcpx
 * processes over HTTP, shared session policy, one with traces on (exported over OTLP/HTTP to a
 * sink in this process that reads and drops each payload) and one without. Calls alternate
 * between the two, the order flipping every round, so both see the same machine load.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { descendants, startHttp, tempDir, writeConfig } from "../../test/helpers/proxy.js";
import { createReaper } from "../lib/processes.js";
import { percentile } from "../lib/stats.js";
import type { BenchSection } from "../report.js";
import { EVERYTHING, mcpxEcho, measure, SERVER, SETTLE_MS } from "./harness.js";

const ROUNDS = 400;
const WARMUP = 40;

export async function runTracingBench(): Promise<BenchSection> {
  const started = performance.now();
  const load = os.loadavg()[0] ?? Number.NaN;
  const reap = createReaper(new Set(descendants(process.pid)), "bench tracing");
  let exported = 0;
  const sink = createServer((req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => {
      exported++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const otlp = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/v1/traces`;
  const dirs = [tempDir("mcpx-bench-tracing-"), tempDir("mcpx-bench-tracing-")] as const;
  const server = { [SERVER]: { ...EVERYTHING, session: "shared" } };
  const args = ["--log-level", "warn"];
  const off = await startHttp(
    writeConfig({ mcpServers: server }, dirs[0]),
    args,
    {},
    { era: "legacy" },
  );
  const on = await startHttp(
    writeConfig({ mcpServers: server, tracing: { otlp } }, dirs[1]),
    args,
    {},
    { era: "legacy" },
  );
  const watched = [off.pid, on.pid, ...descendants(off.pid), ...descendants(on.pid)];
  const ms = { off: [] as number[], on: [] as number[] };
  let failed = 0;
  try {
    await sleep(SETTLE_MS);
    const calls = { off: mcpxEcho(off.client), on: mcpxEcho(on.client) };
    for (const arm of ["off", "on"] as const) failed += (await measure(calls[arm], WARMUP)).failed;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
      for (const arm of order) {
        const m = await measure(calls[arm], 1);
        ms[arm].push(...m.ms);
        failed += m.failed;
      }
    }
  } finally {
    await off.close();
    await on.close();
    sink.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const leaked = await reap(watched);
  const row = (arm: "off" | "on") =>
    `| ${arm === "on" ? "traces on (OTLP/HTTP)" : "traces off"} | ${ms[arm].length} | ${percentile(ms[arm], 50).toFixed(2)} | ${percentile(ms[arm], 90).toFixed(2)} | ${percentile(ms[arm], 99).toFixed(2)} |`;
  const p50 = { off: percentile(ms.off, 50), on: percentile(ms.on, 50) };
  const overhead = ((p50.on - p50.off) / p50.off) * 100;
  const markdown = [
    `Warm \`call\` of server-everything's \`echo\` through mcpx over HTTP (2025-era client, \`session: "shared"\`), two mcpx processes side by side, one with \`tracing.otlp\` set (spans exported to an OTLP/HTTP sink in the bench process, ${exported} export requests), calls alternating between them for ${ROUNDS} rounds after ${WARMUP} warm-up calls each. ms per call:`,
    "",
    "| mcpx | calls | p50 | p90 | p99 |",
    "| --- | ---: | ---: | ---: | ---: |",
    row("off"),
    row("on"),
    "",
    `Tracing overhead at p50: **${overhead >= 0 ? "+" : ""}${overhead.toFixed(1)} %** (target ≤ 5 %). Failed calls: ${failed}; upstream processes left behind: ${leaked}. Load average ${load.toFixed(2)} at the start; ${((performance.now() - started) / 1000).toFixed(0)} s. Reproduce: \`npm run build && npm run bench -- tracing\`.`,
  ].join("\n");
  return { id: "tracing", title: "Tracing overhead", markdown };
}
