/**
 * Token benchmark: what enters the model's context with mcpx (three meta-tools, describe on
 * demand, compressed results) versus every upstream tool exposed directly. Everything is measured
 * side by side in one run against real upstream processes.
 *
 * A tool definition costs its API form, `JSON.stringify({ name, description, inputSchema })`;
 * text costs its o200k_base tokens.
 */
import { isDeepStrictEqual } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import path from "node:path";
import { decode as decodeToon } from "@toon-format/toon";
import { decodeSparse, encodeSparse } from "../src/compression/sparse.js";
import { apiForm, definitionTokens, meta, tokenizerVersion, tokens } from "./count.js";
import { startProxy, type BenchProxy } from "./proxy.js";
import { measureSchema, schemaStats, type SchemaRow } from "./schema.js";
import { ECONOMY_TARGET, measureEconomy, OTHERS, type Economy } from "./economy.js";
import { measureBudget, type Budget } from "./budget.js";
import { recordedTools, RECORDED } from "../test/helpers/catalogs.js";
import { int, ratio, table, verdict, type BenchSection } from "./report.js";
import {
  callText,
  connectDirect,
  createWorkspace,
  listAllTools,
  npmServer,
  replayServer,
  resultText,
  type DirectClient,
  ROOT,
  type StdioSpec,
} from "./upstreams.js";

/** Targets from the design brief: reported next to the numbers, never asserted. */
const TARGET = {
  initSmall: 0.15,
  initCorpus: 0.03,
  schemaMedian: ECONOMY_TARGET.schemaMedian,
  schemaMax: ECONOMY_TARGET.schemaMax,
  result: 1.0,
  resultUniform: 0.8,
} as const;

const SMALL = ["everything", "filesystem", "memory"] as const;
const CORPUS = "github";

export async function runTokenBench(): Promise<BenchSection> {
  const started = performance.now();
  const ws = createWorkspace();
  const specs = {
    everything: npmServer("@modelcontextprotocol/server-everything", ["stdio"]),
    filesystem: npmServer("@modelcontextprotocol/server-filesystem", [ws.files]),
    memory: npmServer("@modelcontextprotocol/server-memory", [], {
      MEMORY_FILE_PATH: ws.memoryFile,
    }),
    [CORPUS]: replayServer(),
    // Only uniform_rows: kept out of the catalogs above so (b) is exactly the recorded corpus.
    replay: replayServer({ REPLAY_DIR: ws.emptyReplayDir, REPLAY_EXTRA: "1" }),
  } satisfies Record<string, StdioSpec>;
  // The other recorded catalogs, each served unchanged by the replay fixture.
  const recorded = Object.fromEntries(
    OTHERS.map((s) => [
      s,
      replayServer({
        REPLAY_DIR: path.join(ROOT, "test/fixtures/corpus", RECORDED[s as keyof typeof RECORDED]),
      }),
    ]),
  );
  const pick = (...names: (keyof typeof specs)[]) =>
    Object.fromEntries(names.map((n) => [n, specs[n]])) as Record<string, StdioSpec>;

  const closers: (() => Promise<void>)[] = [];
  try {
    // Direct sessions and the three proxies start in parallel; every one is closed in `finally`.
    const directs = Object.fromEntries(
      await allSettled(
        Object.entries(specs).map(async ([name, spec]) => {
          const d = await connectDirect(name, spec);
          closers.push(() => d.close());
          return [name, d] as const;
        }),
      ),
    ) as Record<keyof typeof specs, DirectClient>;
    const open = async (servers: Record<string, StdioSpec>) => {
      const p = await startProxy(servers);
      closers.push(() => p.close());
      return p;
    };
    const [proxySmall, proxyAll, proxyRows, proxyEvery] = await allSettled([
      open(pick(...SMALL)),
      open(pick(...SMALL, CORPUS)),
      open(pick("replay")),
      open({ ...pick(...SMALL, CORPUS), ...recorded }),
    ]);

    const defs = new Map<string, Tool[]>();
    for (const [name, d] of Object.entries(directs)) defs.set(name, await listAllTools(d.client));
    for (const s of OTHERS)
      defs.set(s, recordedTools(RECORDED[s as keyof typeof RECORDED]) as Tool[]);
    const toolsOf = (name: string) => defs.get(name) ?? [];

    const init = await measureInit(proxySmall, proxyAll, toolsOf);
    const schema = await measureSchema(proxyAll, [...SMALL, CORPUS], toolsOf);
    const results = await measureResults(proxyAll, proxyRows, directs, ws.files);
    const tree = ws.tree;
    const task = await measureTask(proxyAll, directs[CORPUS].client, init.allDefTokens);
    const economy = await measureEconomy({
      proxy: proxyEvery,
      toolsOf,
      schema,
      servers: [...SMALL, CORPUS],
    });
    const budget = await measureBudget({
      rows: proxyRows,
      direct: directs.replay.client,
      small: proxySmall,
      all: proxyAll,
    });

    const markdown = render({
      init,
      schema,
      results,
      task,
      tree,
      economy,
      budget,
      elapsedMs: performance.now() - started,
    });
    return { id: "tokens", title: "Tokens", markdown };
  } finally {
    // Reverse order: proxies (and their upstream processes) first, then the direct sessions.
    const failures: unknown[] = [];
    for (const close of closers.reverse())
      await close().catch((err: unknown) => failures.push(err));
    ws.remove();
    if (failures.length > 0) console.error("bench: some sessions failed to close:", failures);
  }
}

