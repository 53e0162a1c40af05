import { signInCommandOf } from "../errors.js";
import type { PoolStats } from "../registry/pool.js";
import type { ServerStatus } from "../registry/registry.js";
import type { Registry } from "../registry/registry.js";
import { findingText } from "../registry/trust.js";
import type { SharedStatus } from "../shared/types.js";

export interface ServerReport {
  /** "needs sign-in": an OAuth-protected server without a usable sign-in (never "down"). */
  status: ServerStatus | "needs sign-in";
  /** With "needs sign-in": the command that signs in (`mcpx login <config> <server>`). */
  signIn?: string;
  /** The protocol era the upstream speaks and the version negotiated, once it was reached. */
  era?: "legacy" | "modern";
  protocolVersion?: string;
  error?: string;
  /**
   * Optional requests the server failed (method → why): treated as empty or unsupported; the
   * server stays up with its tools.
   */
  notes?: Record<string, string>;
  tools: number;
  /**
   * What the trust pins say (src/registry/trust.ts): each finding as `kind name: what`, and
   * whether flagged ones are held (server's own mode; a profile may hold more).
   */
  trust?: { held: boolean; findings: string[] };
  consecutiveFailures: number;
  lastSuccessAt?: string;
  latencyMs?: number;
  downSince?: string;
  nextRetryAt?: string;
  sessions?: PoolStats;
  stderrLines?: { total: number; dropped: number };
}

export interface HealthReport {
  /**
   * ok: every server ready (and Redis reachable, with `redis`); degraded: mcpx serves, some
   * servers are not ready or the shared state is unreachable.
   */
  status: "ok" | "degraded";
  servers: Record<string, ServerReport>;
  /** Where shared state lives (issue 31) and whether it is reachable; with `redis` only. */
  shared?: SharedStatus;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/**
 * Status of every server as plain data (for /healthz, and any page that renders status).
 * Error texts come from the registry, which stores them redacted.
 */
export function healthReport(registry: Registry, shared?: SharedStatus): HealthReport {
  const servers: Record<string, ServerReport> = {};
  const stats = registry.poolStats();
  for (const s of registry.servers()) {
    const h = s.health;
    const stderrLines = registry.stderrCounts(s.name);
    const sessions = stats[s.name];
    const signIn = s.status === "down" ? signInCommandOf(s.error) : undefined;
    servers[s.name] = {
      status: signIn ? "needs sign-in" : s.status,
      ...(signIn && { signIn }),
      ...(s.identity?.era !== undefined && { era: s.identity.era }),
      ...(s.identity?.protocolVersion !== undefined && {
        protocolVersion: s.identity.protocolVersion,
      }),
      ...(s.error !== undefined && s.status !== "ready" && { error: s.error }),
      ...(s.notes && { notes: { ...s.notes } }),
      tools: s.tools.length,
      ...(s.trust && {
        trust: {
          held: s.trust.held,
          findings: s.trust.findings.map((f) => `${f.kind} ${f.name}: ${findingText(f)}`),
        },
      }),
      consecutiveFailures: h.consecutiveFailures,
      ...(h.lastSuccessAt !== undefined && { lastSuccessAt: iso(h.lastSuccessAt) }),
      ...(h.latencyMs !== undefined && { latencyMs: Math.round(h.latencyMs * 10) / 10 }),
      ...(s.status === "down" && h.downSince !== undefined && { downSince: iso(h.downSince) }),
      ...(s.status === "down" &&
        h.nextRetryAt !== undefined && { nextRetryAt: iso(h.nextRetryAt) }),
      ...(sessions && { sessions }),
      ...(stderrLines && stderrLines.total > 0 && { stderrLines }),
    };
  }
  const allReady = Object.values(servers).every((s) => s.status === "ready");
  const redis = shared?.store === "redis" ? shared : undefined;
  return {
    status: allReady && (redis?.reachable ?? true) ? "ok" : "degraded",
    servers,
    ...(redis && { shared: redis }),
  };
}
