/**
 * Token economy v2 figures: a 20,000-row result before (sent whole) and after (within the result
 * budget), reading it back by pages, `select`, what the new call and resources definitions cost
 * in tools/list, and calls that succeed the first time. Part of `npm run bench -- tokens`.
 */
import { isDeepStrictEqual } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { decode as decodeToon } from "@toon-format/toon";
import { DEFAULTS } from "../../src/config/load.js";
import { compressResult } from "../../src/compression/result.js";
import { decodeSparse } from "../../src/compression/sparse.js";
import { Selector } from "../../src/compression/selector.js";
import { ResultStore } from "../../src/executor/result-store.js";
import { ResultShaper } from "../../src/executor/shape.js";
import type { ToolResult } from "../../src/types.js";
import { BEFORE_CODE_MODE, BEFORE_DEFS } from "../../test/fixtures/meta-tools-before.js";
import { SHAPES } from "../../test/fixtures/results/shapes.js";
import { definitionTokens, tokens } from "../count.js";
import { BEFORE_OK, FIXABLE, runFixable, runSlips, SLIPS } from "../first-call.js";
import type { BenchProxy } from "../proxy.js";
import { percentile } from "../lib/stats.js";
import { int, ratio, table } from "../report.js";
import { resultText } from "../upstreams.js";

const ROWS = 20_000;
const BUDGET = DEFAULTS.resultBudget;
/** tools/list may grow by at most this many tokens for select and paging (issue 13). */
const INIT_GROWTH = 40;

export interface BudgetInput {
  /** A proxy over `replay` (uniform_rows only) at the default budget. */
  rows: BenchProxy;
  /** A direct session to that replay upstream. */
  direct: Client;
  /** Proxies for the R_init setups (a) and (b); (b) also runs the first-call slips. */
  small: BenchProxy;
  all: BenchProxy;
}

export interface Budget {
  summary: string[][];
  markdown: string;
}

export async function measureBudget(input: BudgetInput): Promise<Budget> {
  const flood = await measureFlood(input.rows, input.direct);
  const selects = await measureSelect(input.rows);
  const init = await Promise.all(
    [input.small, input.all].map(async (p) => {
      // Measured before code mode grew call and describe (bench/codemode.ts counts that).
      const now = (await p.client.listTools()).tools.map(
        (t) => ({ ...t, ...(BEFORE_CODE_MODE[t.name] ?? {}) }) as Tool,
      );
      const before = now.map((t) => ({ ...t, ...(BEFORE_DEFS[t.name] ?? {}) }) as Tool);
      return { before: definitionTokens(before), after: definitionTokens(now) };
    }),
  );
  const slips = await runSlips(input.all.client);
  const fixes = await runFixable(input.all.client);
  return render(flood, selects, init, slips, fixes);
}

// ---------------------------------------------------------------------------------------------

interface Flood {
  rawTokens: number;
  beforeText: number;
  beforeStructured: number;
  afterTokens: number;
  shown: number;
  pages: number[];
  pagesTotal: number;
  lossless: boolean;
  shapeMs: { before: number; after: number };
}

const next = (notice: string) => {
  const m = /resources\(\{ uri: "([^"]+)", offset: (\d+) \}\)/.exec(notice);
  return m ? { uri: m[1]!, offset: Number(m[2]) } : undefined;
};

const texts = (r: unknown) =>
  ((r as ToolResult).content ?? []).filter((b) => b.type === "text").map((b) => b.text as string);

async function measureFlood(p: BenchProxy, direct: Client): Promise<Flood> {
  const args = { count: ROWS };
  const raw = (await direct.callTool({ name: "uniform_rows", arguments: args })) as ToolResult;
  const rawText = resultText(raw);
  // Before: mcpx re-encoded the text whole and forwarded structuredContent unchanged.
  const beforeText = resultText(compressResult(raw, "auto"));
  const cut = await p.client.callTool({
    name: "call",
    arguments: { method: "replay.uniform_rows", arguments: args },
  });
  const [notice, head] = texts(cut);
  const got = [...(decodeToon(head!) as unknown[])];
  const shown = got.length;
  const pages: number[] = [];
  for (let at = next(notice!); at;) {
    const page = await p.client.callTool({ name: "resources", arguments: at });
    const [heading, data] = texts(page);
    pages.push(tokens(resultText(page)));
    got.push(...(decode(data!) as unknown[]));
    at = next(heading!);
  }
  return {
    rawTokens: tokens(rawText),
    beforeText: tokens(beforeText),
    beforeStructured: tokens(JSON.stringify(raw.structuredContent)),
    afterTokens: tokens(resultText(cut)),
    shown,
    pages,
    pagesTotal: pages.reduce((a, b) => a + b, 0) + tokens(resultText(cut)),
    lossless: isDeepStrictEqual(got, (raw.structuredContent as { rows: unknown[] }).rows),
    shapeMs: shapeTimes(raw),
  };
}

