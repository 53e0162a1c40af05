/**
 * Code mode: what reaches the model and how many round trips a multi-step task takes, step by
 * step with `call` (plainly, and with `select`) against one `call({ script })`; and what a script
 * costs in time next to a plain `call`. The built mcpx over stdio, as a user runs it, over real
 * upstream processes: the replay fixture serving the github-mcp-server corpus with 60 issues
 * (REPLAY_ISSUES), server-memory, server-everything.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { decode as decodeToon } from "@toon-format/toon";
import { isDeepStrictEqual } from "node:util";
import { decodeSparse } from "../src/compression/sparse.js";
import { listIssues, makeIssues } from "../test/fixtures/upstreams/issues.mjs";
import { startStdio, tempDir, writeConfig, type Running } from "../test/helpers/proxy.js";
import { ISSUE_COUNT, memorySeed, TASKS, type ArmResult } from "./codemode-tasks.js";
import { stats } from "./lib/stats.js";
import { int, table, verdict, type BenchSection } from "./report.js";
import { npmServer, replayServer } from "./upstreams.js";

/** Targets from issue 18: reported next to the numbers, never asserted. */
const TARGET = { tokenSaving: 0.8, roundTrips: 1, oneCallOverheadMs: 5 } as const;

const SIZE = { warmup: 20, pairs: 200 } as const;

async function callText(client: Client, args: Record<string, unknown>): Promise<string> {
  const r = await client.callTool({ name: "call", arguments: args });
  const text = (r.content as { type: string; text?: string }[]).map((b) => b.text ?? "").join("\n");
  if (r.isError === true) throw new Error(`bench: call failed: ${text.slice(0, 300)}`);
  return text;
}

/** A script's value as the model reads it: JSON, TOON or a sparse table, decoded. */
function decodeAnswer(text: string): unknown {
  for (const decode of [JSON.parse, decodeToon, decodeSparse] as ((t: string) => unknown)[]) {
    try {
      return decode(text);
    } catch {
      // Not this encoding: try the next.
    }
  }
  return text;
}

