/**
 * Sandbox: what code mode's engine costs. A script that makes one inner call against calling the
 * same in-process tool directly (interleaved arms); what a fresh context costs, part by part; and
 * the process's RSS with 8 scripts running at once. The pool is the built `dist/sandbox`, whose
 * workers load plain JavaScript as they do in production.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PRELUDE, PRELUDE_FILE } from "../src/sandbox/prelude.js";
import { loadQuickJS } from "../src/sandbox/quickjs.js";
import type * as SandboxApi from "../src/sandbox/index.js";
import type { InnerCall, RunOptions, Sandbox } from "../src/sandbox/index.js";
import { stats } from "./lib/stats.js";
import { table, verdict, type BenchSection } from "./report.js";
import { ROOT } from "./upstreams.js";

/** Targets from issue 18: reported next to the numbers, never asserted. */
const TARGET = { oneCallOverheadMs: 5 } as const;

const SIZE = {
  /** Interleaved pairs of (direct call, script with one call), after warm-up pairs. */
  pairs: 300,
  warmup: 30,
  /** In-process samples: fresh runtime + context + bridge, and fresh WebAssembly instances. */
  parts: 200,
  instances: 20,
  /** Cold sandboxes: spawn a worker, answer one script. */
  cold: 5,
  /** Scripts at once for RSS. */
  concurrent: 8,
} as const;

type SandboxModule = typeof SandboxApi;

async function loadBuilt(): Promise<SandboxModule> {
  const url = pathToFileURL(path.join(ROOT, "dist/sandbox/index.js")).href;
  return (await import(url)) as SandboxModule;
}

/** The fake tool both arms call: answers at once with a small object, like a quick lookup. */
const tool: InnerCall = (_server, _tool, args) =>
  Promise.resolve({ value: { ok: true, echo: args, items: [1, 2, 3] } });

function options(extra: Partial<RunOptions> = {}): RunOptions {
  return { servers: { a: ["echo", "hold"] }, call: tool, ...extra };
}

const ONE_CALL = "const r = await servers.a.echo({ n: 1 });\nreturn r.items.length;";
const ONE_CALL_TS =
  "interface R { items: number[] }\nconst r: R = await servers.a.echo({ n: 1 });\nreturn r.items.length;";

function ms(n: number): string {
  return n.toFixed(2);
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Direct call vs a script making the same call, interleaved so drift hits both arms alike. */
async function oneCall(sandbox: Sandbox) {
  const signal = new AbortController().signal;
  const arms = { direct: [] as number[], script: [] as number[], ts: [] as number[] };
  const expect = (ok: boolean) => {
    if (!ok) throw new Error("bench: a script failed");
  };
  for (let i = 0; i < SIZE.warmup + SIZE.pairs; i++) {
    const direct = await time(() => tool("a", "echo", { n: 1 }, signal));
    const script = await time(async () => expect((await sandbox.run(ONE_CALL, options())).ok));
    const ts = await time(async () => expect((await sandbox.run(ONE_CALL_TS, options())).ok));
    if (i < SIZE.warmup) continue;
    arms.direct.push(direct);
    arms.script.push(script);
    arms.ts.push(ts);
  }
  return { direct: stats(arms.direct), script: stats(arms.script), ts: stats(arms.ts) };
}

/** The parts of a fresh context, measured in this thread with the worker's own code. */
async function contextParts() {
  const instantiate = await loadQuickJS();
  const instance: number[] = [];
  for (let i = 0; i < SIZE.instances; i++) instance.push(await time(instantiate));
  // As in a worker: every script gets a fresh runtime and context on one instance.
  const { module } = await instantiate();
  const context: number[] = [];
  for (let i = 0; i < SIZE.parts; i++) {
    const t = performance.now();
    const rt = module.newRuntime();
    const ctx = rt.newContext();
    const installer = ctx.evalCode(PRELUDE, PRELUDE_FILE).unwrap();
    const args = [
      ctx.newString('{"a":["echo","hold"]}'),
      ctx.newFunction("c", () => {}),
      ctx.newFunction("l", () => {}),
    ];
    ctx
      .callFunction(installer, ctx.undefined, ...args)
      .unwrap()
      .dispose();
    for (const h of [installer, ...args]) h.dispose();
    ctx.dispose();
    rt.dispose();
    context.push(performance.now() - t);
  }
  return { instance: stats(instance), context: stats(context) };
}

/** From `createSandbox` to the first script's answer: a worker thread starts and loads QuickJS. */
async function coldStarts(built: SandboxModule) {
  const samples: number[] = [];
  for (let i = 0; i < SIZE.cold; i++) {
    const sandbox = built.createSandbox({ maxWorkers: 1 });
    samples.push(await time(() => sandbox.run("return 1;", options())));
    await sandbox.close();
  }
  return stats(samples);
}

const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);