function decode(text: string): unknown {
  try {
    return decodeToon(text);
  } catch {
    return decodeSparse(text);
  }
}

/** Median ms of the result step on the 20,000 rows: before (encode whole) and after (shape). */
function shapeTimes(raw: ToolResult): { before: number; after: number } {
  const shaper = new ResultShaper(new ResultStore(), "auto");
  const time = (f: () => unknown) => {
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      f();
      runs.push(performance.now() - t0);
    }
    return percentile(runs, 50);
  };
  return {
    before: time(() => compressResult(raw, "auto")),
    after: time(() =>
      shaper.shape(raw, { source: "replay.uniform_rows", budget: BUDGET, caller: "bench" }),
    ),
  };
}

interface SelectRow {
  label: string;
  expression: string;
  without: number;
  with: number;
}

async function measureSelect(p: BenchProxy): Promise<SelectRow[]> {
  const viaProxy = async (count: number, select: string) => {
    const call = (extra: Record<string, unknown>) =>
      p.client.callTool({
        name: "call",
        arguments: { method: "replay.uniform_rows", arguments: { count }, ...extra },
      });
    return {
      without: tokens(resultText(await call({}))),
      with: tokens(resultText(await call({ select }))),
    };
  };
  // A GitHub issue list (40 fields a record) through the same result step, in process.
  // ResultShaper.shape is async (select runs in a worker); the selector's threads are closed below.
  const selector = new Selector();
  const shaper = new ResultShaper(new ResultStore(), "auto", selector);
  const issues: ToolResult = {
    content: [{ type: "text", text: JSON.stringify(SHAPES.github_issues()) }],
  };
  const issueSelect = "[].{number: number, title: title, state: state, user: user.login}";
  const shape = async (select?: string) =>
    tokens(
      resultText(
        await shaper.shape(issues, {
          source: "github.list_issues",
          budget: BUDGET,
          caller: "bench",
          ...(select !== undefined && { select }),
        }),
      ),
    );
  let issueRow: { without: number; with: number };
  try {
    issueRow = { without: await shape(), with: await shape(issueSelect) };
  } finally {
    await selector.close();
  }
  const rows50 = "rows[].{id: id, name: name}";
  const count = "length(rows[?state=='closed'])";
  return [
    {
      label: "uniform_rows, 50 rows: two of five fields",
      expression: rows50,
      ...(await viaProxy(50, rows50)),
    },
    {
      label: `uniform_rows, ${int(ROWS)} rows: a count`,
      expression: count,
      ...(await viaProxy(ROWS, count)),
    },
    {
      label: "github issue list (shapes.ts): four fields",
      expression: issueSelect,
      ...issueRow,
    },
  ];
}

// ---------------------------------------------------------------------------------------------

