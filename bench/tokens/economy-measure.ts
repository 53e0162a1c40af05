/**
 * The token economy's measurements beyond the github corpus: describe("server") signatures on
 * every catalog, result encoding per payload shape, and tool search quality and latency.
 */
import { isDeepStrictEqual } from "node:util";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { decode as decodeToon, encode as encodeToon } from "@toon-format/toon";
import { compressResult } from "../../src/compression/result.js";
import { decodeSparse, encodeSparse } from "../../src/compression/sparse.js";
import { ToolIndex } from "../../src/registry/search.js";
import { recordedTools, RECORDED, type Catalog } from "../../test/helpers/catalogs.js";
import {
  type EvalQuery,
  type EvalResult,
  evaluateSearch,
  indexed,
  loadNeeds,
  loadSearchEval,
  realServers,
} from "../../test/helpers/search-eval.js";
import { SHAPES } from "../../test/fixtures/results/shapes.js";
import { readFileSync } from "node:fs";
import path from "node:path";
import { definitionTokens, meta, tokens } from "../count.js";
import type { BenchProxy } from "../proxy.js";
import { percentile } from "../lib/stats.js";
import type { SchemaRow } from "./schema.js";
import { ROOT } from "../upstreams.js";

/** Recorded catalogs other than github, by server name. */
export const OTHERS = Object.keys(RECORDED).filter((s) => s !== "github");

export interface EconomyInput {
  /** A proxy over every upstream of the report (examples, github, the other recorded ones). */
  proxy: BenchProxy;
  /** Each server's tools as its upstream lists them. */
  toolsOf: (server: string) => Tool[];
  /** Schema rows already measured for the examples and github. */
  schema: SchemaRow[];
  /** The example servers and github, in report order. */
  servers: readonly string[];
}

/** The least a lossless answer can cost: every fact as bare words, no structure at all. */
export function factsFloor(tool: Tool): number {
  const out: string[] = [tool.name, tool.description ?? ""];
  const seen = new Set<string>();
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (typeof n !== "object" || n === null) return;
    for (const [k, v] of Object.entries(n as Record<string, unknown>)) {
      if (k === "description" && typeof v === "string") {
        const d = v.replace(/\s+/g, " ").trim();
        if (!seen.has(d)) out.push(d);
        seen.add(d);
      } else if (k === "enum" && Array.isArray(v))
        out.push(v.map((x) => JSON.stringify(x)).join("|"));
      else if (
        ["const", "default", "pattern", "format"].includes(k) ||
        /^(min|max|exclusive)/.test(k)
      )
        out.push(JSON.stringify(v));
      else if (k === "type") out.push(Array.isArray(v) ? v.join("|") : String(v));
      else if (k === "properties" && typeof v === "object" && v !== null)
        for (const [p, sub] of Object.entries(v as Record<string, unknown>)) {
          out.push(p);
          visit(sub);
        }
      else if (k !== "$defs" && k !== "definitions") visit(v);
    }
  };
  visit(tool.inputSchema);
  visit(tool.outputSchema);
  const def = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
  const full = tool.outputSchema ? { ...def, outputSchema: tool.outputSchema } : def;
  return tokens(out.join(" ")) / tokens(JSON.stringify(full));
}

export interface SignatureRow {
  server: string;
  tools: number;
  answerTokens: number;
  definitionTokens: number;
}

export async function measureSignatures(
  p: BenchProxy,
  servers: readonly string[],
  toolsOf: (s: string) => Tool[],
): Promise<SignatureRow[]> {
  const rows: SignatureRow[] = [];
  for (const server of servers) {
    const text = await meta(p, "describe", { method: server });
    rows.push({
      server,
      tools: toolsOf(server).length,
      answerTokens: tokens(text),
      definitionTokens: definitionTokens(toolsOf(server)),
    });
  }
  return rows;
}

export interface ShapeRow {
  shape: string;
  jsonTokens: number;
  toonTokens: number;
  mcpxTokens: number;
  form: string;
  lossless: boolean;
}

