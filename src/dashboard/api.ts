/**
 * The JSON documents of the dashboard's API, each for one viewer: the local user sees every
 * server, call and log line; a token holder sees only what their caller's profile shows and
 * their own calls. Secrets never appear: env and header values are masked, URLs lose their
 * credentials and query values, and every text passes the logger's redaction.
 */
import { DEFAULT_PROFILE, type Profile, type UpstreamSpec } from "../config/load.js";
import { maskedUrl } from "../config/secrets.js";
import { firstSentence, signature } from "../compression/signature.js";
import { healthReport, type ServerReport } from "../health/status.js";
import type { ServerState } from "../registry/registry.js";
import { CatalogView } from "../registry/view.js";
import { serverSummary } from "../server/catalog.js";
import type { ProxyContext } from "../server/context.js";
import { describeTool } from "../server/tools/describe.js";
import { VERSION } from "../version.js";
import type { Viewer } from "./auth.js";
import type { TokenEconomy } from "./economy.js";
import { percentile } from "../percentile.js";
import type { DashboardState, LogRecord } from "./state.js";
import type { HubEvent } from "./stream.js";

/** The local user's view: every server and every tool the upstreams list. */
const EVERYTHING: Profile = {
  name: "(all servers)",
  servers: ["*"],
  tools: { deny: [] },
  readOnly: false,
};

const MASK = "***";

export interface ServerSummary extends ServerReport {
  name: string;
  description: string;
  transport: UpstreamSpec["transport"];
  policy: ServerState["config"]["session"]["policy"];
  /** ms since epoch since when the server has been up (ready or degraded). */
  readySince?: number;
  counts: { tools: number; prompts: number; resources: number; templates: number };
}

export class DashboardApi {
  /** Views per profile, dropped whenever the catalog or the config changes. */
  private readonly views = new Map<Profile, CatalogView>();

  constructor(
    private readonly ctx: ProxyContext,
    private readonly state: DashboardState,
    private readonly economy: TokenEconomy,
  ) {}

  /** The catalog or the config changed. */
  invalidate(): void {
    this.views.clear();
    this.economy.invalidate();
  }

  /** The profile a viewer sees through; the local user's token economy is the default's. */
  profileOf(viewer: Viewer): Profile {
    return viewer.caller === undefined ? EVERYTHING : this.ctx.views.profileFor(viewer.caller);
  }

  viewOf(viewer: Viewer): CatalogView {
    const profile = this.profileOf(viewer);
    let view = this.views.get(profile);
    if (!view) this.views.set(profile, (view = new CatalogView(profile, this.ctx.registry)));
    return view;
  }

  /** `/api/status`: mcpx, the viewer, every visible server, callers and profiles. */
  status(viewer: Viewer) {
    const shared = this.ctx.shared?.status();
    const report = healthReport(this.ctx.registry, shared);
    const servers = this.viewOf(viewer)
      .servers()
      .map((s) => this.summary(s, report.servers[s.name]));
    return {
      mcpx: {
        version: VERSION,
        startedAt: this.state.startedAt,
        ...(shared?.store === "redis" && { shared }),
      },
      viewer: {
        caller: viewer.caller ?? null,
        profile: viewer.caller === undefined ? null : this.profileOf(viewer).name,
        auth: this.ctx.config.auth !== undefined,
      },
      status: servers.every((s) => s.status === "ready") ? "ok" : "degraded",
      servers,
      ...this.callers(viewer),
    };
  }

