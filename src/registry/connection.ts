/**
 * The upstream connection: an initialized SDK client session behind a small interface, so the
 * registry and executor never touch the SDK. Imports the SDK (see eslint.config.js).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import {
  CallToolResultSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type {
  PromptDef,
  ReadResourceResult,
  ResourceDef,
  ResourceTemplateDef,
  ToolDef,
  ToolResult,
} from "../types.js";
import { VERSION } from "../version.js";
import type { StderrRing } from "./stderr.js";
import { remoteFailure, STDERR_LINES_IN_ERROR, stdioFailure } from "./failure.js";
import { createRemoteTransport, ProcessTransport, type ChildTracker } from "./transport.js";

export type ListKind = "tools" | "resources" | "prompts";

/** An upstream's notifications/message: its level, optional logger name, and data. */
export interface LogMessage {
  level: "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";
  logger?: string;
  data: unknown;
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options forwarded on every proxied request: abort signal, timeout, progress. */
export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

/** What an upstream said about itself at initialize. */
export interface ServerIdentity {
  name?: string;
  version?: string;
  title?: string;
  instructions?: string;
  capabilities: Record<string, unknown>;
}

/** One initialized MCP session with an upstream. */
export interface UpstreamSession {
  readonly identity: ServerIdentity;
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
  ping(options: RequestOptions): Promise<void>;
  /** Called when the upstream announces a changed list. */
  onListChanged(handler: (kind: ListKind) => void): void;
  /** Receive the upstream's log messages until the returned function is called. */
  onLog(handler: (message: LogMessage) => void): () => void;
  /** Called once when the session ends, whoever ended it. */
  onClosed(handler: () => void): void;
  close(): Promise<void>;
}

/**
 * Opens a fresh, initialized session with one upstream. Aborting `signal` while it opens tears
 * the attempt down (a spawned process is killed) and rejects.
 */
export type ClientFactory = (signal?: AbortSignal) => Promise<UpstreamSession>;

export interface ClientFactoryOptions {
  logger: Logger;
  /** Where a stdio upstream's stderr lines are kept (they are also logged, tagged). */
  stderr?: StderrRing;
  /** Tracks spawned children for a last-resort kill at exit. */
  tracker?: ChildTracker;
  /** Bound on spawn + initialize. */
  connectTimeoutMs: number;
  /** Seconds a stdio child gets between SIGTERM and SIGKILL. */
  killGraceMs?: number;
}

const CLIENT_INFO = { name: "mcpx", version: VERSION };

/** Build the client factory of one upstream from its config. */
export function createClientFactory(
  server: ServerConfig,
  options: ClientFactoryOptions,
): ClientFactory {
  const { spec } = server;
  const log = options.logger.child(server.name);
  switch (spec.transport) {
    case "stdio":
      return async (signal) => {
        // This process's own last lines: what a server that exits at once says about why.
        const recent: string[] = [];
        const transport = new ProcessTransport(spec, {
          onStderrLine: (line) => {
            options.stderr?.push(line);
            log.info(line);
            recent.push(line);
            if (recent.length > STDERR_LINES_IN_ERROR) recent.shift();
          },
          ...(options.killGraceMs !== undefined && { killGraceMs: options.killGraceMs }),
          ...(options.tracker && { tracker: options.tracker }),
        });
        return connectTransport(transport, options.connectTimeoutMs, signal, (err) =>
          stdioFailure(err, transport.exit, recent),
        );
      };
    case "sse":
      return async (signal) => {
        try {
          return await connectTransport(
            createRemoteTransport(spec, "sse"),
            options.connectTimeoutMs,
            signal,
          );
        } catch (err) {
          throw remoteFailure(err, spec.url);
        }
      };
    case "http": {
      // Learned once per upstream: servers that only speak the old SSE transport.
      let useSse = false;
      const connect = async (signal: AbortSignal | undefined) => {
        if (useSse)
          return connectTransport(
            createRemoteTransport(spec, "sse"),
            options.connectTimeoutMs,
            signal,
          );
        try {
          return await connectTransport(
            createRemoteTransport(spec, "http"),
            options.connectTimeoutMs,
            signal,
          );
        } catch (err) {
          // The SDK's documented fallback: a 4xx to the streamable POST means "try SSE".
          if (!(err instanceof StreamableHTTPError) || !isClientError(err.code)) throw err;
          log.info(`streamable HTTP answered ${err.code}; falling back to SSE`);
          const session = await connectTransport(
            createRemoteTransport(spec, "sse"),
            options.connectTimeoutMs,
            signal,
          );
          useSse = true;
          return session;
        }
      };
      return async (signal) => {
        try {
          return await connect(signal);
        } catch (err) {
          throw remoteFailure(err, spec.url);
        }
      };
    }
    default: {
      const never: never = spec;
      throw new Error(`unknown transport ${JSON.stringify(never)}`);
    }
  }
}

/** What a failed upstream request means for the caller, without SDK error codes leaking out. */
export interface UpstreamFailure {
  /** timeout: no answer in time; closed: the connection or process ended; other: anything else. */
  kind: "timeout" | "closed" | "other";
  message: string;
}

/**
 * Classify an error from an UpstreamSession request. The SDK reports its own request timeouts
 * and closed connections as McpError with the JSON-RPC codes -32001 and -32000.
 */
export function classifyFailure(err: unknown): UpstreamFailure {
  const code = err instanceof McpError ? err.code : undefined;
  const kind =
    code === ErrorCode.RequestTimeout
      ? "timeout"
      : code === ErrorCode.ConnectionClosed
        ? "closed"
        : "other";
  return { kind, message: errorMessage(err) };
}

/**
 * Whether `uri` matches an RFC 6570 resource template (`file:///{path}`, `users/{id}{?page}`),
 * per the SDK's matcher, which is what SDK servers route reads with. A template that does not
 * parse matches nothing.
 */
export function matchesUriTemplate(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

function isClientError(code: number | undefined): boolean {
  return code !== undefined && code >= 400 && code < 500;
}

/**
/**
 * Initialize a session over any SDK transport (in-memory pairs in tests). Aborting `signal`
 * closes the transport (killing a spawned process) and rejects the connect. A failure is passed
 * through `explain` once the transport is closed (a child process has exited by then, and all it
 * wrote to stderr has been read).
 */
export async function connectTransport(
  transport: Transport,
  timeoutMs: number,
  signal?: AbortSignal,
  explain: (err: unknown) => unknown = (err) => err,
): Promise<UpstreamSession> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  // Errors also surface as rejected requests; this only keeps the SDK from logging to console.
  client.onerror = () => {};
  const abort = () => void client.close().catch(() => {});
  if (signal?.aborted) throw new Error("cancelled before the session started");
  signal?.addEventListener("abort", abort, { once: true });
  try {
    await client.connect(transport, { timeout: timeoutMs, ...(signal && { signal }) });
  } catch (err) {
    await client.close().catch(() => {
      /* the connect error is the one worth reporting */
    });
    throw explain(err);
  } finally {
    signal?.removeEventListener("abort", abort);
  }
  return new SdkSession(client, transport);
}

class SdkSession implements UpstreamSession {
  readonly identity: ServerIdentity;
  private isClosed = false;
  private readonly closeHandlers: (() => void)[] = [];
  private readonly logHandlers = new Set<(message: LogMessage) => void>();