async function withMcpx<T>(body: (run: Running) => Promise<T>): Promise<T> {
  const dir = tempDir("mcpx-bench-codemode-");
  const shared = { session: "shared" } as const;
  const file = writeConfig(
    {
      mcpServers: {
        github: { ...replayServer({ REPLAY_ISSUES: String(ISSUE_COUNT) }), ...shared },
        memory: {
          ...npmServer("@modelcontextprotocol/server-memory", [], {
            MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"),
          }),
          ...shared,
        },
        everything: {
          ...npmServer("@modelcontextprotocol/server-everything", ["stdio"]),
          ...shared,
        },
      },
    },
    dir,
  );
  const run = await startStdio(file, ["--log-level", "warn"]);
  try {
    return await body(run);
  } finally {
    await run.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface TaskRun {
  id: string;
  title: string;
  arms: ArmResult[];
  correct: boolean;
}

async function runTasks(client: Client): Promise<TaskRun[]> {
  const seed = memorySeed();
  await callText(client, {
    method: "memory.create_entities",
    arguments: { entities: seed.entities },
  });
  await callText(client, {
    method: "memory.create_relations",
    arguments: { relations: seed.relations },
  });
  const out: TaskRun[] = [];
  for (const task of TASKS) {
    const arms: ArmResult[] = [];
    for (const arm of task.arms) arms.push(await arm.run(client));
    const script = arms.find((a) => a.arm === "one script")!;
    out.push({
      id: task.id,
      title: task.title,
      arms,
      correct: isDeepStrictEqual(decodeAnswer(script.last), task.expected),
    });
  }
  return out;
}

/** A plain call vs a script making the same call vs a script making none, interleaved. */
async function latency(client: Client) {
  const echo = { method: "everything.echo", arguments: { message: "x" } };
  const script = { script: `return (await servers.everything.echo({ message: "x" })).text;` };
  const empty = { script: "return 1;" };
  const arms = { call: [] as number[], script: [] as number[], empty: [] as number[] };
  for (let i = 0; i < SIZE.warmup + SIZE.pairs; i++) {
    for (const [name, args] of [
      ["call", echo],
      ["script", script],
      ["empty", empty],
    ] as const) {
      const t = performance.now();
      await callText(client, args);
      if (i >= SIZE.warmup) arms[name].push(performance.now() - t);
    }
  }
  return { call: stats(arms.call), script: stats(arms.script), empty: stats(arms.empty) };
}

const ms = (n: number) => n.toFixed(2);
const listChars = () =>
  JSON.stringify(listIssues(makeIssues(ISSUE_COUNT), { perPage: ISSUE_COUNT })).length;
const pct = (saved: number) => `${(saved * 100).toFixed(1)} %`;

export async function runCodeModeBench(): Promise<BenchSection> {
  const started = performance.now();
  const { tasks, times } = await withMcpx(async (run) => ({
    tasks: await runTasks(run.client),
    times: await latency(run.client),
  }));
  const rows: string[][] = [];
  const checks: string[][] = [];
  for (const task of tasks) {
    const base = task.arms[0]!;
    const script = task.arms.find((a) => a.arm === "one script")!;
    for (const a of task.arms) {
      const total = a.written + a.read;
      const saved = 1 - total / (base.written + base.read);
      rows.push([
        a === task.arms[0] ? task.id : "",
        a.arm,
        String(a.calls),
        String(a.turns),
        int(a.written),
        int(a.read),
        int(total),
        a === base ? "—" : pct(saved),
      ]);
    }
    const saving = 1 - (script.written + script.read) / (base.written + base.read);
    checks.push([
      `${task.id}: tokens saved by one script vs step by step`,
      pct(saving),
      `≥ ${pct(TARGET.tokenSaving)}`,
      saving >= TARGET.tokenSaving ? "met" : "MISSED",
    ]);
    checks.push([
      `${task.id}: round trips of the script (answer correct: ${task.correct ? "yes" : "NO"})`,
      String(script.turns),
      String(TARGET.roundTrips),
      script.turns === TARGET.roundTrips && task.correct ? "met" : "MISSED",
    ]);
  }
  const overhead = times.script.p50 - times.call.p50;
  checks.push([
    "p50 of a script making one call − p50 of that call",
    `${ms(overhead)} ms`,
    `≤ ${TARGET.oneCallOverheadMs} ms`,
    verdict(overhead, TARGET.oneCallOverheadMs),
  ]);

  const markdown = [
    `The built mcpx over stdio (\`node dist/bundle/index.js\`, an SDK client), upstreams as real processes with \`"session": "shared"\`: the replay fixture serving the recorded github-mcp-server tools with ${ISSUE_COUNT} generated issues (\`REPLAY_ISSUES\`; list_issues of all of them: ${int(listChars())} characters of JSON with bodies), server-memory seeded with 24 people and their teams, server-everything. Tokens are o200k: what the model writes (each request's arguments as JSON) and reads (each answer's text, as mcpx sends it: TOON or JSON, cut to the 8,000-token budget with paging). A cut answer is read to its end through \`resources\`. Turns: requests that need an earlier answer are a turn apart; independent ones (the 5 reads) share one turn. Every script's answer is checked against the expected one. Measured in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    "",
    ...tasks.map((t) => `- **${t.id}**: ${t.title}.`),
    "",
    table(["task", "arm", "calls", "turns", "written", "read", "tokens", "saved"], rows, [
      "left",
      "left",
    ]),
    "",
    table(["metric", "value", "target", "status"], checks, ["left", "right", "left", "left"]),
    "",
    `### What a script costs in time (${SIZE.pairs} interleaved samples per arm after ${SIZE.warmup} warm-up rounds)`,
    "",
    table(
      ["arm", "p50 ms", "p90 ms"],
      [
        ["call everything.echo", ms(times.call.p50), ms(times.call.p90)],
        ["script making that call", ms(times.script.p50), ms(times.script.p90)],
        ["script making no call (`return 1;`)", ms(times.empty.p50), ms(times.empty.p90)],
      ],
    ),
    "",
    "A fresh context's cost and RSS with 8 scripts running at once are in the Sandbox section.",
  ].join("\n");
  return { id: "codemode", title: "Code mode", markdown };
}
