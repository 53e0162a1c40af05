/**
 * Trust pins: what `"trust": "hold"` adds to start-up with 16 servers, measured in-process on the
 * work it adds to the path to a first answer — each server's catalog checked against its pin file
 * (read from disk, hashes of every tool definition, the suspicious-text rules over every string
 * of it). 16 servers × the recorded GitHub MCP server catalog (117 tools each, 1,872 definitions,
 * a large case) and 16 × its first 20 (typical servers have 5–30 tools). Three starts each: the
 * first ever (no pin files: every definition pinned and 16 files written), a start whose pins all
 * match, and one with a changed tool on every server (16 pending entries written).
 */
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseConfig } from "../src/config/load.js";
import { createLogger } from "../src/logger.js";
import { TrustPins } from "../src/registry/trust.js";
import { PinStore } from "../src/registry/trust-store.js";
import type { ServerState } from "../src/registry/types.js";
import type { ToolDef } from "../src/types.js";
import { tempDir } from "../test/helpers/temp.js";
import { stats } from "./lib/stats.js";
import { table, type BenchSection } from "./report.js";
import { ROOT } from "./upstreams.js";

const SERVERS = 16;
const RUNS = 20;
/** Tools per server in the typical arm (the first of the recorded catalog). */
const TYPICAL = 20;

function corpus(): ToolDef[] {
  const dir = path.join(ROOT, "test/fixtures/corpus/github-mcp-server");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as ToolDef);
}

function states(tools: ToolDef[]): ServerState[] {
  const config = parseConfig(
    {
      trust: "hold",
      mcpServers: Object.fromEntries(
        Array.from({ length: SERVERS }, (_, i) => [`s${i}`, { command: `server-${i}` }]),
      ),
    },
    "/bench/mcpx.json",
    {},
  );
  return config.servers.map((server) => ({
    name: server.name,
    config: server,
    status: "ready",
    health: { consecutiveFailures: 0 },
    tools,
    resources: [],
    resourceTemplates: [],
    prompts: [],
    catalogFrom: "live",
  }));
}

/** One start: a fresh TrustPins (nothing read yet) checking every server. Returns ms. */
function start(dir: string, all: ServerState[]): number {
  const pins = new TrustPins({
    store: new PinStore(dir),
    logger: createLogger({ level: "silent", write: () => {} }),
    configFile: "/bench/mcpx.json",
    secrets: () => [],
  });
  const t0 = performance.now();
  for (const s of all) pins.check(s);
  return performance.now() - t0;
}

/** The three starts on `tools` (per server), `RUNS` times each, in a fresh folder per run. */
function arms(tools: ToolDef[]): { first: number[]; steady: number[]; change: number[] } {
  const changed = tools.map((t, i) =>
    i === 0 ? { ...t, description: `${t.description} (v2)` } : t,
  );
  const out = { first: [] as number[], steady: [] as number[], change: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    const dir = tempDir("mcpx-bench-trust-");
    out.first.push(start(dir, states(tools)));
    out.steady.push(start(dir, states(tools)));
    out.change.push(start(dir, states(changed)));
  }
  return out;
}

export function runTrustBench(): Promise<BenchSection> {
  const tools = corpus();
  const typical = arms(tools.slice(0, TYPICAL));
  const large = arms(tools);
  const row = (name: string, v: number[]) => {
    const s = stats(v);
    return [name, s.p50.toFixed(2), s.p90.toFixed(2), s.max.toFixed(2)];
  };
  const markdown = [
    `${SERVERS} servers, each with ${TYPICAL} or all ${tools.length} tools of the recorded GitHub MCP server catalog, \`"trust": "hold"\`, ${RUNS} runs each, in-process (\`npm run bench -- trust\`). Time to check every catalog against its pin index (read from disk), summed over the 16 servers: the CPU pins add at start-up. Each server's share is paid when its own catalog lands (servers land at different times), so the wait added to any one server is about 1/16 of it. Load average during the run: ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores.`,
    "",
    table(
      ["start", "p50 ms", "p90 ms", "max ms"],
      [
        row(`${TYPICAL} tools each: pins match (a usual start)`, typical.steady),
        row(`${TYPICAL} tools each: first ever (16 pin files written)`, typical.first),
        row(`${TYPICAL} tools each: one tool changed per server`, typical.change),
        row(`${tools.length} tools each: pins match`, large.steady),
        row(`${tools.length} tools each: first ever`, large.first),
        row(`${tools.length} tools each: one tool changed per server`, large.change),
      ],
    ),
  ].join("\n");
  return Promise.resolve({ id: "trust", title: "Trust pins: start-up cost of hold", markdown });
}
