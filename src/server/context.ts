import type { LoggingLevel } from "@modelcontextprotocol/server";
import type { Config } from "../config/load.js";
import type { SchemaCompiler } from "../compression/schema.js";
import type { CallContext, CallSpan } from "../executor/context.js";
import type { Executor } from "../executor/executor.js";
import type { Logger } from "../logger.js";
import type { ClientChannel } from "../upstream/channel.js";
import type { LogMessage } from "../upstream/types.js";
import type { Registry } from "../registry/registry.js";
import type { CatalogView, CatalogViews } from "../registry/view.js";
import type { Era, JsonSchema, ToolAnnotations, ToolResult } from "../types.js";
import type { ClientSubscriptions } from "./client-subscriptions.js";
import type { PendingCalls } from "./pending.js";
import type { SharedState } from "../shared/types.js";

/** Everything a meta-tool may use. Built once per proxy in createProxy(). */
export interface ProxyContext {
  /** The config in force; replaced as a whole when a valid edit is reloaded. */
  config: Config;
  logger: Logger;
  registry: Registry;
  executor: Executor;
  schemas: SchemaCompiler;
  /** The catalog per profile; meta-tools read the request's view, never the registry. */
  views: CatalogViews;
  /** Calls of 2026-07-28 clients waiting for their client's input (this replica's). */
  pending: PendingCalls;
  /** State shared with other replicas (Redis) or kept in this process; its status for /healthz. */
  shared?: SharedState;
}

/** Per-request inputs from the downstream client. */
export interface RequestContext {
  era: Era;
  /** Who is asking, resolved for this request (see mcp-server.ts for the order). */
  caller: string;
  /**
   * The downstream client: its stdio connection or 2025-era HTTP session, else (2026-07-28, no
   * session) its caller. Keys its upstream sessions under the `client` policy.
   */
  clientKey?: string;
  /** What the caller's profile shows: the only catalog a meta-tool may answer from. */
  view: CatalogView;
  signal: AbortSignal;
  /** The controller of `signal`, where this request made it (a `call`'s own, executor/tasks.ts). */
  controller?: AbortController;
  /** Forward an upstream log message to the client (filtered by the level it asked for). */
  sendLog?: (message: LogMessage) => void;
  /** The least severe log level the client wants (what upstreams are asked to send). */
  logLevel?: LogMessage["level"];
  /** Forward progress to the client; present only when the client asked for progress. */
  sendProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** The way back to the client for what an upstream asks it mid-call (see call-channel.ts). */
  client?: ClientChannel;
  /** The request runs as an MCP Task (server/tasks.ts): no `taskAfter` handle inside it. */
  inTask?: boolean;
  /** That task's ttl, and where an upstream task's statuses go (CallContext.task). */
  task?: CallContext["task"];
  /** The client's W3C traceparent (`_meta.traceparent`, else the HTTP header), normalized. */
  traceparent?: string;
  /** The request's span while traces are on (`describe`, `resources`: mcp-server.ts). */
  span?: CallSpan;
}

/** A meta-tool: its definition as data plus a handler. One file each in src/server/tools/. */
export interface MetaTool {
  name: string;
  /** Descriptions may depend on the caller's catalog (describe carries it). */
  description(view: CatalogView): string;
  /** A function when it depends on the caller's profile (call's `script` under code mode). */
  inputSchema: JsonSchema | ((view: CatalogView) => JsonSchema);
  annotations?: ToolAnnotations;
  handle(
    args: Record<string, unknown>,
    ctx: ProxyContext,
    req: RequestContext,
  ): Promise<ToolResult>;
}

/**
 * What one downstream connection (stdio) or 2025-era HTTP session remembers between requests.
 * 2026-07-28 requests get none: nothing is kept per client between them.
 */
export interface SessionMemory {
  /** The level set with logging/setLevel (2025 era). */
  level?: LoggingLevel;
  /** The describe description the client last listed, and for which caller. */
  shown?: string;
  caller?: string;
  /** Versions of the prompt and resource lists the client holds (see handlers/subscriptions.ts). */
  lists?: { prompts: string; resources: string };
  /** The resources it subscribed to. */
  subscriptions?: ClientSubscriptions;
  /** Told of each resources/subscribe (true) and unsubscribe it answered (replicas share them). */
  onSubscription?: (uri: string, subscribed: boolean) => Promise<void>;
  /**
   * Where its tasks' notifications/tasks/status go when no request can carry them (2025-era
   * HTTP: the session's GET stream, legacy-task-status.ts); absent: the connection (stdio).
   */
  taskStatus?: (task: Record<string, unknown>) => Promise<void>;
}
