/** The latency section's markdown: summary against the targets, per case, ping split, memory. */
import os from "node:os";
import { stats } from "../lib/stats.js";
import { table, verdict } from "../report.js";
import { DEFER_MS, MIN_GAP_MS, SETTLE_MS, SIZE, type CaseResult } from "./harness.js";

/** Targets from the design brief: reported next to the numbers, never asserted. */
const TARGET = {
  /** shared p50 − direct p50, ms. */
  sharedOverheadMs: 1,
  /** isolated with pre-warm (spaced) p50 / isolated without pre-warm p50. */
  prewarmRatio: 0.05,
  failed: 0,
  leaked: 0,
} as const;

/** Calls per second: overlapping calls over their wall time, sequential ones over their sum. */
function callsPerSec(c: CaseResult): number | undefined {
  if (!c.backToBack) return undefined;
  const ms = c.wallMs ?? c.timings.ms.reduce((a, b) => a + b, 0);
  return (c.timings.ms.length / ms) * 1000;
}

const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
const mb = (kb: number) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : "n/a");

function machine(): string {
  const cpus = os.cpus();
  return `${cpus[0]?.model.trim() ?? "unknown CPU"}, ${cpus.length} cores, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

/** The out-of-process isolated and shared cases of one downstream transport. */
export interface TransportCases {
  shared: CaseResult;
  naive: CaseResult;
  spaced: CaseResult;
  b2b: CaseResult;
  /** The fixed gap before each spaced call. */
  gapMs: number;
}

export interface Measures {
  direct: CaseResult;
  directHttp: CaseResult;
  cold: CaseResult;
  perTransport: Record<"stdio" | "http", TransportCases>;
  inProcess: CaseResult;
  deferred: CaseResult;
  refill: number[];
  cases: CaseResult[];
  elapsedMs: number;
  /** 1-minute load average when the section started and ended. */
  load: [number, number];
}

/** Whether the fixed gaps covered the refill times measured in-process (said, not assumed). */
function gapVerdict(m: Measures): string {
  const gap = Math.min(m.perTransport.stdio.gapMs, m.perTransport.http.gapMs);
  const over = m.refill.filter((ms) => ms > gap).length;
  return over === 0
    ? `Every refill was shorter than the smaller gap (${gap} ms): out of process the spare was ready for each spaced call.`
    : `${over} of ${m.refill.length} refills took longer than the smaller gap (${gap} ms): a few spaced calls out of process may have waited for their spare, which inflates their tail.`;
}

export function render(m: Measures): string {
  const p50 = (c: CaseResult) => stats(c.timings.ms).p50;
  const directP50 = p50(m.direct);
  const failed = m.cases.reduce((s, c) => s + c.timings.failed, 0);
  const calls = m.cases.reduce((s, c) => s + c.timings.ms.length, 0);
  const leaked = m.cases.reduce((s, c) => s + c.leaked, 0);
  const refill = stats(m.refill);
  const out: string[] = [];

  out.push(
    `Machine: ${machine()}. Command: \`npm run bench -- latency\` (builds first). ` +
      "Upstream: `@modelcontextprotocol/server-everything` (stdio) from node_modules, tool `echo` " +
      '`{ message: "x" }`. Direct = an SDK `Client` on a stdio session straight to it; mcpx = ' +
      "`node dist/index.js <config>` spawned per case, spoken to by the SDK `StdioClientTransport` " +
      "(stdio) or `StreamableHTTPClientTransport` (`--port 0`), with " +
      '`call({ method: "everything.echo", arguments: { message: "x" } })`. Times are ' +
      "`performance.now()` around one `callTool` in the client; bench, mcpx and upstreams share " +
      `the machine. Measured in ${(m.elapsedMs / 1000).toFixed(1)} s; 1-minute load average ` +
      `${f2(m.load[0])} at the start, ${f2(m.load[1])} at the end (anything above the core ` +
      "count means other work competed for the CPU and the spawning cases read slow).",
  );

  out.push("### Summary");
  const summary: (string | number)[][] = [];
  for (const d of ["stdio", "http"] as const) {
    const t = m.perTransport[d];
    const overhead = p50(t.shared) - directP50;
    summary.push([
      `shared p50 overhead over direct, ${d} downstream`,
      `${f2(overhead)} ms (${f2(p50(t.shared))} − ${f2(directP50)})`,
      `≤ ${TARGET.sharedOverheadMs} ms`,
      verdict(overhead, TARGET.sharedOverheadMs),
    ]);
  }
  const ratioRow = (label: string, spaced: CaseResult, naive: CaseResult) => {
    const r = p50(spaced) / p50(naive);
    return [
      label,
      `${f2(r * 100)} % (${f2(p50(spaced))} / ${f2(p50(naive))} ms)`,
      `≤ ${TARGET.prewarmRatio * 100} %`,
      verdict(r, TARGET.prewarmRatio),
    ];
  };
  for (const d of ["stdio", "http"] as const) {
    const t = m.perTransport[d];
    summary.push(
      ratioRow(`isolated pre-warm (spaced) p50 / naive isolated p50, ${d}`, t.spaced, t.naive),
    );
  }
  summary.push(
    ratioRow(
      "isolated pre-warm (spaced, pool-state wait, in-process) p50 / naive isolated p50, stdio",
      m.inProcess,
      m.perTransport.stdio.naive,
    ),
  );
  {
    const overHttp = p50(m.perTransport.http.shared) - p50(m.directHttp);
    summary.push([
      "context: shared http p50 − server-everything's own HTTP transport p50",
      `${f2(overHttp)} ms (${f2(p50(m.perTransport.http.shared))} − ${f2(p50(m.directHttp))})`,
      "—",
      "—",
    ]);
  }
  const experiment = ratioRow(
    `experiment: the same with the refill spawn held back ${DEFER_MS} ms (in-process)`,
    m.deferred,
    m.perTransport.stdio.naive,
  );
  summary.push([...experiment.slice(0, 2), experiment[2]!, `(${experiment[3]!})`]);
  summary.push(
    [`failed calls (all cases, ${calls} calls)`, failed, "0", verdict(failed, TARGET.failed)],
    ["leaked processes (all cases)", leaked, "0", verdict(leaked, TARGET.leaked)],
  );
  out.push(table(["metric", "value", "target", "status"], summary, ["left", "right", "left"]));

  out.push("### Per case");
  out.push(
    table(
      [
        "case",
        "downstream",
        "n",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "mean ms",
        "p50 − direct",
        "calls/s",
        "failed",
        "leaked",
      ],
      m.cases.map((c) => {
        const s = stats(c.timings.ms);
        const rate = callsPerSec(c);
        return [
          c.label,
          c.downstream,
          s.n,
          f2(s.p50),
          f2(s.p90),
          f2(s.p99),
          f2(s.mean),
          c === m.direct ? "—" : f2(s.p50 - directP50),
          rate === undefined ? "— (spaced)" : f1(rate),
          c.timings.failed,
          c.leaked,
        ];
      }),
      ["left", "left"],
    ),
  );
  const notes = m.cases.filter((c) => c.note).map((c) => `${c.label} [${c.downstream}]: ${c.note}`);
  out.push(
    "calls/s: one client's sequential calls over the sum of their times; for the concurrent " +
      "case, all calls over the wall time. Warm-up calls (30 for warm cases, 3 for spawning " +
      "ones, 10 per concurrent client) are not in n; their failures are counted. " +
      notes.map((n) => `${n}.`).join(" "),
  );

  out.push("### Where the shared overhead goes");
  const pingRows = [
    m.direct,
    m.directHttp,
    m.perTransport.stdio.shared,
    m.perTransport.http.shared,
  ].map((c) => {
    const pingP50 = stats(c.ping?.ms ?? []).p50;
    const directPing = stats(m.direct.ping?.ms ?? []).p50;
    return [
      c === m.direct || c === m.directHttp ? "direct" : "mcpx shared",
      c.downstream,
      f2(pingP50),
      f2(p50(c)),
      c === m.direct ? "—" : f2(pingP50 - directPing),
      f2(p50(c) - pingP50),
    ];
  });
  out.push(
    table(
      ["session", "downstream", "ping p50 ms", "echo p50 ms", "ping − direct ping", "echo − ping"],
      pingRows,
      ["left", "left"],
    ),
  );
  out.push(
    `${SIZE.warm} pings on the same session after the calls (mcpx answers ping itself). ` +
      "ping − direct ping is what the downstream transport costs; echo − ping is the work of " +
      "the call itself (for mcpx: validation, the forward over the shared upstream session, " +
      "result shaping).",
  );

  out.push("### Isolated with pre-warm: spacing and refill");
  out.push(
    "Out of process the pool cannot be seen, so spaced calls wait a fixed gap of 2× the naive " +
      `call's p50, rounded up to 50 ms and at least ${MIN_GAP_MS} ms ` +
      `(stdio ${m.perTransport.stdio.gapMs} ms, http ${m.perTransport.http.gapMs} ms). ` +
      "The in-process case builds the same proxy with `createProxy` (downstream: `connectClient`, " +
      "in memory) and waits until the pool has its spare back: the client factory is wrapped " +
      "to know when a spare's spawn + initialize is over, and `poolStats()` must show 1 spare, " +
      "1 open session, none leased. Its calls alternate between the pool as it is and the pool " +
      `with each refill's spawn held back ${DEFER_MS} ms by the wrapper (so it starts after the ` +
      "call instead of during it). " +
      `A refill (spawn + initialize of one spare, measured there) took p50 ${f1(refill.p50)} ms, ` +
      `p90 ${f1(refill.p90)} ms, max ${f1(Math.max(...m.refill))} ms over ${refill.n} refills. ` +
      `${gapVerdict(m)} ` +
      `A first call on a fresh, idle direct session costs p50 ${f2(p50(m.cold))} ms against ` +
      `${f2(directP50)} ms warm: the floor of any isolated call, pre-warmed or not.`,
  );

  out.push("### mcpx process memory");
  const rssRows = m.cases
    .filter((c) => c.rss)
    .map((c) => [
      c.label,
      c.downstream,
      mb(c.rss!.idleKb),
      mb(c.rss!.afterKb),
      mb(c.rss!.peakKb),
      c.timings.ms.length,
    ]);
  out.push(
    table(
      [
        "case",
        "downstream",
        "RSS idle after startup, MB",
        "RSS after load, MB",
        "peak, MB",
        "calls",
      ],
      rssRows,
      ["left", "left"],
    ),
  );
  out.push(
    `VmRSS of the mcpx process from /proc/<pid>/status ${SETTLE_MS} ms after it answered ` +
      "initialize, and again right after the case's last call; peak is VmHWM. Upstream " +
      "processes are not included.",
  );
  return out.join("\n\n");
}
