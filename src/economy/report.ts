/**
 * What the servers' tool definitions cost a client that loads them directly, against what mcpx
 * shows instead (its three meta-tools, whose describe carries the catalog): the numbers of
 * `mcpx stats` and of the dashboard's economy panel. Counted as bench/tokens.ts counts: API form,
 * o200k_base. Rows add up to the totals: each server's mcpx cost is what its catalog adds to the
 * meta-tools on its own, and one "shared" row holds the rest (the meta-tools themselves and how
 * the catalog of all servers together renders).
 */
import type { Profile } from "../config/load.js";
import type { Registry } from "../registry/registry.js";
import { CatalogView } from "../registry/view.js";
import { definitionTokens, type CountTokens, type ToolLike } from "./tokens.js";

/**
 * The meta-tools as listed to a client of `view` (the server's `listMetaTools`): passed in, so
 * token accounting stays below the server that renders them.
 */
export type MetaToolLister = (view: CatalogView) => readonly ToolLike[];

export interface StatsRow {
  server: string;
  status: string;
  tools: number;
  /** Tokens of the server's tool definitions, loaded directly. */
  direct: number;
  /** Tokens the server's catalog adds to mcpx's meta-tools. */
  mcpx: number;
  saved: number;
}

export interface StatsReport {
  tokenizer: "o200k_base";
  /** How a definition is counted. */
  method: string;
  profile: string;
  rows: StatsRow[];
  /** The meta-tools with no server, plus what rendering every server together changes. */
  shared: number;
  total: { tools: number; direct: number; mcpx: number; saved: number; ratio: number };
}

/** The numbers, from a registry whose servers are discovered, as the default profile sees them. */
export function measure(
  registry: Registry,
  profile: Profile,
  count: CountTokens,
  metaTools: MetaToolLister,
): StatsReport {
  const metaTokens = (servers: string[]) =>
    definitionTokens(metaTools(new CatalogView({ ...profile, servers }, registry)), count);
  const all = new CatalogView(profile, registry);
  const none = metaTokens([]);
  const servers = all.servers();
  const isUp = (s: { status: string }) => s.status === "ready" || s.status === "degraded";
  const up = servers.filter(isUp).map((s) => s.name);
  const totalMcpx = metaTokens(up);
  // What each server's catalog adds on its own, then scaled so the rows add up to what all of
  // them add together: the describe description is bounded, so past some servers the catalogs
  // share its room and the marginals overcount (the shared row went negative on 11 servers).
  const marginal = servers.map((s) => (isUp(s) ? Math.max(0, metaTokens([s.name]) - none) : 0));
  const mcpxOf = apportion(marginal, Math.max(0, totalMcpx - none));
  const rows = servers.map((s, i): StatsRow => {
    const direct = isUp(s) ? definitionTokens(s.tools, count) : 0;
    const mcpx = mcpxOf[i]!;
    return {
      server: s.name,
      status: s.status,
      tools: isUp(s) ? s.tools.length : 0,
      direct,
      mcpx,
      saved: direct - mcpx,
    };
  });
  const sum = (k: "tools" | "direct" | "mcpx") => rows.reduce((n, r) => n + r[k], 0);
  const direct = sum("direct");
  return {
    tokenizer: "o200k_base",
    method:
      "JSON.stringify({ name, description, inputSchema }) per tool definition; mcpx: its three meta-tools as listed to a client",
    profile: profile.name,
    rows,
    shared: totalMcpx - sum("mcpx"),
    total: {
      tools: sum("tools"),
      direct,
      mcpx: totalMcpx,
      saved: direct - totalMcpx,
      ratio: direct === 0 ? 0 : Math.round((totalMcpx / direct) * 1000) / 1000,
    },
  };
}

/**
 * Split `total` in proportion to `weights`, in whole numbers that add up to it exactly (largest
 * remainders first). All-zero weights split nothing.
 */
export function apportion(weights: readonly number[], total: number): number[] {
  const sum = weights.reduce((n, w) => n + w, 0);
  if (sum === 0) return weights.map(() => 0);
  const exact = weights.map((w) => (w / sum) * total);
  const out = exact.map(Math.floor);
  let left = total - out.reduce((n, v) => n + v, 0);
  const order = exact.map((v, i) => [v - Math.floor(v), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) {
    if (left <= 0) break;
    out[i]! += 1;
    left -= 1;
  }
  return out;
}
