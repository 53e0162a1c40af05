/**
 * Prometheus metrics of one proxy, on a prom-client Registry of its own (never the global
 * default one). Counters and histograms follow the executor's call events; gauges of upstream
 * status, sessions, catalogs and token economy are read from the registry when scraped. Nothing
 * on the call path waits for them: a listener does a few map updates and returns.
 */
import { Counter, Gauge, Histogram, Registry as PromRegistry } from "prom-client";
import type { TokenEconomy } from "../dashboard/economy.js";
import type { CallEnded } from "../executor/events.js";
import type { ServerStatus } from "../registry/types.js";
import type { ProxyContext } from "../server/context.js";

const STATUSES: readonly ServerStatus[] = ["starting", "ready", "degraded", "down"];

/** Seconds: from a cached answer (~1 ms) to the default call timeout. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class ProxyMetrics {
  readonly registry = new PromRegistry();
  private readonly stops: (() => void)[] = [];
  /** Each server's last status, to count its recoveries (down → ready). */
  private readonly lastStatus = new Map<string, ServerStatus>();

  constructor(
    private readonly ctx: ProxyContext,
    economy: TokenEconomy,
  ) {
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
    const inFlight = new Gauge({
      name: "mcpx_calls_in_flight",
      help: "Tool calls and scripts running now.",
      registers,
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
    const restarts = new Counter({
      name: "mcpx_upstream_restarts_total",
      help: "Times an upstream came back (down, then ready again), by server.",
      labelNames: ["server"] as const,
      registers,
    });

    const known = (server: string | undefined) =>
      server !== undefined && ctx.registry.server(server) !== undefined ? server : "";
    this.stops.push(
      ctx.executor.events.on({
        started: () => inFlight.inc(),
        ended: (e: CallEnded) => {
          inFlight.dec();
          const seconds = e.durationMs / 1000;
          if (e.ref === "script" && e.server === undefined) {
            scripts.inc({ outcome: e.outcome });
            scriptDuration.observe(seconds);
            return;
          }
          // Only names mcpx knows become labels: a client's made-up refs must not grow series.
          const server = known(e.server);
          const tool = e.outcome === "refused" || server === "" ? "" : e.tool;
          calls.inc({ server, tool, outcome: e.outcome });
          if (e.outcome !== "ok") errors.inc({ server, tool, outcome: e.outcome });
          duration.observe({ server, tool }, seconds);
          const c = e.compression;
          if (c) {
            resultTokens.inc({ server, form: "json" }, c.jsonTokens);
            resultTokens.inc({ server, form: "sent" }, c.sentTokens);
            saved.inc({ server }, Math.max(0, c.jsonTokens - c.sentTokens));
          }
        },
      }),
    );
    this.stops.push(
      ctx.registry.onChange((name) => {
        economy.invalidate();
        const status = ctx.registry.server(name)?.status;
        if (status === undefined) return;
        if (this.lastStatus.get(name) === "down" && status === "ready")
          restarts.inc({ server: name });
        this.lastStatus.set(name, status);
      }),
    );
    this.stops.push(ctx.views.onChange(() => economy.invalidate()));

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

  /**
   * The exposition text. `visible`: keep only the series of servers a viewer may see (under
   * auth, its profile's); series without a server label stay.
   */
  async text(visible?: (server: string) => boolean): Promise<string> {
    const text = await this.registry.metrics();
    if (!visible) return text;
    return text
      .split("\n")
      .filter((line) => {
        if (line.startsWith("#")) return true;
        const m = /[{,]server="((?:[^"\\]|\\.)*)"/.exec(line);
        return !m || m[1] === "" || visible(unescapeLabel(m[1] ?? ""));
      })
      .join("\n");
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.registry.clear();
  }
}

function unescapeLabel(value: string): string {
  return value.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
}
