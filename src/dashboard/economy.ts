/**
 * Token counts for the dashboard, exactly as `mcpx stats` counts them (src/economy/report.ts,
 * o200k_base over each definition's API form). The tokenizer and the accounting load on the first request
 * that needs them, never on the call path; reports are cached until the catalog or the config
 * changes.
 */
import type { Profile } from "../config/load.js";
import type { StatsReport } from "../economy/report.js";
import type { CountTokens } from "../economy/tokens.js";
import type { Registry } from "../registry/registry.js";
import type { ToolDef } from "../types.js";
import { lazyImport } from "../install.js";

interface Measuring {
  count: CountTokens;
  measure: (registry: Registry, profile: Profile, count: CountTokens) => StatsReport;
  apiForm: (tool: ToolDef) => string;
}

export class TokenEconomy {
  private loading: Promise<Measuring> | undefined;
  private readonly reports = new Map<Profile, StatsReport>();
  private readonly toolTokens = new WeakMap<ToolDef, number>();

  constructor(private readonly registry: Registry) {}

  /** The catalog or the config changed: counts are measured anew when next asked for. */
  invalidate(): void {
    this.reports.clear();
  }

  /** What `mcpx stats` reports for `profile`, from the servers as they are now. */
  async report(profile: Profile): Promise<StatsReport> {
    const m = await this.load();
    let report = this.reports.get(profile);
    if (!report) {
      report = m.measure(this.registry, profile, m.count);
      this.reports.set(profile, report);
    }
    return report;
  }

  /** Tokens of each tool's definition as a client would load it directly. */
  async definitionTokens(tools: readonly ToolDef[]): Promise<number[]> {
    const m = await this.load();
    return tools.map((t) => {
      let n = this.toolTokens.get(t);
      if (n === undefined) this.toolTokens.set(t, (n = m.count(m.apiForm(t))));
      return n;
    });
  }

  private load(): Promise<Measuring> {
    this.loading ??= (async () => {
      const [tokens, report, server] = await Promise.all([
        lazyImport(() => import("../economy/tokens.js")),
        lazyImport(() => import("../economy/report.js")),
        lazyImport(() => import("../server/mcp-server.js")),
      ]);
      return {
        count: await tokens.loadTokenCounter(),
        measure: (registry: Registry, profile: Profile, count: CountTokens) =>
          report.measure(registry, profile, count, server.listMetaTools),
        apiForm: tokens.apiForm,
      };
    })().catch((err: unknown) => {
      // Asked again later, try again: a failed load must not stick.
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }
}
