/**
 * The executor's contract with its siblings and callers: what a request brings to a call, what a
 * call asks beyond its tool, and how it ended. Every executor file and the layers above read these
 * types here, so none of them imports executor.ts back.
 */
import type { CatalogSource } from "../registry/view.js";
import type { ClientChannel } from "../upstream/channel.js";
import type { LogLevel, LogMessage, Progress } from "../upstream/types.js";
import type { Era } from "../types.js";

/**
 * Traces (src/telemetry/tracing.ts): the executor opens a span for each downstream call and
 * for each upstream request it makes, and sends the upstream span's `traceparent` upstream.
 * Absent unless tracing is on, so calls pay nothing for it otherwise.
 */
export interface CallTracer {
  /** A span under `parent` (a W3C traceparent), or a new trace's root without one. */
  start(name: string, kind: "server" | "client", parent: string | undefined): CallSpan;
}

export interface CallSpan {
  /** This span as a traceparent, for requests it causes. */
  readonly traceparent: string;
  /** End it with its attributes: never arguments or result values. */
  end(attributes: SpanAttributes): void;
}

export interface SpanAttributes {
  /** The MCP method of the request (`mcp.method.name`); tools/call when absent. */
  method?: string;
  server?: string;
  tool?: string;
  caller?: string;
  profile?: string;
  era?: Era;
  outcome: CallOutcome;
  /** Estimated tokens of the result as sent, and what its encoding saved. */
  resultTokens?: number;
  savedTokens?: number;
}

/** What a downstream request brings to a trace. */
export interface TraceInput {
  /** The client's traceparent (HTTP header or `_meta.traceparent`), normalized. */
  traceparent?: string;
  era?: Era;
  profile?: string;
}

/** What the downstream request brings to a call: who asks, cancellation and progress. */
export interface CallContext {
  /** The caller (client) the call is made for; picks the session under the "caller" policy. */
  caller?: string;
  /**
   * The downstream client (connection, 2025-era session, or a 2026-07-28 client's caller):
   * picks the session under the "client" policy, and is told when a server it used restarted.
   */
  clientKey?: string;
  /**
   * What the caller may see (its profile's view). Anything outside it is answered exactly like
   * a tool or server that does not exist. Default: the whole registry.
   */
  view?: CatalogSource;
  signal?: AbortSignal;
  /**
   * The controller of `signal`, where the request made it (a `call`'s own, executor/tasks.ts):
   * the drain aborts through it instead of a controller of its own per call. Checked: a context
   * copied with another signal is tracked as before.
   */
  controller?: AbortController;
  onProgress?: (progress: Progress) => void;
  /** Upstream log messages (notifications/message) sent while the call runs. */
  onLog?: (message: LogMessage) => void;
  /**
   * The least severe level `onLog` wants. Modern upstreams send log messages only when the
   * request names a level: without this one, debug is asked for and `onLog` filters.
   */
  logLevel?: LogLevel;
  /**
   * The calling client: what an upstream asks it mid-call (roots, elicitation, sampling) is
   * relayed here, and `confirm` asks the person through it. Without one, upstream requests are
   * refused and confirmed tools do not run.
   */
  client?: ClientChannel;
  /**
   * Inner calls of a script: a line the script's answer must carry (a server restarted and
   * the client's state there is gone), since the inner result itself is the script's data.
   */
  onNotice?: (line: string) => void;
  /** The call this one runs inside (a code-mode script), named in call events. */
  parentId?: number;
  /**
   * Set on the inner calls of a script: the id its own log line carries. Such a call is still
   * taken while mcpx drains, since the script that makes it was accepted before.
   */
  parentCallId?: string;
  /** The downstream request's trace inputs (see CallTracer). */
  trace?: TraceInput;
  /** The span this call runs under (a script's inner calls: the script's); set by the executor. */
  span?: CallSpan;
  /**
   * The call runs as an MCP Task of its client: statuses an upstream task reports before it
   * ends (mirrored into mcpx's task), and the ttl the client asked for.
   */
  task?: {
    ttlMs?: number;
    onStatus?: (status: "working" | "input_required", message?: string) => void;
  };
}

/** What a `call` asks beyond the tool and its arguments. */
export interface CallOptions {
  /** A JMESPath expression applied to the result before it is encoded. */
  select?: string;
  /** How the call's input was read (see normalize.ts), returned in the answer's `_meta`. */
  notes?: readonly string[];
  /**
   * The upstream's result as it came: no select, budget or encoding. A script's inner calls
   * take it, so the script sees whole values; its own value is shaped instead.
   */
  raw?: boolean;
}

/**
 * How a call ended, as logged: ok; isError (the upstream answered with an error result);
 * refused (unknown or hidden tool, bad arguments; the upstream was not touched); declined (a
 * tool under `confirm` the person did not allow); busy; failed.
 */
export type CallOutcome =
  "ok" | "isError" | "refused" | "declined" | "busy" | "failed" | "cancelled";

/** Why a request got no upstream session, as the client and the log see it. */
export interface NoSession {
  text: string;
  outcome: CallOutcome;
  error?: string;
}
