/**
 * `mcpx stats <file>`: what the servers' tool definitions cost a client that loads them directly,
 * against what mcpx shows instead (its three meta-tools, whose describe carries the catalog).
 * Counted as bench/tokens.ts counts: API form, o200k_base. Rows add up to the totals: each
 * server's mcpx cost is what its catalog adds to the meta-tools on its own, and one "shared" row
 * holds the rest (the meta-tools themselves and how the catalog of all servers together renders).
 */
import type { StatsOptions } from "../cli.js";
import {
  ConfigError,
  DEFAULT_PROFILE,
  loadConfig,
  type Config,
  type Profile,
} from "../config/load.js";
import { CatalogView } from "../registry/view.js";
import { listMetaTools } from "../server/mcp-server.js";
import { connectAll } from "./connect.js";
import { checkUntrusted, isUntrustedRefusal, loadOptions } from "./load.js";
import { fail, int, redactor } from "./output.js";
import { definitionTokens, loadTokenCounter, type CountTokens } from "./tokens.js";
import type { Registry } from "../registry/registry.js";

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

export async function stats(o: StatsOptions): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(o.file, process.env, loadOptions(o));
    await checkUntrusted(config);
  } catch (err) {
    if (err instanceof ConfigError)
      return fail(2, err.message, `Run mcpx validate ${o.file} for details.`);
    if (isUntrustedRefusal(err)) return fail(2, err.message);
    throw err;
  }
  const count = await loadTokenCounter();
  const { proxy } = await connectAll(config);
  let report: StatsReport;
  try {
    report = measure(proxy.context.registry, config.profiles[DEFAULT_PROFILE]!, count);
  } finally {
    await proxy.close();
  }
  const redact = redactor(config.secrets);
  process.stdout.write(redact(o.json ? `${JSON.stringify(report, null, 2)}\n` : render(report)));
  const down = report.rows.filter((r) => r.status !== "ready" && r.status !== "degraded");
  if (down.length === report.rows.length) {
    return fail(
      1,
      "no server started, so there is nothing to count.",
      `Run mcpx validate ${o.file} --connect to see why.`,
    );
  }
  if (down.length > 0) {
    process.stderr.write(
      `mcpx: not counted (did not start): ${down.map((r) => r.server).join(", ")}\n  Run mcpx validate ${o.file} --connect to see why.\n`,
    );
  }
  return 0;
}

/** The numbers, from a registry whose servers are discovered, as the default profile sees them. */
export function measure(registry: Registry, profile: Profile, count: CountTokens): StatsReport {
  const metaTokens = (servers: string[]) =>
    definitionTokens(listMetaTools(new CatalogView({ ...profile, servers }, registry)), count);
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

function render(r: StatsReport): string {
  const head = ["server", "tools", "direct tokens", "through mcpx", "saved"];
  const body = [
    ...r.rows.map((x) =>
      x.status === "ready" || x.status === "degraded"
        ? [x.server, int(x.tools), int(x.direct), int(x.mcpx), int(x.saved)]
        : [x.server, `(${x.status})`, "", "", ""],
    ),
    ["(shared: describe, call, resources)", "", "", int(r.shared), int(-r.shared)],
  ];
  const total = [
    "total",
    int(r.total.tools),
    int(r.total.direct),
    int(r.total.mcpx),
    int(r.total.saved),
  ];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...[...body, total].map((row) => row[i]!.length)),
  );
  const line = (row: string[]) =>
    row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const pct =
    r.total.direct === 0 ? "" : ` (${Math.round((1 - r.total.ratio) * 100)}% fewer tokens)`;
  return [
    line(head),
    rule,
    ...body.map(line),
    rule,
    line(total),
    "",
    `Tokens a client loads before the first message: ${int(r.total.direct)} directly, ${int(r.total.mcpx)} through mcpx${pct}.`,
    `Counted with o200k_base over each definition's API form (name, description, input schema), as npm run bench does; profile "${r.profile}".`,
    "",
  ].join("\n");
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