/**
 * Promise.all that waits for every promise before rejecting, so nothing is still starting (and
 * registering its closer) when the caller's `finally` closes what started.
 */
async function allSettled<T extends readonly unknown[]>(promises: {
  [K in keyof T]: Promise<T[K]>;
}): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

// ---------------------------------------------------------------------------------------------
// R_init: the tools/list a client receives.

interface InitRow {
  label: string;
  servers: string[];
  upstreamTools: number;
  upstreamTokens: number;
  metaTokens: number;
}

interface InitMeasure {
  rows: [InitRow, InitRow];
  perServer: { server: string; tools: number; tokens: number }[];
  allDefTokens: number;
  metaTools: { name: string; tokens: number }[];
}

async function metaList(p: BenchProxy): Promise<Tool[]> {
  return (await p.client.listTools()).tools;
}

async function measureInit(
  small: BenchProxy,
  all: BenchProxy,
  toolsOf: (name: string) => Tool[],
): Promise<InitMeasure> {
  const row = async (label: string, p: BenchProxy, servers: string[]): Promise<InitRow> => {
    const upstream = servers.flatMap(toolsOf);
    return {
      label,
      servers,
      upstreamTools: upstream.length,
      upstreamTokens: definitionTokens(upstream),
      metaTokens: definitionTokens(await metaList(p)),
    };
  };
  const a = await row("(a) everything + filesystem + memory", small, [...SMALL]);
  const b = await row("(b) (a) + github corpus", all, [...SMALL, CORPUS]);
  const allMeta = await metaList(all);
  return {
    rows: [a, b],
    perServer: [...SMALL, CORPUS].map((server) => ({
      server,
      tools: toolsOf(server).length,
      tokens: definitionTokens(toolsOf(server)),
    })),
    allDefTokens: b.upstreamTokens,
    metaTools: allMeta.map((t) => ({ name: t.name, tokens: tokens(apiForm(t)) })),
  };
}

// ---------------------------------------------------------------------------------------------
// R_result: proxied call results versus the same data as compact JSON and as the upstream sent it.

interface ResultRow {
  ref: string;
  uniform: boolean;
  rawTokens: number;
  compactTokens: number;
  proxiedTokens: number;
  proxiedForm: string;
  /** The proxied text decodes to exactly the upstream's data. */
  lossless: boolean;
  /** Tokens of the structuredContent the proxied result also carries (0 if none). */
  structuredTokens: number;
}

/** 30 entities (5 teams, 20 people, 5 projects), 3 observations each, 45 relations. */
function seedGraph() {
  const teams = ["platform", "payments", "search", "mobile", "data"];
  const people = [
    "Ada",
    "Grace",
    "Linus",
    "Barbara",
    "Ken",
    "Margaret",
    "Dennis",
    "Frances",
    "Edsger",
    "Radia",
    "Guido",
    "Anders",
    "Yukihiro",
    "Sophie",
    "Bjarne",
    "Hedy",
    "Alan",
    "Katherine",
    "Tim",
    "Joan",
  ];
  const langs = ["TypeScript", "Go", "Rust", "Python"];
  const projects = ["checkout-v2", "query-planner", "ios-widgets", "ingest-pipeline", "sso"];
  const entities = [
    ...teams.map((t, i) => ({
      name: `team-${t}`,
      entityType: "team",
      observations: [
        `owns the ${t} area`,
        `on-call rotation of ${4 + i} people`,
        `weekly sync on ${["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"][i]}`,
      ],
    })),
    ...people.map((name, i) => ({
      name,
      entityType: "person",
      observations: [
        `works on the ${teams[i % teams.length]} team`,
        `joined in ${2016 + (i % 8)}`,
        `prefers ${langs[i % langs.length]}`,
      ],
    })),
    ...projects.map((p, i) => ({
      name: p,
      entityType: "project",
      observations: [
        `status: ${i % 2 === 0 ? "active" : "planning"}`,
        `due ${2025 + (i % 2)}-Q${1 + (i % 4)}`,
        `repository github.com/example/${p}`,
      ],
    })),
  ];
  const relations = [
    ...people.map((name, i) => ({
      from: name,
      to: `team-${teams[i % teams.length]}`,
      relationType: "member_of",
    })),
    ...people.map((name, i) => ({
      from: name,
      to: projects[i % projects.length]!,
      relationType: "contributes_to",
    })),
    ...projects.map((p, i) => ({ from: p, to: `team-${teams[i]}`, relationType: "owned_by" })),
  ];
  return { entities, relations };
}

