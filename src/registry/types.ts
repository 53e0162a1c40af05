/**
 * The registry's contract: what it knows about each upstream (status, health, catalog), as the
 * registry's siblings and the layers above read it. Types only.
 */
import type { PromptDef, ResourceDef, ResourceTemplateDef, ToolDef } from "../types.js";
import type { ServerConfig } from "../config/load.js";
import type { ServerIdentity } from "../upstream/types.js";
import type { ToolNeeds } from "./capability-tools.js";
import type { OptionalMethod } from "./notes.js";

/**
 * starting: discovery under way; ready: answering; degraded: recent health checks failed, not
 * yet `failureThreshold` in a row; down: failed to start or to answer, retried with backoff.
 */
export type ServerStatus = "starting" | "ready" | "degraded" | "down";

/** What health checks learned about a server (see src/health/monitor.ts). */
export interface ServerHealth {
  consecutiveFailures: number;
  /** ms since epoch of the last successful discovery or ping. */
  lastSuccessAt?: number;
  /** Round trip of the last successful ping, in ms. */
  latencyMs?: number;
  /** ms since epoch of the last health check, whatever its outcome. */
  lastCheckAt?: number;
  /** ms since epoch when the server went down. */
  downSince?: number;
  /** ms since epoch of the next reconnect attempt while down. */
  nextRetryAt?: number;
}

/** What the registry knows about one upstream: renderable, no live handles. */
export interface ServerState {
  readonly name: string;
  /** Replaced on reload when only settings changed (same spec). */
  config: ServerConfig;
  status: ServerStatus;
  /** The last error (messages come from the SDK/OS; logs and /healthz redact secrets anyway). */
  error?: string;
  health: ServerHealth;
  identity?: ServerIdentity;
  tools: ToolDef[];
  resources: ResourceDef[];
  resourceTemplates: ResourceTemplateDef[];
  prompts: PromptDef[];
  /** When the catalog of this server was last fetched (ms since epoch). */
  updatedAt?: number;
  /**
   * Where the catalog came from: "cache" when loaded from disk (discovery may still be under way:
   * the server is usable while "starting"), "live" once discovery landed; undefined: no catalog
   * yet (see `awaitsFirstCatalog`).
   */
  catalogFrom?: "live" | "cache";
  /**
   * Optional requests the upstream failed (method → why, redacted): treated as empty or
   * unsupported for this server, which stays up with its tools. Absent when none failed.
   */
  notes?: Partial<Record<OptionalMethod, string>>;
  /** `start: "lazy"` servers only: whether a session (a process, for stdio) of it is open. */
  running?: boolean;
  /**
   * Tools the upstream lists only to a client declaring sampling, elicitation or roots, and
   * which (src/registry/capability-tools.ts). Absent: none, or not looked at yet.
   */
  needs?: ToolNeeds;
  /**
   * Definitions that differ from their pins, are new on a pinned server, were removed, or hold
   * suspicious text (src/registry/trust.ts). Absent: nothing to say (or no pins kept).
   */
  trust?: TrustReport;
}

/** One tool or prompt definition the pins have something to say about. */
export interface TrustFinding {
  kind: "tool" | "prompt";
  name: string;
  /**
   * changed: differs from its pin; new: not pinned, on a server that is (or whose pin file was
   * rebuilt); removed: pinned, no longer listed (noted, never held). Absent: only suspicious.
   */
  change?: "changed" | "new" | "removed";
  /** changed: the pinned fields that differ (description, inputSchema, …). */
  fields?: string[];
  /** The suspicious-text rules (src/registry/trust-rules.ts) it breaks: why, in words. */
  suspicious?: string[];
  /** The hash of the definition as served now (not for removed ones). */
  hash?: string;
  /** The definition as served now (not for removed ones), so views can tell who may see it. */
  def?: ToolDef | PromptDef;
}

/** What the pins say about one server, and whether its flagged definitions are held. */
export interface TrustReport {
  findings: TrustFinding[];
  /** Flagged tools and prompts are out of the catalog (trust `hold` for whoever reads this). */
  held: boolean;
  /** The config file, as `mcpx trust diff|approve` take it. */
  config: string;
}

export type { OptionalMethod } from "./notes.js";

/** The catalog part of a state, as one discovery produces it. */
export type Catalog = Pick<
  ServerState,
  "identity" | "tools" | "resources" | "resourceTemplates" | "prompts" | "notes"
>;
