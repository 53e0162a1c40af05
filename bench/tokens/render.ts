/** The tokens section's markdown: every ratio against its target, then each measurement. */
import { tokenizerVersion } from "../count.js";
import { schemaStats, type SchemaRow } from "./schema.js";
import { ECONOMY_TARGET, type Economy } from "./economy-render.js";
import type { Budget } from "./budget.js";
import {
  CORPUS,
  SMALL,
  TASK_TOOL,
  type InitMeasure,
  type ResultRow,
  type TaskMeasure,
} from "./measure.js";
import { int, ratio, table, verdict } from "../report.js";

/** Targets from the design brief: reported next to the numbers, never asserted. */
const TARGET = {
  initSmall: 0.15,
  initCorpus: 0.03,
  schemaMedian: ECONOMY_TARGET.schemaMedian,
  schemaMax: ECONOMY_TARGET.schemaMax,
  result: 1.0,
  resultUniform: 0.8,
} as const;

export interface Measures {
  init: InitMeasure;
  schema: SchemaRow[];
  results: ResultRow[];
  task: TaskMeasure;
  tree: { files: number; dirs: number };
  economy: Economy;
  budget: Budget;
  elapsedMs: number;
}

export function render(m: Measures): string {
  const [a, b] = m.init.rows;
  const all = schemaStats(m.schema);
  const corpus = schemaStats(m.schema.filter((r) => r.server === CORPUS));
  const taskMcpx = m.task.items.reduce((s, i) => s + i.mcpx, 0);
  const taskDirect = m.task.items.reduce((s, i) => s + i.direct, 0);
  const f3 = (x: number) => x.toFixed(3);
  const out: string[] = [];

  out.push(
    `Tokenizer: o200k_base (gpt-tokenizer ${tokenizerVersion()}). A tool definition is counted in ` +
      "its API form, `JSON.stringify({ name, description, inputSchema })`; answers and results by " +
      "their text. Upstreams are real processes: `@modelcontextprotocol/server-everything`, " +
      "`-filesystem`, `-memory` from node_modules, and `test/fixtures/upstreams/replay.mjs` " +
      `serving the recorded github-mcp-server corpus as \`${CORPUS}\` (and, separately, ` +
      "`uniform_rows` as `replay`). Direct = an SDK client connected to each upstream; mcpx = " +
      "the proxy built in-process with `createProxy`, spoken to by an SDK client in memory. " +
      `Measured in ${(m.elapsedMs / 1000).toFixed(1)} s.`,
  );

  out.push("### Summary");
  out.push(
    table(
      ["metric", "value", "target", "status"],
      [
        [
          `R_init ${a.label}`,
          f3(a.metaTokens / a.upstreamTokens),
          `≤ ${TARGET.initSmall}`,
          verdict(a.metaTokens / a.upstreamTokens, TARGET.initSmall),
        ],
        [
          `R_init ${b.label}`,
          f3(b.metaTokens / b.upstreamTokens),
          `≤ ${TARGET.initCorpus}`,
          verdict(b.metaTokens / b.upstreamTokens, TARGET.initCorpus),
        ],
        ...m.economy.summary.slice(0, 3),
        [
          `R_schema max, answer without output schema / API form (${all.withOutput} tools have one)`,
          f3(all.maxNoOutput),
          `≤ ${TARGET.schemaMax}`,
          verdict(all.maxNoOutput, TARGET.schemaMax),
        ],
        ...m.economy.summary.slice(3),
        ...m.results.map((r) => {
          const target = r.uniform ? TARGET.resultUniform : TARGET.result;
          return [
            `R_result ${r.ref}`,
            f3(r.proxiedTokens / r.compactTokens),
            `≤ ${target.toFixed(2)}`,
            verdict(r.proxiedTokens / r.compactTokens, target),
          ];
        }),
        ["R_task (create_pull_request session)", f3(taskMcpx / taskDirect), "—", "—"],
        ...m.budget.summary,
      ],
      ["left", "right", "left", "left"],
    ),
  );

  out.push("### R_init: the initial tools/list");
  out.push(
    "mcpx lists three meta-tools whatever sits behind it; the describe description carries " +
      "the catalog (tool names while they fit in 2,000 characters, else servers with tool counts).",
  );
  out.push(
    table(
      [
        "setup",
        "upstream tools",
        "upstream tokens",
        "mcpx tools",
        "mcpx tokens",
        "R_init",
        "target",
      ],
      m.init.rows.map((r, i) => [
        r.label,
        r.upstreamTools,
        int(r.upstreamTokens),
        3,
        int(r.metaTokens),
        ratio(r.metaTokens, r.upstreamTokens),
        `≤ ${i === 0 ? TARGET.initSmall : TARGET.initCorpus}`,
      ]),
    ),
  );
  out.push(
    table(
      ["upstream", "tools", "definition tokens", "tokens / tool"],
      m.init.perServer.map((s) => [
        s.server,
        s.tools,
        int(s.tokens),
        (s.tokens / s.tools).toFixed(0),
      ]),
    ),
  );
  out.push(
    table(
      ["mcpx meta-tool (setup b)", "tokens"],
      m.init.metaTools.map((t) => [t.name, int(t.tokens)]),
    ),
  );

  out.push('### R_schema: describe("server.tool") versus the tool\'s definition');
  out.push(
    "Per tool: tokens of the describe answer (heading with hint tags, full description, input " +
      "and output schema as TypeScript or JSON) / tokens of the tool's JSON definition: its API " +
      "form (name, description, inputSchema) plus its outputSchema when it has one, since the " +
      "answer shows that too. The summary also pairs the answer without its output schema with " +
      "the API form alone.",
  );
  const statsRow = (label: string, s: ReturnType<typeof schemaStats>) => [
    label,
    s.tools,
    f3(s.median),
    f3(s.p90),
    f3(s.max),
    s.above,
    `${s.typescript} / ${s.tools - s.typescript}`,
    ratio(s.describeTokens, s.defTokens),
  ];
  out.push(
    table(
      ["tools", "n", "median", "p90", "max", "above 1.0", "TS / JSON form", "sum ratio"],
      [statsRow("all tools of (b)", all), statsRow(`${CORPUS} corpus alone`, corpus)],
    ),
  );
  out.push(
    `Targets: median ≤ ${TARGET.schemaMedian}, p90 ≤ ${ECONOMY_TARGET.schemaP90}, none above ${TARGET.schemaMax}.`,
  );
  const parts = (st: ReturnType<typeof schemaStats>) => {
    const known = (x: number[]) => x.reduce((a, b) => a + b, 0);
    const defRest = st.defTokens - known([st.inputJsonTokens, st.descriptionJsonTokens]);
    const ansRest =
      st.describeTokens -
      known([
        st.inputTokens,
        st.outputTokens,
        st.descriptionTokens,
        st.annotationTokens,
        st.runTokens,
      ]);
    return [
      [
        "input schema (JSON → as rendered)",
        int(st.inputJsonTokens),
        int(st.inputTokens),
        ratio(st.inputTokens, st.inputJsonTokens),
      ],
      [
        "description",
        int(st.descriptionJsonTokens),
        int(st.descriptionTokens),
        ratio(st.descriptionTokens, st.descriptionJsonTokens),
      ],
      [`output schema (${st.withOutput} tools have one)`, "0", int(st.outputTokens), "—"],
      ["hint tags (`[read-only, …]`)", "0", int(st.annotationTokens), "—"],
      ["name / heading, JSON framing", int(defRest), int(ansRest), ratio(ansRest, defRest)],
      ["total", int(st.defTokens), int(st.describeTokens), ratio(st.describeTokens, st.defTokens)],
    ];
  };
  out.push(
    `Where the tokens go, summed over the ${all.tools} tools of (b) (parts are tokenized ` +
      "separately, so they add up only approximately):",
  );
  out.push(
    table(["part", "definition", "describe", "ratio"], parts(all), [
      "left",
      "right",
      "right",
      "right",
    ]),
  );
  out.push(
    `Per-tool medians: input schema as rendered / as JSON ${f3(all.medianInput)} ` +
      `(corpus ${f3(corpus.medianInput)}); R_schema of the answer without its output schema / API form ` +
      `${f3(all.medianNoOutput)} (corpus ${f3(corpus.medianNoOutput)}).`,
  );
  const perServer = [...SMALL, CORPUS].map((s) => {
    const st = schemaStats(m.schema.filter((r) => r.server === s));
    return [s, st.tools, f3(st.median), f3(st.p90), f3(st.max), st.above];
  });
  out.push(table(["upstream", "n", "median", "p90", "max", "above 1.0"], perServer));
  const above = m.schema.filter((r) => r.ratio > 1).sort((x, y) => y.ratio - x.ratio);
  const schemaRow = (r: SchemaRow) => [
    r.ref,
    r.defTokens,
    r.describeTokens,
    f3(r.ratio),
    `${r.inputJsonTokens} → ${r.inputTokens} ${r.typescript ? "TS" : "JSON"}`,
    r.outputTokens,
  ];
  const schemaHead = ["tool", "definition", "describe", "ratio", "input schema", "output schema"];
  if (above.length > 0) {
    out.push(`Tools above 1.0 (${above.length}):`);
    out.push(table(schemaHead, above.map(schemaRow), ["left"]));
  } else {
    out.push("Tools above 1.0: none. The five highest:");
    const top = [...m.schema].sort((x, y) => y.ratio - x.ratio).slice(0, 5);
    out.push(table(schemaHead, top.map(schemaRow), ["left"]));
  }
  out.push(m.economy.markdown);

  out.push("### R_result: proxied call results");
  out.push(
    "Raw = the upstream's own text (direct session); compact JSON = the same data through " +
      "`JSON.stringify`; mcpx = the text of the proxied `call` result (form chosen by the proxy). " +
      "Lossless = the mcpx text decodes (JSON or TOON) to exactly the upstream's data. Memory holds " +
      "a graph seeded through the proxy (30 entities × 3 observations, 45 relations); the " +
      `filesystem tree has ${m.tree.files} files in ${m.tree.dirs} directories.`,
  );
  out.push(
    table(
      [
        "result",
        "raw upstream",
        "compact JSON",
        "mcpx",
        "form",
        "mcpx / compact JSON",
        "target",
        "mcpx / raw",
        "lossless",
        "structuredContent",
      ],
      m.results.map((r) => [
        r.ref,
        int(r.rawTokens),
        int(r.compactTokens),
        int(r.proxiedTokens),
        r.proxiedForm,
        ratio(r.proxiedTokens, r.compactTokens),
        `≤ ${(r.uniform ? TARGET.resultUniform : TARGET.result).toFixed(2)}`,
        ratio(r.proxiedTokens, r.rawTokens),
        r.lossless ? "yes" : "NO",
        r.structuredTokens === 0 ? "—" : int(r.structuredTokens),
      ]),
      ["left", "right", "right", "right", "left", "right", "left", "right", "left"],
    ),
  );
  out.push(
    "Ratios count text blocks only. The last column is the compact-JSON token count of the " +
      "`structuredContent` the proxied result also carries, forwarded unchanged (memory and " +
      "uniform_rows send the same data again, filesystem `{content: <the same pretty text>}`): a host " +
      "that shows it to the model pays for it on top.",
  );

  out.push(m.budget.markdown);

  out.push(`### R_task: a scripted session (${TASK_TOOL})`);
  out.push(
    'mcpx: tools/list, `describe("' +
      TASK_TOOL +
      '")`, one `call`. Direct: every definition of (b) listed up front, the same arguments, the ' +
      "upstream's raw result.",
  );
  out.push(
    table(
      ["context item", "mcpx", "direct"],
      [
        ...m.task.items.map((i) => [i.item, int(i.mcpx), int(i.direct)]),
        ["total", int(taskMcpx), int(taskDirect)],
        ["ratio mcpx / direct", ratio(taskMcpx, taskDirect), ""],
      ],
    ),
  );
  return out.join("\n\n");
}
