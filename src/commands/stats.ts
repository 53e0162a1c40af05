/**
 * `mcpx stats <file>`: what the servers' tool definitions cost a client that loads them directly,
 * against what mcpx shows instead (its three meta-tools, whose describe carries the catalog).
 * Counted as bench/tokens.ts counts: API form, o200k_base. Rows add up to the totals: each
 * server's mcpx cost is what its catalog adds to the meta-tools on its own, and one "shared" row
 * holds the rest (the meta-tools themselves and how the catalog of all servers together renders).
 */
import type { StatsOptions } from "../cli.js";
import { ConfigError, DEFAULT_PROFILE, loadConfig, type Config } from "../config/load.js";
import { listMetaTools } from "../server/mcp-server.js";
import { connectAll } from "./connect.js";
import { checkUntrusted, isUntrustedRefusal, loadOptions } from "./load.js";
import { fail, int, redactor } from "./output.js";
import { measure, type StatsReport } from "../economy/report.js";
import { loadTokenCounter } from "../economy/tokens.js";

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
    report = measure(
      proxy.context.registry,
      config.profiles[DEFAULT_PROFILE]!,
      count,
      listMetaTools,
    );
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
