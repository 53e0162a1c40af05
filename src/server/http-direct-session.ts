/**
 * The rest of a 2025-era session's life over HTTP on node's own response, as http-direct.ts does
 * for its requests: the `initialize` that opens it, the notifications and answers it POSTs, its
 * GET stream and the DELETE that ends it. None of them builds a web-standard Request, Headers or
 * Response: the first of those loads node's fetch implementation (undici), ~10 MB of RSS that an
 * mcpx whose clients all speak the 2025 protocol now never pays (the general path loads it when
 * it is first needed).
 *
 * Only what the general path would serve the same way comes here, decided before anything
 * happens (`directExchange`): a bad Accept or Content-Type, an unsupported protocol version, a
 * batch, a message of the 2026-07-28 era, anything unusual takes the general path, which answers
 * it exactly as before.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  classifyInboundRequest,
  isInitializeRequest,
  isJsonContentType,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Transport,
} from "@modelcontextprotocol/server";
import { isRecord } from "../json.js";
import { header, KEEP_ALIVE_MS, SSE_HEADERS } from "./http-direct.js";

/** What a client's `initialize` says of it. */
export interface InitializeParams {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: { name: string; version: string; title?: string };
}

export type InitializeRequest = JSONRPCRequest & { id: string | number; params: InitializeParams };

/** An exchange of a session's life the direct path serves. */
export type DirectExchange =
  | { kind: "initialize"; message: InitializeRequest }
  | { kind: "notify"; sid: string; message: JSONRPCMessage }
  | { kind: "stream"; sid: string }
  | { kind: "delete"; sid: string };

/**
 * `req` (with its parsed `body`) as an exchange the direct path serves, or undefined when the
 * general path must. A session's single request is http-direct.ts's `directRequest`. Reads only.
 */
export function directExchange(req: IncomingMessage, body: unknown): DirectExchange | undefined {
  const sid = header(req, "mcp-session-id");
  const version = header(req, "mcp-protocol-version");
  switch (req.method) {
    case "DELETE":
      // The general path checks nothing of a DELETE but its session (it never reaches the SDK).
      return sid === undefined ? undefined : { kind: "delete", sid };
    case "GET":
      // What the SDK's transport refuses (406, 400) is refused there.
      if (sid === undefined || !req.headers.accept?.includes("text/event-stream")) return;
      if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return;
      return { kind: "stream", sid };
    case "POST":
      break;
    default:
      return undefined;
  }
  if (!isRecord(body) || header(req, "mcp-method") !== undefined) return undefined;
  if (header(req, "mcp-name") !== undefined) return undefined;
  // Only 2025-era traffic, as the route tells it (the SDK's own classification).
  const era = classifyInboundRequest({
    httpMethod: "POST",
    ...(version !== undefined && { protocolVersionHeader: version }),
    body,
  });
  if (era.kind !== "legacy") return undefined;
  if (sid === undefined) {
    // An initialize that the SDK's transport takes: both media types accepted, a JSON body.
    const accept = req.headers.accept;
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return;
    if (!isJsonContentType(req.headers["content-type"] ?? null)) return undefined;
    if (!isInitializeRequest(body)) return undefined;
    return { kind: "initialize", message: body as InitializeRequest };
  }
  // A notification or an answer to a request: nothing for a server to answer.
  const message = body as JSONRPCMessage;
  if (!isJSONRPCNotification(message) && !isJSONRPCResultResponse(message)) {
    if (!isJSONRPCErrorResponse(message)) return undefined;
  }
  if ((message as { method?: unknown }).method === "initialize") return undefined;
  return { kind: "notify", sid, message };
}

/**
 * A session's GET stream on node's response: the transport of the server that speaks on it.
 * Its status and headers go out at once, with a comment so they reach the client before any
 * event (as the general path does); then every message the server sends unprompted (list
 * changes, resource updates, task statuses, requests to the client) as the SSE event the SDK
 * writes, a keep-alive comment every 15 s, until the client goes or the stream is ended.
 */
export class StreamAnswer implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private done = false;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly onEnd: () => void,
  ) {
    res.writeHead(200, SSE_HEADERS);
    res.write(": open\n\n");
    this.keepAlive = setInterval(() => this.res.write(": keepalive\n\n"), KEEP_ALIVE_MS).unref();
    res.once("close", () => this.end());
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    // A standalone stream carries no answers (the SDK refuses to send one on it).
    if (this.done || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))
      return Promise.resolve();
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.end();
    return Promise.resolve();
  }

  /** End the stream (the client went, the session ended, shutdown). */
  end(): void {
    if (this.done) return;
    this.done = true;
    clearInterval(this.keepAlive);
    this.res.end();
    this.onEnd();
    this.onclose?.();
  }
}
