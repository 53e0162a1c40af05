/**
 * `npm run soak`: mixed describe / call / resources from 8 HTTP clients (both eras) against the
 * built mcpx for 10 minutes, while the `shared` everything upstream is SIGKILLed every 30 s. A
 * second upstream (a fixture, `isolated`) spawns a process per call, so process churn runs the
 * whole time. Every request must be answered — a result, or an isError naming what failed — and
 * every echo must carry its own payload; after each kill mcpx must serve everything again before
 * the next one. mcpx's RSS and its upstream count are sampled each second and printed as a series.
 * At the end mcpx itself is SIGKILLed and every process it ever had (upstreams, watchdog) must be
 * gone. Exit 1 on any lost, crossed or JSON-RPC-error answer, a missed recovery, growth of the
 * process count, or a survivor.
 *
 *   node --import tsx bench/reliability/soak.ts [--seconds 600] [--clients 8] [--kill-every 30]
 *        [--ci] [--no-write]
 *   --ci  60 s, RESULTS.md untouched
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { descendants, FIXTURES, watchdogOf } from "../../test/helpers/proxy.js";
import { HttpRpc, type RpcAnswer } from "../../test/helpers/rpc.js";
import { table, type BenchSection } from "../report.js";
import { commandLine } from "../lib/processes.js";
import { writeSections } from "../results.js";
import {
  configFile,
  echoOf,
  everything,
  mb,
  Monitor,
  resultText,
  startHttpMcpx,
  untilHealthy,
  type Sample,
} from "./mcpx.js";
import { untilCount } from "./tally.js";

const { values: opts } = parseArgs({
  options: {
    seconds: { type: "string" },
    clients: { type: "string", default: "8" },
    "kill-every": { type: "string", default: "30" },
    ci: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
  },
});
const SECONDS = Number(opts.seconds ?? (opts.ci ? 60 : 600));
const CLIENTS = Number(opts.clients);
const KILL_EVERY_S = Number(opts["kill-every"]);
/** An answer later than this is lost (calls wait at most callTimeout, 60 s by default). */
const ANSWER_TIMEOUT_MS = 90_000;
/** After a kill, everything must answer an echo again within this (before the next kill). */
const RECOVERY_BOUND_MS = KILL_EVERY_S * 1000;
const DOC = "demo://resource/static/document/architecture.md";

interface Counts {
  ok: number;
  /** isError results: allowed (the upstream was just killed), if they say what happened. */
  isError: number;
  /** isError results with no text: not a clear answer. */
  unclear: number;
  lost: number;
  crossed: number;
  /** JSON-RPC errors to tools/call or resources/list: mcpx failed the request. */
  rpcErrors: number;
  samples: string[];
}

/** One operation: a request and what its successful answer must hold. */
interface Op {
  method: string;
  params: Record<string, unknown>;
  /** For a success: true when right (an echo must carry its own payload). */
  check(answer: RpcAnswer): boolean;
}

const tool = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });
const hasText = (a: RpcAnswer) => resultText(a).length > 0;

function echoOp(server: string): Op {
  const message = `soak-${server}-${randomUUID()}`;
  return {
    method: "tools/call",
    params: tool("call", { method: `${server}.echo`, arguments: { message } }),
    check: (a) => answerText(a, server) === (server === "everything" ? echoOf(message) : message),
  };
}

/**
 * The answer's text without mcpx's lost-state notice: after the upstream was killed, the first
 * answer to each client of the old session says the server restarted (its own first text block),
 * then carries the tool's answer, which must still be exactly right.
 */
function answerText(a: RpcAnswer, server: string): string {
  const content = (a.result as { content?: { type: string; text?: string }[] } | undefined)
    ?.content;
  const first = content?.[0];
  const notice = `Note from mcpx: server "${server}" restarted since your last call`;
  if (first?.type === "text" && first.text?.startsWith(notice)) {
    return resultText({ ...a, result: { ...a.result, content: content!.slice(1) } });
  }
  return resultText(a);
}

/** The mix: weights favour the killed upstream; one in ten spawns a fixture process. */
const OPS: [weight: number, make: () => Op][] = [
  [3, () => echoOp("everything")],
  [1, () => echoOp("fixture")],
  [
    2,
    () => ({
      method: "tools/call",
      params: tool("describe", { method: "everything" }),
      check: hasText,
    }),
  ],
  [
    1,
    () => ({
      method: "tools/call",
      params: tool("describe", { query: "echo a message" }),
      check: hasText,
    }),
  ],
  [
    1,
    () => ({
      method: "tools/call",
      params: tool("resources", { server: "everything" }),
      check: hasText,
    }),
  ],
  [
    1,
    () => ({
      method: "tools/call",
      params: tool("resources", { uri: DOC }),
      check: (a) => JSON.stringify(a.result).includes(DOC),
    }),
  ],
  [
    1,
    () => ({
      method: "resources/list",
      params: {},
      check: (a) => Array.isArray(a.result?.resources),
    }),
  ],
];
const TOTAL_WEIGHT = OPS.reduce((n, [w]) => n + w, 0);

