/**
 * The upstream contract: what the registry, executor and server see of one upstream (its
 * sessions, the factory that opens them, the era it speaks, how a request failed). Types only:
 * the factory is in factory.ts, the SDK session in session.ts.
 */
import type {
  CompleteParams,
  CompleteResult,
  Era,
  PromptDef,
  PromptResult,
  ReadResourceResult,
  ResourceDef,
  ResourceTemplateDef,
  ToolDef,
  ToolResult,
} from "../types.js";
import type { ClientChannel } from "./channel.js";

export type ListKind = "tools" | "resources" | "prompts";

/** MCP log levels, least severe first. */
export type LogLevel =
  "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/** An upstream's notifications/message: its level, optional logger name, and data. */
export interface LogMessage {
  level: LogLevel;
  logger?: string;
  data: unknown;
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options forwarded on every proxied request: abort signal, timeout, progress, log level. */
export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /**
   * The least severe log level the caller wants from this request. Modern upstreams send log
   * messages only for requests that name one; legacy upstreams ignore it.
   */
  logLevel?: LogLevel;
  /**
   * The client the request is made for (tools/call, resources/read): what the upstream asks
   * meanwhile (roots, elicitation, sampling) is relayed to it; for a call, the timeout stops
   * while it is being asked.
   */
  client?: ClientChannel;
  /**
   * W3C traceparent of the span this request belongs to: sent as `_meta.traceparent`, and as
   * the `traceparent` header to HTTP upstreams (tools/call, resources/read, prompts/get,
   * completion/complete).
   */
  traceparent?: string;
  /**
   * tools/call that may run as a task (upstream/tasks.ts), its statuses heard by `onStatus`: on
   * a 2025-11-25 upstream that declares tasks for tools/call, when the tool's
   * `execution.taskSupport` allows (`toolRunsTasks`); on a 2026-07-28 upstream that declares the
   * tasks extension, whenever it answers with a task. Otherwise a plain call.
   */
  task?: UpstreamTaskWish;
}

/** A task's status as MCP Tasks name them. */
export type UpstreamTaskStatus =
  "working" | "input_required" | "completed" | "failed" | "cancelled";

export interface UpstreamTaskWish {
  /** The tool's `execution.taskSupport` is optional or required (what 2025-11-25 asks). */
  toolRunsTasks: boolean;
  /** The ttl asked of the upstream, in ms; absent: the upstream's default. */
  ttlMs?: number;
  /** Each status the upstream task reports before it ends (working, input_required). */
  onStatus?: (status: UpstreamTaskStatus, message?: string) => void;
  /**
   * A span for one follow-up request (tasks/get, tasks/result, tasks/update, tasks/cancel),
   * under the call's upstream span; absent when traces are off.
   */
  trace?: (method: string) => UpstreamSpan;
}

/** A span of one upstream request: its traceparent to send, and its end. */
export interface UpstreamSpan {
  readonly traceparent: string;
  end(outcome: "ok" | "failed" | "cancelled"): void;
}

/** The protocol era an upstream speaks (src/types.ts: one `Era` for both sides). */
export type { Era };

/** What an upstream said about itself at initialize (legacy) or server/discover (modern). */
export interface ServerIdentity {
  name?: string;
  version?: string;
  title?: string;
  instructions?: string;
  capabilities: Record<string, unknown>;
  /** Set by every session; optional for identities built by hand (tests, placeholders). */
  era?: Era;
  /** The protocol version negotiated with it. */
  protocolVersion?: string;
}

/** An open subscriptions/listen stream (modern upstreams): list changes arrive while it lasts. */
export interface ListSubscription {
  /** Settles when the stream ends: "local" when closed by us, else the upstream ended it. */
  readonly ended: Promise<"local" | "graceful" | "remote">;
  close(): Promise<void>;
}

/** One initialized MCP session with an upstream. */
export interface UpstreamSession {
  readonly identity: ServerIdentity;
  readonly era: Era;
  readonly protocolVersion: string | undefined;
  /**
   * True for a modern upstream over HTTP: no state on the server, opening and closing the
   * session cost nothing on the wire, every request stands alone.
   */
  readonly stateless: boolean;
  /** The child's pid for stdio upstreams. */
  readonly pid: number | undefined;
  readonly closed: boolean;
  listTools(options: RequestOptions): Promise<ToolDef[]>;
  listResources(options: RequestOptions): Promise<ResourceDef[]>;
  listResourceTemplates(options: RequestOptions): Promise<ResourceTemplateDef[]>;
  listPrompts(options: RequestOptions): Promise<PromptDef[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<ToolResult>;
  readResource(uri: string, options: RequestOptions): Promise<ReadResourceResult>;
  /** prompts/get with the upstream's own prompt name; the result passes through unchanged. */
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options: RequestOptions,
  ): Promise<PromptResult>;
  /** completion/complete with the upstream's own ref (prompt name or template). */
  complete(params: CompleteParams, options: RequestOptions): Promise<CompleteResult>;
  /** Legacy upstreams: resources/subscribe on this session (modern ones use listen). */
  subscribeResource(uri: string, options: RequestOptions): Promise<void>;
  unsubscribeResource(uri: string, options: RequestOptions): Promise<void>;
  /** Called with the URI of each notifications/resources/updated the upstream sends. */
  onResourceUpdated(handler: (uri: string) => void): void;
  /** A health round trip: ping (legacy) or server/discover (modern, which has no ping). */
  ping(options: RequestOptions): Promise<void>;
  /** Called when the upstream announces a changed list. */
  onListChanged(handler: (kind: ListKind) => void): void;
  /**
   * Modern upstreams announce list changes only on a subscriptions/listen stream: open one for
   * the lists the upstream says change, and for updates of `resources` when it offers resource
   * subscriptions, feeding the onListChanged and onResourceUpdated handlers. Undefined for legacy
   * upstreams (they announce unasked) and when there is nothing to listen for.
   */
  listen(
    options: RequestOptions,
    resources?: readonly string[],
  ): Promise<ListSubscription | undefined>;
  /** Receive the upstream's log messages until the returned function is called. */
  onLog(handler: (message: LogMessage) => void): () => void;
  /** Called once when the session ends, whoever ended it, unless the returned function was. */
  onClosed(handler: () => void): () => void;
  close(): Promise<void>;
}

/**
 * Opens a fresh, initialized session with one upstream. Aborting `signal` while it opens tears
 * the attempt down (a spawned process is killed) and rejects. `forgetEra`, when present, drops
 * the era learned so far: the next session probes again (a server that was down may have been
 * upgraded or replaced).
 */
export type ClientFactory = ((
  signal?: AbortSignal,
  open?: SessionDeclares,
) => Promise<UpstreamSession>) & {
  forgetEra?: () => void;
  /** It honours `open.capabilities` (an injected connector may not: nothing to look with). */
  declares?: true;
};

/**
 * What a session opened for a look declares instead of mcpx's usual client capabilities (which
 * tools an upstream lists to a client without sampling, elicitation or roots:
 * src/registry/capability-tools.ts). Absent: the usual ones.
 */
export interface SessionDeclares {
  capabilities?: Record<string, unknown>;
}

/** What a failed upstream request means for the caller, without SDK error codes leaking out. */
export interface UpstreamFailure {
  /** timeout: no answer in time; closed: the connection or process ended; other: anything else. */
  kind: "timeout" | "closed" | "other";
  message: string;
  /** The JSON-RPC error the upstream answered with, when it answered with one. */
  rpc?: { code: number; data?: unknown };
}