/** Decode the proxied text (JSON or TOON) and compare with the upstream's data. */
function decodeProxied(text: string, expected: unknown): { form: string; lossless: boolean } {
  try {
    return { form: "JSON", lossless: isDeepStrictEqual(JSON.parse(text), expected) };
  } catch {
    // Not JSON: the proxy chose TOON (or passed text through).
  }
  // Not JSON: the proxy chose TOON or a sparse table (told apart by re-encoding the data).
  const sparse = text === encodeSparse(expected);
  try {
    const decoded = sparse ? decodeSparse(text) : decodeToon(text);
    return { form: sparse ? "sparse" : "TOON", lossless: isDeepStrictEqual(decoded, expected) };
  } catch {
    return { form: "text", lossless: false };
  }
}

async function measureResults(
  all: BenchProxy,
  rows: BenchProxy,
  directs: Record<string, DirectClient>,
  filesRoot: string,
): Promise<ResultRow[]> {
  const { entities, relations } = seedGraph();
  // Seeded through the proxy, as a model would; the direct memory server reads the same file.
  await meta(all, "call", { method: "memory.create_entities", arguments: { entities } });
  await meta(all, "call", { method: "memory.create_relations", arguments: { relations } });

  const cases = [
    { proxy: all, server: "memory", tool: "read_graph", args: {}, uniform: false },
    {
      proxy: all,
      server: "filesystem",
      tool: "directory_tree",
      args: { path: filesRoot },
      uniform: false,
    },
    { proxy: rows, server: "replay", tool: "uniform_rows", args: { count: 50 }, uniform: true },
  ];
  const out: ResultRow[] = [];
  for (const c of cases) {
    const direct = directs[c.server];
    if (!direct) throw new Error(`no direct session for ${c.server}`);
    const raw = await callText(direct.client, c.tool, c.args);
    const result = await c.proxy.client.callTool({
      name: "call",
      arguments: { method: `${c.server}.${c.tool}`, arguments: c.args },
    });
    const proxied = resultText(result);
    if (result.isError) throw new Error(`call ${c.server}.${c.tool} failed: ${proxied}`);
    const data: unknown = JSON.parse(raw);
    const decoded = decodeProxied(proxied, data);
    out.push({
      ref: `${c.server}.${c.tool}`,
      uniform: c.uniform,
      rawTokens: tokens(raw),
      compactTokens: tokens(JSON.stringify(data)),
      proxiedTokens: tokens(proxied),
      proxiedForm: decoded.form,
      structuredTokens:
        result.structuredContent === undefined
          ? 0
          : tokens(JSON.stringify(result.structuredContent)),
      lossless: decoded.lossless,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// R_task: one scripted session, everything that enters the model's context.

interface TaskMeasure {
  items: { item: string; mcpx: number; direct: number }[];
}

const TASK_TOOL = `${CORPUS}.create_pull_request`;
const TASK_ARGS = {
  owner: "example",
  repo: "mcpx",
  title: "Add a token benchmark",
  head: "bench/tokens",
  base: "main",
  body: "Adds bench/tokens.ts, which measures the context cost of the meta-tools against exposing every upstream tool directly.",
  draft: false,
};

async function measureTask(
  p: BenchProxy,
  github: Client,
  allDefTokens: number,
): Promise<TaskMeasure> {
  const listTokens = definitionTokens(await metaList(p));
  const describeArgs = { method: TASK_TOOL };
  const describeText = await meta(p, "describe", describeArgs);
  const callArgs = { method: TASK_TOOL, arguments: TASK_ARGS };
  const proxiedResult = await meta(p, "call", callArgs);
  const rawResult = await callText(github, "create_pull_request", TASK_ARGS);
  return {
    items: [
      { item: "tool definitions (tools/list)", mcpx: listTokens, direct: allDefTokens },
      { item: "describe request", mcpx: tokens(JSON.stringify(describeArgs)), direct: 0 },
      { item: "describe answer", mcpx: tokens(describeText), direct: 0 },
      {
        item: "call request arguments",
        mcpx: tokens(JSON.stringify(callArgs)),
        direct: tokens(JSON.stringify(TASK_ARGS)),
      },
      { item: "call result", mcpx: tokens(proxiedResult), direct: tokens(rawResult) },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Report.

interface Measures {
  init: InitMeasure;
  schema: SchemaRow[];
  results: ResultRow[];
  task: TaskMeasure;
  tree: { files: number; dirs: number };
  economy: Economy;
  budget: Budget;
  elapsedMs: number;
}

function render(m: Measures): string {
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