function pickOp(): Op {
  let r = Math.random() * TOTAL_WEIGHT;
  for (const [w, make] of OPS) if ((r -= w) < 0) return make();
  return OPS[0]![1]();
}

function note(c: Counts, line: string): void {
  if (c.samples.length < 8) c.samples.push(line.slice(0, 300));
}

/** One client: operations back to back until `until`. */
async function client(rpc: HttpRpc, until: number, c: Counts): Promise<void> {
  while (Date.now() < until) {
    const op = pickOp();
    let answer: RpcAnswer;
    try {
      answer = await rpc.request(
        op.method,
        op.params,
        undefined,
        AbortSignal.timeout(ANSWER_TIMEOUT_MS),
      );
    } catch (error) {
      c.lost++;
      note(c, `lost: ${String(error)}`);
      continue;
    }
    if (answer.error) {
      c.rpcErrors++;
      note(c, `JSON-RPC error: ${JSON.stringify(answer.error)}`);
    } else if (answer.result?.isError) {
      const text = resultText(answer);
      if (text.length > 0 && !/\n\s+at /.test(text)) {
        c.isError++;
        if (c.isError <= 3) note(c, `isError: ${text}`);
      } else {
        c.unclear++;
        note(c, `unclear isError: ${JSON.stringify(answer.result)}`);
      }
    } else if (op.check(answer)) c.ok++;
    else {
      c.crossed++;
      note(c, `wrong answer to ${JSON.stringify(op.params)}: ${JSON.stringify(answer.result)}`);
    }
  }
}

/** The everything upstream's pid under mcpx, if it runs now. */
function everythingPid(mcpx: number): number | undefined {
  return descendants(mcpx).find((pid) => commandLine(pid).includes("server-everything"));
}

/** Poll an echo through mcpx until one succeeds; ms it took, or undefined past the bound. */
async function recovery(rpc: HttpRpc, from: number): Promise<number | undefined> {
  while (Date.now() - from < RECOVERY_BOUND_MS) {
    const op = echoOp("everything");
    const answer = await rpc
      .request(op.method, op.params, undefined, AbortSignal.timeout(RECOVERY_BOUND_MS))
      .catch(() => undefined);
    if (answer?.result && !answer.result.isError && op.check(answer)) return Date.now() - from;
    await sleep(100);
  }
  return undefined;
}

interface Kill {
  t: number;
  pid: number;
  recoveredMs: number | undefined;
}

/** SIGKILL the everything upstream every KILL_EVERY_S (first at half of it) until `until`. */
async function killer(mcpx: number, rpc: HttpRpc, t0: number, until: number): Promise<Kill[]> {
  const kills: Kill[] = [];
  for (let at = t0 + (KILL_EVERY_S * 1000) / 2; at < until; at += KILL_EVERY_S * 1000) {
    await sleep(Math.max(0, at - Date.now()));
    const pid = everythingPid(mcpx);
    if (pid === undefined) {
      kills.push({ t: (Date.now() - t0) / 1000, pid: 0, recoveredMs: undefined });
      continue;
    }
    process.kill(pid, "SIGKILL");
    const t = (Date.now() - t0) / 1000;
    kills.push({ t, pid, recoveredMs: await recovery(rpc, Date.now()) });
  }
  return kills;
}

function series(samples: Sample[], every: number, t0Offset: number): string {
  const rows: (string | number)[][] = [];
  let next = 0;
  for (const s of samples) {
    const t = s.t - t0Offset;
    if (t < next) continue;
    rows.push([Math.round(t), mb(s.rss), s.upstreams]);
    next += every;
  }
  return table(["t (s)", "mcpx RSS MB", "upstream processes"], rows);
}