function render(
  f: Flood,
  selects: SelectRow[],
  init: { before: number; after: number }[],
  slips: Awaited<ReturnType<typeof runSlips>>,
  fixes: Awaited<ReturnType<typeof runFixable>>,
): Budget {
  const maxPage = Math.max(...f.pages);
  const growth = init.map((i) => i.after - i.before);
  const okNow = slips.filter((s) => s.ok).length;
  const okBefore = slips.filter((s) => BEFORE_OK.has(s.shape)).length;
  const named = fixes.filter((x) => x.named && x.retried).length;
  const summary: string[][] = [
    [
      `${int(ROWS)}-row result: tokens sent, before → after`,
      `${int(f.beforeText)} (+${int(f.beforeStructured)} structuredContent) → ${int(f.afterTokens)}`,
      `≤ ${int(BUDGET)}`,
      f.afterTokens <= BUDGET ? "met" : "MISSED",
    ],
    [
      `pages of that result (${f.pages.length}): max tokens`,
      int(maxPage),
      `≤ ${int(BUDGET)}`,
      maxPage <= BUDGET ? "met" : "MISSED",
    ],
    [
      `reading all ${int(ROWS)} rows by pages: tokens / sent whole before`,
      ratio(f.pagesTotal, f.beforeText),
      "—",
      f.lossless ? "lossless" : "NOT LOSSLESS",
    ],
    ...selects.map((s) => [
      `select: ${s.label}, with / without`,
      ratio(s.with, s.without),
      "—",
      "—",
    ]),
    [
      "R_init growth for select and paging, setups (a) / (b)",
      growth.map((g) => `+${g}`).join(" / "),
      `≤ +${INIT_GROWTH}`,
      growth.every((g) => g <= INIT_GROWTH) ? "met" : "MISSED",
    ],
    [
      `first-time success, ${slips.length} slips: before → now`,
      `${okBefore} → ${okNow}`,
      `${slips.length}`,
      okNow === slips.length ? "met" : "MISSED",
    ],
    [
      `argument errors naming the fix (next call succeeds), ${fixes.length}: before → now`,
      `0 → ${named}`,
      `${fixes.length}`,
      named === fixes.length ? "met" : "MISSED",
    ],
  ];

  const out: string[] = [];
  out.push("### Results within a budget");
  out.push(
    `\`replay.uniform_rows\` with \`count: ${int(ROWS)}\` (rows {id, name, state, created_at, score}, pretty JSON text plus ` +
      "`structuredContent {rows}`). Before = what mcpx sent at 723fdf9: the text re-encoded whole (TOON) and " +
      `structuredContent forwarded unchanged. After = the answer through the proxy at the default \`resultBudget\` (${int(BUDGET)}); ` +
      "tokens counted with gpt-tokenizer (o200k), not mcpx's estimate.",
  );
  out.push(
    table(
      ["figure", "value"],
      [
        ["upstream's own text", int(f.rawTokens)],
        ["before: text sent", int(f.beforeText)],
        ["before: structuredContent sent too (compact JSON)", int(f.beforeStructured)],
        [`after: answer (notice + first ${int(f.shown)} rows)`, int(f.afterTokens)],
        [`pages to read the rest`, int(f.pages.length)],
        ["page tokens: median / max", `${int(percentile(f.pages, 50))} / ${int(maxPage)}`],
        ["answer + every page, tokens", int(f.pagesTotal)],
        ["answer + pages decode to exactly the rows", f.lossless ? "yes" : "NO"],
        [
          "result step, median of 5: before (encode whole) / after (cut)",
          `${f.shapeMs.before.toFixed(0)} ms / ${f.shapeMs.after.toFixed(0)} ms`,
        ],
      ],
      ["left", "right"],
    ),
  );
  out.push("### select");
  out.push(
    table(
      ["result", "select", "without", "with", "with / without"],
      selects.map((s) => [
        s.label,
        `\`${s.expression}\``,
        int(s.without),
        int(s.with),
        ratio(s.with, s.without),
      ]),
      ["left", "left", "right", "right", "right"],
    ),
  );
  out.push("### R_init: what select and paging cost in tools/list");
  out.push(
    table(
      ["setup", "before (723fdf9)", "after", "growth", "target"],
      init.map((i, k) => [
        k === 0 ? "(a) everything + filesystem + memory" : "(b) (a) + github corpus",
        int(i.before),
        int(i.after),
        `+${i.after - i.before}`,
        `≤ +${INIT_GROWTH}`,
      ]),
    ),
  );
  out.push("### Calls that succeed the first time");
  out.push(
    "Slips models make in `call`, through the proxy of setup (b). Before = the same calls on mcpx 723fdf9 " +
      "(measured once; see bench/first-call.ts). Now = this run.",
  );
  out.push(
    table(
      ["slip", "example", "before", "now"],
      SLIPS.map((s, i) => [
        s.shape,
        `\`${JSON.stringify(s.args)}\``,
        BEFORE_OK.has(s.shape) ? "answer" : "error",
        slips[i]!.ok ? "answer" : "ERROR",
      ]),
      ["left", "left", "left", "left"],
    ),
  );
  out.push(
    table(
      ["argument slip", "example", "error names the fix, before", "now", "next call answers"],
      FIXABLE.map((x, i) => [
        x.shape,
        `\`${JSON.stringify(x.args.arguments)}\``,
        "no",
        fixes[i]!.named ? "yes" : "NO",
        fixes[i]!.retried ? "yes" : "NO",
      ]),
      ["left", "left", "left", "left", "left"],
    ),
  );
  return { summary, markdown: out.join("\n\n") };
}
