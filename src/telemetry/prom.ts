/**
 * The prom-client side of a proxy's metrics (metrics.ts): a Registry of its own (never the global
 * default one), built on the first scrape or once enough calls wait to be counted, so an idle
 * proxy never loads prom-client (issue 30: ~10 MB of idle RSS). Call counts arrive as `CallCount`s
 * (already labelled, replayed in order); in-flight calls and restarts are read from the plain
 * numbers metrics.ts keeps from the start; status, sessions, catalogs and token economy are read
 * from the registry when scraped.
 */
import { Counter, Gauge, Histogram, Registry as PromRegistry } from "prom-client";
import type { TokenEconomy } from "../dashboard/economy.js";
import type { ServerStatus } from "../registry/types.js";
import type { ProxyContext } from "../server/context.js";
import type { CallCount, MetricsTally } from "./tally.js";

const STATUSES: readonly ServerStatus[] = ["starting", "ready", "degraded", "down"];

/** Seconds: from a cached answer (~1 ms) to the default call timeout. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class PromMetrics {
  readonly registry = new PromRegistry();
  /** Count one ended call (or script). */
  readonly count: (c: CallCount) => void;

  constructor(ctx: ProxyContext, economy: TokenEconomy, tally: MetricsTally) {
    const registers = [this.registry];
    const calls = new Counter({
      name: "mcpx_calls_total",
      help: "Tool calls (a script's inner calls included), by server, tool and outcome.",
      labelNames: ["server", "tool", "outcome"] as const,
      registers,
    });
    const errors = new Counter({
      name: "mcpx_call_errors_total",
      help: "Tool calls whose outcome was not ok, by server, tool and outcome.",
      labelNames: ["server", "tool", "outcome"] as const,
      registers,
    });
    const duration = new Histogram({
      name: "mcpx_call_duration_seconds",
      help: "Tool call latency through mcpx, by server and tool.",
      labelNames: ["server", "tool"] as const,
      buckets: DURATION_BUCKETS,
      registers,
    });
    new Gauge({
      name: "mcpx_calls_in_flight",
      help: "Tool calls and scripts running now.",
      registers,
      collect() {
        this.set(tally.inFlight);
      },
    });
    const scripts = new Counter({
      name: "mcpx_sandbox_runs_total",
      help: "Code-mode scripts run in the sandbox, by outcome.",
      labelNames: ["outcome"] as const,
      registers,
    });
    const scriptDuration = new Histogram({
      name: "mcpx_sandbox_run_duration_seconds",
      help: "Code-mode script latency, inner calls included.",
      buckets: DURATION_BUCKETS,
      registers,
    });
    const resultTokens = new Counter({
      name: "mcpx_result_tokens_total",
      help: "Estimated tokens of JSON results mcpx re-encoded: as JSON (json) and as sent (sent), by server.",
      labelNames: ["server", "form"] as const,
      registers,
    });
    const saved = new Counter({
      name: "mcpx_result_tokens_saved_total",
      help: "Estimated result tokens the encoding saved (JSON minus sent), by server.",
      labelNames: ["server"] as const,
      registers,
    });
    new Counter({
      name: "mcpx_upstream_restarts_total",
      help: "Times an upstream came back (down, then ready again), by server.",
      labelNames: ["server"] as const,
      registers,
      collect() {
        this.reset();
        for (const [server, n] of tally.restarts) this.inc({ server }, n);
      },
    });

    this.count = (c) => {
      if (c.script) {
        scripts.inc({ outcome: c.outcome });
        scriptDuration.observe(c.seconds);
        return;
      }
      const { server, tool, outcome } = c;
      calls.inc({ server, tool, outcome });
      if (outcome !== "ok") errors.inc({ server, tool, outcome });
      duration.observe({ server, tool }, c.seconds);
      const t = c.compression;
      if (t) {
        resultTokens.inc({ server, form: "json" }, t.jsonTokens);
        resultTokens.inc({ server, form: "sent" }, t.sentTokens);
        saved.inc({ server }, Math.max(0, t.jsonTokens - t.sentTokens));
      }
    };

    new Gauge({
      name: "mcpx_upstream_status",
      help: "1 for each upstream's current status (starting, ready, degraded, down), else 0.",
      labelNames: ["server", "status"] as const,
      registers,
      collect() {
        this.reset();
        for (const s of ctx.registry.servers())
          for (const status of STATUSES)
            this.set({ server: s.name, status }, s.status === status ? 1 : 0);
      },
    });
    new Gauge({
      name: "mcpx_upstream_sessions",
      help: "Open upstream sessions, by server and session policy.",
      labelNames: ["server", "policy"] as const,
      registers,
      collect() {
        this.reset();
        for (const [server, stats] of Object.entries(ctx.registry.poolStats()))
          this.set({ server, policy: stats.policy }, stats.open);
      },
    });
    new Gauge({
      name: "mcpx_catalog_from_cache",
      help: "1 when a server's catalog came from the catalog cache (a cache hit at start), 0 when live.",
      labelNames: ["server"] as const,
      registers,
      collect() {
        this.reset();
        for (const s of ctx.registry.servers())
          if (s.catalogFrom !== undefined)
            this.set({ server: s.name }, s.catalogFrom === "cache" ? 1 : 0);
      },
    });
    new Gauge({
      name: "mcpx_definition_tokens",
      help: "Tokens of tool definitions a client loads, by profile: every tool directly (direct) vs through mcpx (mcpx), as mcpx stats counts them.",
      labelNames: ["profile", "path"] as const,
      registers,
      async collect() {
        this.reset();
        for (const [name, profile] of Object.entries(ctx.config.profiles)) {
          const report = await economy.report(profile);
          this.set({ profile: name, path: "direct" }, report.total.direct);
          this.set({ profile: name, path: "mcpx" }, report.total.mcpx);
        }
      },
    });
  }
}