async function main(): Promise<void> {
  const fixture = { command: process.execPath, args: [path.join(FIXTURES, "faulty.mjs")] };
  const cfg = configFile({
    mcpServers: {
      everything: { ...everything(), session: "shared" },
      // Spares a burst grows close after idleTimeout: short, so the count settles within the run.
      fixture: { ...fixture, session: "isolated", idleTimeout: 2_000 },
    },
  });
  const mcpx = await startHttpMcpx(cfg.file, ["--log-level", "warn"]);
  const pid = mcpx.child.pid!;
  const bad: string[] = [];
  try {
    await untilHealthy(mcpx.url);
    const monitor = new Monitor(pid, 1000);
    const watchdog = watchdogOf(pid);
    if (watchdog !== undefined) monitor.seen.add([watchdog]);
    const baseline = monitor.sample();
    const rpcs = Array.from(
      { length: CLIENTS },
      (_, i) => new HttpRpc(mcpx.url, i % 2 === 0 ? "legacy" : "modern", `soak-${i}`),
    );
    const prober = new HttpRpc(mcpx.url, "modern", "soak-prober");
    await Promise.all([...rpcs, prober].map((r) => r.open()));
    const c: Counts = {
      ok: 0,
      isError: 0,
      unclear: 0,
      lost: 0,
      crossed: 0,
      rpcErrors: 0,
      samples: [],
    };
    console.log(
      `soak: ${SECONDS} s, ${CLIENTS} clients, everything SIGKILLed every ${KILL_EVERY_S} s`,
    );
    const t0 = Date.now();
    const tStart = baseline.t;
    const until = t0 + SECONDS * 1000;
    monitor.start();
    const progress = setInterval(() => {
      const s = monitor.samples.at(-1)!;
      console.log(
        `  t=${Math.round((Date.now() - t0) / 1000)}s rss=${mb(s.rss)}MB upstreams=${s.upstreams} ok=${c.ok} isError=${c.isError} lost=${c.lost}`,
      );
    }, 30_000);
    const [kills] = await Promise.all([
      killer(pid, prober, t0, until),
      ...rpcs.map((r) => client(r, until, c)),
    ]);
    clearInterval(progress);
    // Isolated fixture sessions end after their answers: let the count settle back (bounded).
    const settled = await untilCount(() => monitor.sample().upstreams, baseline.upstreams, 30_000);
    monitor.stop();
    const samples = monitor.samples.filter((s) => s.t >= tStart);
    const warm = samples.filter((s) => s.t - tStart <= Math.min(60, SECONDS / 3));
    const late = samples.filter((s) => s.t - tStart >= SECONDS - Math.min(60, SECONDS / 3));
    const warmRss = Math.max(...warm.map((s) => s.rss));
    const lateRss = Math.max(...late.map((s) => s.rss));

    // mcpx killed hard: its watchdog must end every upstream it had.
    process.kill(pid, "SIGKILL");
    const survivors = await monitor.seen.untilGone(15_000);

    const ops = c.ok + c.isError + c.unclear + c.lost + c.crossed + c.rpcErrors;
    const count = (n: number, what: string) => n > 0 && bad.push(`${n} ${what}`);
    count(c.lost, "requests without their answer");
    count(c.crossed, "wrong or crossed answers");
    count(c.rpcErrors, "JSON-RPC errors");
    count(c.unclear, "isError results without a clear text");
    count(
      kills.filter((k) => k.recoveredMs === undefined).length,
      "kills not recovered from in time",
    );
    count(survivors.length, "processes left after mcpx was SIGKILLed");
    if (settled > baseline.upstreams)
      bad.push(`upstream processes grew: ${baseline.upstreams} → ${settled}`);
    // A leak grows without bound; a warm heap settles. Loose on purpose: the series is the record.
    if (lateRss > warmRss * 1.5 + 50 * 1024 * 1024)
      bad.push(`RSS grew: ${mb(warmRss)} → ${mb(lateRss)} MB`);

    const recovered = kills.flatMap((k) => (k.recoveredMs === undefined ? [] : [k.recoveredMs]));
    const markdown = [
      `${SECONDS} s, ${CLIENTS} HTTP clients (half 2025-era sessions, half 2026-07-28) sending describe, call (everything.echo, fixture.echo with unique payloads), the resources meta-tool and resources/list back to back; the \`shared\` everything upstream SIGKILLed every ${KILL_EVERY_S} s; the fixture upstream \`isolated\` (a process per call). Reproduce with \`npm run soak\`.`,
      "",
      table(
        [
          "requests",
          "ok",
          "isError (clear)",
          "lost",
          "crossed",
          "JSON-RPC errors",
          "kills",
          "recovered",
          "recovery ms (max)",
          "RSS MB first / last minute (max)",
          "upstreams start / settled",
          "left after mcpx SIGKILL",
        ],
        [
          [
            ops,
            c.ok,
            c.isError,
            c.lost,
            c.crossed,
            c.rpcErrors,
            kills.length,
            recovered.length,
            recovered.length ? Math.max(...recovered) : "n/a",
            `${mb(warmRss)} / ${mb(lateRss)}`,
            `${baseline.upstreams} / ${settled}`,
            survivors.length,
          ],
        ],
      ),
      "",
      `Kills at ${kills.map((k) => `${Math.round(k.t)} s`).join(", ")}. mcpx RSS and upstream processes over time:`,
      "",
      series(samples, SECONDS >= 300 ? 30 : 10, tStart),
    ].join("\n");
    console.log(`\n${markdown}\n`);
    for (const s of c.samples) console.log(`  e.g. ${s}`);
    for (const line of bad) console.error(`FAIL ${line}`);
    if (!opts.ci && !opts["no-write"] && bad.length === 0) {
      const section: BenchSection = { id: "soak", title: "Soak", markdown };
      writeSections([section]);
    }
  } finally {
    if (mcpx.child.exitCode === null && mcpx.child.signalCode === null) mcpx.child.kill("SIGKILL");
    cfg.remove();
  }
  process.exitCode = bad.length === 0 ? 0 : 1;
}

await main();