  constructor(
    private readonly client: Client,
    private readonly transport: Transport,
  ) {
    const info = client.getServerVersion();
    const instructions = client.getInstructions();
    this.identity = {
      capabilities: { ...(client.getServerCapabilities() ?? {}) },
      ...(info?.name !== undefined && { name: info.name }),
      ...(info?.version !== undefined && { version: info.version }),
      ...(info?.title !== undefined && { title: info.title }),
      ...(instructions !== undefined && { instructions }),
    };
    // A shared session's log lines go to every call in flight on it: they cannot be told apart.
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      for (const h of this.logHandlers) h(n.params);
    });
    client.onclose = () => {
      if (this.isClosed) return;
      this.isClosed = true;
      for (const h of this.closeHandlers) h();
    };
  }

  get pid(): number | undefined {
    return this.transport instanceof ProcessTransport ? this.transport.pid : undefined;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  async listTools(o: RequestOptions): Promise<ToolDef[]> {
    if (!this.identity.capabilities.tools) return [];
    return this.paginate(async (cursor) => {
      const r = await this.client.listTools(cursor ? { cursor } : {}, sdkOptions(o));
      return { items: r.tools, next: r.nextCursor };
    });
  }

  async listResources(o: RequestOptions): Promise<ResourceDef[]> {
    if (!this.identity.capabilities.resources) return [];
    return this.paginate(async (cursor) => {
      const r = await this.client.listResources(cursor ? { cursor } : {}, sdkOptions(o));
      return { items: r.resources, next: r.nextCursor };
    });
  }

  async listResourceTemplates(o: RequestOptions): Promise<ResourceTemplateDef[]> {
    if (!this.identity.capabilities.resources) return [];
    return this.paginate(async (cursor) => {
      const r = await this.client.listResourceTemplates(cursor ? { cursor } : {}, sdkOptions(o));
      return { items: r.resourceTemplates, next: r.nextCursor };
    });
  }

  async listPrompts(o: RequestOptions): Promise<PromptDef[]> {
    if (!this.identity.capabilities.prompts) return [];
    return this.paginate(async (cursor) => {
      const r = await this.client.listPrompts(cursor ? { cursor } : {}, sdkOptions(o));
      return { items: r.prompts, next: r.nextCursor };
    });
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    o: RequestOptions,
  ): Promise<ToolResult> {
    // A raw request, not client.callTool: a proxy passes results through, it does not judge them
    // against the tool's outputSchema.
    const result = await this.client.request(
      { method: "tools/call", params: { name, arguments: args } },
      CallToolResultSchema,
      sdkOptions(o),
    );
    return result;
  }

  async readResource(uri: string, o: RequestOptions): Promise<ReadResourceResult> {
    return await this.client.readResource({ uri }, sdkOptions(o));
  }

  async ping(o: RequestOptions): Promise<void> {
    await this.client.ping(sdkOptions(o));
  }

  onListChanged(handler: (kind: ListKind) => void): void {
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => handler("tools"));
    this.client.setNotificationHandler(ResourceListChangedNotificationSchema, () =>
      handler("resources"),
    );
    this.client.setNotificationHandler(PromptListChangedNotificationSchema, () =>
      handler("prompts"),
    );
  }

  onLog(handler: (message: LogMessage) => void): () => void {
    this.logHandlers.add(handler);
    return () => this.logHandlers.delete(handler);
  }

  onClosed(handler: () => void): void {
    if (this.isClosed) handler();
    else this.closeHandlers.push(handler);
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** Walk every cursor. A server that repeats a cursor would loop forever: stop and say so. */
  private async paginate<T>(
    page: (cursor?: string) => Promise<{ items: T[]; next?: string | undefined }>,
  ): Promise<T[]> {
    const all: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const { items, next } = await page(cursor);
      all.push(...items);
      if (next !== undefined && seen.has(next))
        throw new Error(`upstream repeated pagination cursor ${JSON.stringify(next)}`);
      if (next !== undefined) seen.add(next);
      cursor = next;
    } while (cursor !== undefined);
    return all;
  }
}

function sdkOptions(o: RequestOptions) {
  return {
    timeout: o.timeoutMs,
    resetTimeoutOnProgress: true,
    ...(o.signal && { signal: o.signal }),
    ...(o.onProgress && { onprogress: o.onProgress }),
  };
}
