/**
 * The token benchmark's own measurements against real upstreams: R_init (the tools/list a client
 * receives), R_result (proxied results against the same data as JSON) and R_task (one scripted
 * session). A tool definition costs its API form; text costs its o200k_base tokens.
 */
import { isDeepStrictEqual } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { decode as decodeToon } from "@toon-format/toon";
import { decodeSparse, encodeSparse } from "../../src/compression/sparse.js";
import { apiForm, definitionTokens, meta, tokens } from "../count.js";
import type { BenchProxy } from "../proxy.js";
import { callText, resultText, type DirectClient } from "../upstreams.js";

/** The example servers of catalog (a), and the recorded corpus (b) adds. */
export const SMALL = ["everything", "filesystem", "memory"] as const;
export const CORPUS = "github";

// ---------------------------------------------------------------------------------------------
// R_init: the tools/list a client receives.

interface InitRow {
  label: string;
  servers: string[];
  upstreamTools: number;
  upstreamTokens: number;
  metaTokens: number;
}

export interface InitMeasure {
  rows: [InitRow, InitRow];
  perServer: { server: string; tools: number; tokens: number }[];
  allDefTokens: number;
  metaTools: { name: string; tokens: number }[];
}

async function metaList(p: BenchProxy): Promise<Tool[]> {
  return (await p.client.listTools()).tools;
}

export async function measureInit(
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

export interface ResultRow {
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

export async function measureResults(
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

export interface TaskMeasure {
  items: { item: string; mcpx: number; direct: number }[];
}

export const TASK_TOOL = `${CORPUS}.create_pull_request`;
const TASK_ARGS = {
  owner: "example",
  repo: "mcpx",
  title: "Add a token benchmark",
  head: "bench/tokens",
  base: "main",
  body: "Adds bench/tokens.ts, which measures the context cost of the meta-tools against exposing every upstream tool directly.",
  draft: false,
};

export async function measureTask(
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