  /** `/api/servers/:name`: one server with its tools, prompts and resources; undefined if hidden. */
  async server(viewer: Viewer, name: string) {
    const s = this.viewOf(viewer).server(name);
    if (!s) return undefined;
    const tokens = await this.economy.definitionTokens(s.tools);
    return {
      ...this.summary(s, healthReport(this.ctx.registry).servers[name]),
      target: this.target(s.config.spec),
      tools: s.tools.map((t, i) => ({
        name: t.name,
        ...(t.title !== undefined && { title: this.redact(t.title) }),
        signature: signature(t.name, t.inputSchema),
        description: this.redact(firstSentence(t.description)),
        tokens: tokens[i],
        annotations: t.annotations ?? {},
      })),
      prompts: s.prompts.map((p) => ({
        name: p.name,
        description: this.redact(p.description ?? ""),
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          required: a.required === true,
          description: this.redact(a.description ?? ""),
        })),
      })),
      resources: s.resources.map((r) => ({
        uri: this.redact(r.uri),
        name: r.name,
        ...(r.mimeType !== undefined && { mimeType: r.mimeType }),
        description: this.redact(r.description ?? ""),
      })),
      templates: s.resourceTemplates.map((r) => ({
        uriTemplate: this.redact(r.uriTemplate),
        name: r.name,
        description: this.redact(r.description ?? ""),
      })),
    };
  }

  /** `/api/calls`: recent calls (newest first) and per-server durations and compression. */
  calls(viewer: Viewer, limit = 200) {
    const visible = new Set(
      this.viewOf(viewer)
        .servers()
        .map((s) => s.name),
    );
    const mine = this.state
      .recentCalls()
      .filter((c) => viewer.caller === undefined || c.caller === viewer.caller);
    const perServer = [...visible].map((server) => {
      // The local user gets each server's long record; a token holder, their own recent calls.
      const durations =
        viewer.caller === undefined
          ? this.state.durationsOf(server)
          : mine.flatMap((c) =>
              c.server === server && c.durationMs !== undefined && c.outcome !== "refused"
                ? [c.durationMs]
                : [],
            );
      const round = (n: number | undefined) => (n === undefined ? null : Math.round(n * 10) / 10);
      return {
        server,
        calls: durations.length,
        p50: round(percentile(durations, 50)),
        p95: round(percentile(durations, 95)),
        compression: this.compression(viewer, server, mine),
      };
    });
    return {
      recent: mine.slice(0, limit).map(({ compression: _c, ...c }) => c),
      perServer,
    };
  }

  /** `/api/logs`: recent lines, oldest first, optionally of one source and at or above a level. */
  logs(viewer: Viewer, source?: string, level?: string) {
    const rank = LEVELS.indexOf(level as (typeof LEVELS)[number]);
    return {
      lines: this.state
        .recentLogs()
        .filter(
          (l) =>
            this.logVisible(viewer, l) &&
            (source === undefined || source === "" || l.source === source) &&
            (rank < 0 || LEVELS.indexOf(l.level) >= rank),
        ),
    };
  }

  /** `/api/economy`: what `mcpx stats` reports, plus what result compression saved so far. */
  async tokenEconomy(viewer: Viewer) {
    const profile =
      viewer.caller === undefined
        ? this.ctx.config.profiles[DEFAULT_PROFILE]!
        : this.profileOf(viewer);
    const report = await this.economy.report(profile);
    const calls = this.calls(viewer);
    return {
      ...report,
      results: calls.perServer.map((p) => ({ server: p.server, ...p.compression })),
    };
  }

  /** `/api/search?q=`: the same ranking as describe({query}), over the viewer's tools. */
  search(viewer: Viewer, query: string, limit = 20) {
    const view = this.viewOf(viewer);
    return {
      query,
      hits: view.search(query, limit).flatMap((h) => {
        const tool = view.server(h.server)?.tools.find((t) => t.name === h.tool);
        return tool
          ? [
              {
                server: h.server,
                tool: h.tool,
                signature: signature(tool.name, tool.inputSchema),
                description: this.redact(firstSentence(tool.description)),
              },
            ]
          : [];
      }),
    };
  }

  /** `/api/describe?name=`: exactly what describe(name) answers the viewer's caller. */
  async describe(viewer: Viewer, name: string, signal: AbortSignal) {
    const result = await describeTool.handle({ method: name }, this.ctx, {
      era: "modern",
      caller: viewer.caller ?? "default",
      view: this.viewOf(viewer),
      signal,
    });
    const text = result.content.map((b) => (typeof b.text === "string" ? b.text : "")).join("\n");
    return { name, text, isError: result.isError === true };
  }

  /** Which live events a viewer's stream carries. */
  visible(viewer: Viewer, event: HubEvent): boolean {
    if (event.type === "log") return this.logVisible(viewer, event.data as LogRecord);
    return viewer.caller === undefined || event.caller === viewer.caller;
  }

  private logVisible(viewer: Viewer, line: LogRecord): boolean {
    if (viewer.caller === undefined) return true;
    // A token holder: their visible upstreams' lines, and lines about their own calls.
    if (line.caller !== undefined) return line.caller === viewer.caller;
    return line.source !== "mcpx" && this.viewOf(viewer).server(line.source) !== undefined;
  }

  private callers(viewer: Viewer) {
    const seen = this.state
      .callersSeen()
      .filter((c) => viewer.caller === undefined || c.caller === viewer.caller)
      .map((c) => ({ ...c, profile: this.ctx.views.profileFor(c.caller).name }));
    const profiles = Object.values(this.ctx.config.profiles)
      .filter((p) => viewer.caller === undefined || p === this.profileOf(viewer))
      .map((p) => {
        const servers = new CatalogView(p, this.ctx.registry).servers();
        return {
          name: p.name,
          readOnly: p.readOnly,
          servers: servers.map((s) => ({ name: s.name, tools: s.tools.length })),
        };
      });
    return { callers: seen, profiles };
  }

  private compression(
    viewer: Viewer,
    server: string,
    mine: ReturnType<DashboardState["recentCalls"]>,
  ) {
    let c = viewer.caller === undefined ? this.state.compressionOf(server) : undefined;
    if (viewer.caller !== undefined) {
      c = { results: 0, jsonTokens: 0, sentTokens: 0 };
      for (const call of mine) {
        if (call.server !== server || !call.compression) continue;
        c.results += 1;
        c.jsonTokens += call.compression.jsonTokens;
        c.sentTokens += call.compression.sentTokens;
      }
    }
    const { results = 0, jsonTokens = 0, sentTokens = 0 } = c ?? {};
    return { results, jsonTokens, sentTokens, saved: jsonTokens - sentTokens };
  }

  private summary(s: ServerState, report: ServerReport | undefined): ServerSummary {
    const readySince = this.state.readyAt(s.name);
    return {
      name: s.name,
      description: this.redact(serverSummary(s)),
      ...(report ?? {
        status: s.status,
        tools: s.tools.length,
        consecutiveFailures: s.health.consecutiveFailures,
      }),
      ...(report?.error !== undefined && { error: this.redact(report.error) }),
      ...(report?.notes !== undefined && {
        notes: Object.fromEntries(
          Object.entries(report.notes).map(([method, why]) => [method, this.redact(why)]),
        ),
      }),
      transport: s.config.spec.transport,
      policy: s.config.session.policy,
      ...(readySince !== undefined && { readySince }),
      counts: {
        tools: s.tools.length,
        prompts: s.prompts.length,
        resources: s.resources.length,
        templates: s.resourceTemplates.length,
      },
    };
  }

  /** How the server is reached, with every value that may be a secret masked. */
  private target(spec: UpstreamSpec) {
    switch (spec.transport) {
      case "stdio":
        return {
          transport: spec.transport,
          command: this.redact(spec.command),
          args: spec.args.map((a) => this.redact(a)),
          env: Object.fromEntries(Object.keys(spec.env).map((k) => [k, MASK])),
          ...(spec.cwd !== undefined && { cwd: this.redact(spec.cwd) }),
          inheritEnv: spec.inheritEnv,
        };
      case "http":
      case "sse":
        return {
          transport: spec.transport,
          url: this.redact(maskedUrl(spec.url)),
          headers: Object.fromEntries(Object.keys(spec.headers).map((k) => [k, MASK])),
        };
      default:
        return spec satisfies never;
    }
  }

  private redact(text: string): string {
    return this.ctx.logger.redact(text);
  }
}

const LEVELS = ["debug", "info", "warn", "error"] as const;