/** RSS of this process: before, with 8 scripts running at once (idle, then holding data), after. */
async function rss(built: SandboxModule) {
  global.gc?.();
  const before = process.memoryUsage().rss;
  const sandbox = built.createSandbox({ maxWorkers: SIZE.concurrent });
  const measure = async (script: string) => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let arrived = 0;
    let allArrived!: () => void;
    const all = new Promise<void>((r) => (allArrived = r));
    const call: InnerCall = async (_s, t) => {
      if (t === "hold") {
        if (++arrived === SIZE.concurrent) allArrived();
        await released;
      }
      return { value: true };
    };
    const runs = Array.from({ length: SIZE.concurrent }, () =>
      sandbox.run(script, options({ call })),
    );
    await all;
    const value = process.memoryUsage().rss;
    const stats = sandbox.stats();
    release();
    const outcomes = await Promise.all(runs);
    if (!outcomes.every((o) => o.ok) || stats.busy !== SIZE.concurrent) {
      throw new Error(`bench: expected ${SIZE.concurrent} scripts at once, saw ${stats.busy}`);
    }
    return value;
  };
  const idle = await measure("await servers.a.hold();\nreturn 1;");
  const holding = await measure(
    "const data = Array.from({ length: 100000 }, (_, i) => ({ i, s: 'item ' + i }));\nawait servers.a.hold();\nreturn data.length;",
  );
  await sandbox.close();
  const after = process.memoryUsage().rss;
  return { before, idle, holding, after };
}

export async function runSandboxBench(): Promise<BenchSection> {
  const started = performance.now();
  const built = await loadBuilt();
  const sandbox = built.createSandbox({ maxWorkers: 1 });
  const calls = await oneCall(sandbox);
  await sandbox.close();
  const parts = await contextParts();
  const cold = await coldStarts(built);
  const memory = await rss(built);
  const overhead = calls.script.p50 - calls.direct.p50;

  const markdown = [
    `The pool is the built \`dist/sandbox\` (${SIZE.pairs} interleaved samples per arm after ${SIZE.warmup} warm-up rounds, one worker). The tool is an in-process function answering at once, so the difference is the sandbox's own cost: the message to the worker, a fresh QuickJS runtime and context, the bridge, the inner call's round trip to the main thread, and the value's JSON. Measured in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    "",
    "### One inner call: script vs direct call",
    "",
    table(
      ["arm", "p50 ms", "p90 ms"],
      [
        ["direct call of the tool function", ms(calls.direct.p50), ms(calls.direct.p90)],
        ["script making that call (JavaScript)", ms(calls.script.p50), ms(calls.script.p90)],
        ["script making that call (TypeScript)", ms(calls.ts.p50), ms(calls.ts.p90)],
      ],
    ),
    "",
    table(
      ["metric", "value", "target", "status"],
      [
        [
          "script p50 − direct p50 (JavaScript)",
          `${ms(overhead)} ms`,
          `≤ ${TARGET.oneCallOverheadMs} ms`,
          verdict(overhead, TARGET.oneCallOverheadMs),
        ],
      ],
      ["left", "right", "left", "left"],
    ),
    "",
    "TypeScript costs one failed QuickJS parse plus swc's strip (@swc/wasm-typescript loads once per worker, on its first TypeScript script).",
    "",
    "### A fresh context",
    "",
    table(
      ["part", "p50 ms", "p90 ms", "on the script's path?"],
      [
        [
          "QuickJS WebAssembly instance (renewed now and then)",
          ms(parts.instance.p50),
          ms(parts.instance.p90),
          "no: made while the worker is idle",
        ],
        [
          "runtime + context + servers/console bridge",
          ms(parts.context.p50),
          ms(parts.context.p90),
          "yes",
        ],
        [
          "cold worker: createSandbox → first answer",
          ms(cold.p50),
          ms(cold.p90),
          `once per worker (${SIZE.cold} samples)`,
        ],
      ],
      ["left", "right", "right", "left"],
    ),
    "",
    `### RSS with ${SIZE.concurrent} scripts running at once`,
    "",
    table(
      ["state", "process RSS MB", "per script MB"],
      [
        ["before the sandbox", mb(memory.before), "—"],
        [
          `${SIZE.concurrent} scripts waiting on a call`,
          mb(memory.idle),
          mb((memory.idle - memory.before) / SIZE.concurrent),
        ],
        [
          `${SIZE.concurrent} scripts each holding 100k small objects`,
          mb(memory.holding),
          mb((memory.holding - memory.before) / SIZE.concurrent),
        ],
        ["after close()", mb(memory.after), "—"],
      ],
      ["left", "right", "right"],
    ),
    "",
    "Each script runs in its own worker thread (V8 isolate, QuickJS instance); the memory a script may use is bounded by `memoryBytes` (64 MiB by default).",
  ].join("\n");

  return { id: "sandbox", title: "Sandbox", markdown };
}
