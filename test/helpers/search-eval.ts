/**
 * The search evaluation (bench/search-eval.json) run against a ToolIndex: top-1, top-3 and MRR
 * over natural-language needs. Shared by the search test (which asserts the targets) and
 * `npm run bench -- tokens` (which reports them).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { IndexedServer, ToolIndex } from "../../src/registry/search.js";
import { realCatalogs, type Catalog } from "./catalogs.js";

export interface EvalQuery {
  query: string;
  /** Tool refs (`server.tool`) that serve the need; any of them counts. */
  expected: string[];
}

export interface EvalResult {
  queries: number;
  top1: number;
  top3: number;
  mrr: number;
  /** Queries whose expected tool was not in the top 3, with what came first. */
  misses: { query: string; expected: string[]; got: string[] }[];
}

const EVAL_FILE = path.resolve(import.meta.dirname, "../../bench/search-eval.json");

export function loadSearchEval(): EvalQuery[] {
  return (JSON.parse(readFileSync(EVAL_FILE, "utf8")) as { queries: EvalQuery[] }).queries;
}

/** Catalogs as the index sees servers (no configured descriptions). */
export function indexed(catalogs: readonly Catalog[]): IndexedServer[] {
  return catalogs.map((c) => ({ name: c.server, tools: c.tools }));
}

/** Rank every query; the reciprocal rank counts up to the 10th result (0 beyond). */
export function evaluateSearch(index: ToolIndex, queries: readonly EvalQuery[]): EvalResult {
  let top1 = 0;
  let top3 = 0;
  let rr = 0;
  const misses: EvalResult["misses"] = [];
  for (const q of queries) {
    const got = index.search(q.query, 10).map((h) => `${h.server}.${h.tool}`);
    const rank = got.findIndex((ref) => q.expected.includes(ref));
    if (rank === 0) top1++;
    if (rank >= 0 && rank < 3) top3++;
    else misses.push({ query: q.query, expected: q.expected, got: got.slice(0, 3) });
    if (rank >= 0) rr += 1 / (rank + 1);
  }
  const n = queries.length;
  return { queries: n, top1: top1 / n, top3: top3 / n, mrr: rr / n, misses };
}

/** The needs over the real servers' catalogs (bench/search-needs.json), split as the file fixes. */
export interface Needs {
  /** The two thirds the ranker may be tuned on. */
  tune: EvalQuery[];
  /** The third held back: reported, never tuned on. */
  heldBack: EvalQuery[];
}

const NEEDS_FILE = path.resolve(import.meta.dirname, "../../bench/search-needs.json");

export function loadNeeds(): Needs {
  const { queries } = JSON.parse(readFileSync(NEEDS_FILE, "utf8")) as {
    queries: (EvalQuery & { heldBack: boolean })[];
  };
  const strip = ({ query, expected }: EvalQuery): EvalQuery => ({ query, expected });
  return {
    tune: queries.filter((q) => !q.heldBack).map(strip),
    heldBack: queries.filter((q) => q.heldBack).map(strip),
  };
}

/**
 * The recorded catalogs of the real servers (test/fixtures/catalogs) as the index sees them in
 * mcpx: each server's tools and what it said about itself at initialize (no configured
 * descriptions).
 */
export function realServers(): IndexedServer[] {
  return realCatalogs().map((c) => ({
    name: c.server,
    tools: c.tools,
    identity: {
      ...(c.serverInfo.title !== undefined ? { title: c.serverInfo.title } : {}),
      ...(c.instructions !== null ? { instructions: c.instructions } : {}),
    },
  }));
}