/** Each shape sent as pretty JSON text through the proxy's result encoder (compressResult). */
export function measureShapes(): ShapeRow[] {
  return Object.entries(SHAPES).map(([shape, make]) => {
    const data: unknown = make();
    const json = JSON.stringify(data);
    const out = compressResult(
      { content: [{ type: "text", text: JSON.stringify(data, null, 2) }] },
      "auto",
    ).content[0]!.text as string;
    const form =
      out === json
        ? "JSON"
        : out === encodeSparse(data)
          ? "sparse table"
          : out === encodeToon(data)
            ? "TOON"
            : "?";
    const decoded: unknown =
      form === "JSON"
        ? JSON.parse(out)
        : form === "TOON"
          ? decodeToon(out)
          : form === "sparse table"
            ? decodeSparse(out)
            : undefined;
    return {
      shape,
      jsonTokens: tokens(json),
      toonTokens: tokens(encodeToon(data)),
      mcpxTokens: tokens(out),
      form,
      lossless: isDeepStrictEqual(decoded, data),
    };
  });
}

export interface SearchMeasure {
  /** bench/search-needs.json over the 13 real servers' recorded catalogs. */
  needs: { tune: EvalResult; heldBack: EvalResult; tools: number; servers: number };
  eval: ReturnType<typeof evaluateSearch>;
  heldOut: ReturnType<typeof evaluateSearch>;
  evalTools: number;
  heldOutTools: number;
  scale: { tools: number; buildMs: number; p50: number; p90: number; max: number; queries: number };
}

function loadHeldOut(): EvalQuery[] {
  const file = path.join(ROOT, "bench/search-heldout.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { queries: EvalQuery[] }).queries;
}

export function measureSearch(evalCatalogs: Catalog[], allCatalogs: Catalog[]): SearchMeasure {
  const queries = loadSearchEval();
  const heldOut = loadHeldOut();
  const evalResult = evaluateSearch(new ToolIndex(indexed(evalCatalogs)), queries);
  const real = realServers();
  const realIndex = new ToolIndex(real);
  const { tune, heldBack: held } = loadNeeds();
  const needs = {
    tune: evaluateSearch(realIndex, tune),
    heldBack: evaluateSearch(realIndex, held),
    tools: real.reduce((n, s) => n + s.tools.length, 0),
    servers: real.length,
  };
  const heldOutResult = evaluateSearch(new ToolIndex(indexed(allCatalogs)), heldOut);

  // 1,000 tools: every catalog, then copies of the recorded ones under other server names.
  const big: Catalog[] = [
    ...allCatalogs,
    ...real.map((s) => ({ server: `${s.name}-real`, tools: [...s.tools] })),
  ];
  let count = big.reduce((n, c) => n + c.tools.length, 0);
  for (let copy = 2; count < 1000; copy++) {
    for (const dir of Object.values(RECORDED)) {
      if (count >= 1000) break;
      const tools = recordedTools(dir).slice(0, 1000 - count);
      big.push({ server: `${dir}-${copy}`, tools });
      count += tools.length;
    }
  }
  const t0 = performance.now();
  const index = new ToolIndex(indexed(big));
  const buildMs = performance.now() - t0;
  const times: number[] = [];
  const all = [...queries, ...heldOut, ...tune, ...held];
  for (let round = 0; round < 5; round++) {
    for (const q of all) {
      const start = performance.now();
      index.search(q.query, 10);
      times.push(performance.now() - start);
    }
  }
  times.sort((a, b) => a - b);
  return {
    needs,
    eval: evalResult,
    heldOut: heldOutResult,
    evalTools: evalCatalogs.reduce((n, c) => n + c.tools.length, 0),
    heldOutTools: allCatalogs.reduce((n, c) => n + c.tools.length, 0),
    scale: {
      tools: count,
      buildMs,
      p50: percentile(times, 50),
      p90: percentile(times, 90),
      max: times.at(-1) ?? Number.NaN,
      queries: times.length,
    },
  };
}
