/**
 * The hot path of 2025-era HTTP: one JSON-RPC request of a live session (a `tools/call`, most
 * often) answered on node's own response, without the web-standard Request, Headers, Response
 * and ReadableStream the SDK's streamable HTTP transport goes through, nor a stateless transport
 * per request. The session's kept server (session-servers.ts) gets the request through its
 * `SessionTransport`, and what it sends back for it (progress, logs, requests to the client, the
 * answer) is written to the response as the same SSE frames the SDK writes; an answer that is the
 * first thing sent within HEADERS_HOLD_MS (twice that at most) is the whole response, as one JSON body.
 *
 * Only what the SDK's transport would serve the same way comes here, checked before anything
 * happens (`directRequest`); everything else (initialize, batches, notifications, answers, GET,
 * DELETE, bad headers, an id the session's server is still answering) takes the general path,
 * which answers exactly as before, errors included.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  classifyInboundRequest,
  isJsonContentType,
  isJSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Transport,
} from "@modelcontextprotocol/server";
import { isRecord } from "../json.js";

type Id = string | number;

/** The SDK's SSE keep-alive interval (DEFAULT_SSE_KEEP_ALIVE_MS). */
export const KEEP_ALIVE_MS = 15_000;

/** The headers the SDK's transport opens an SSE stream with (a POST's answer, a GET). */
export const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};

/** A request the direct path serves: its session id and the request. */
export interface DirectRequest {
  sid: string;
  message: JSONRPCRequest & { id: Id };
}

/**
 * `body` as a request the direct path may serve, or undefined when the general path must
 * (anything the SDK's transport would refuse, or serve differently, goes there). Reads only; the
 * body was parsed once, by the route.
 */
export function directRequest(req: IncomingMessage, body: unknown): DirectRequest | undefined {
  if (req.method !== "POST" || !isRecord(body)) return undefined;
  const sid = req.headers["mcp-session-id"];
  if (typeof sid !== "string") return undefined;
  const { id, method } = body;
  if (typeof method !== "string" || method === "initialize") return undefined;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const accept = req.headers.accept;
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream"))
    return undefined;
  if (!isJsonContentType(req.headers["content-type"] ?? null)) return undefined;
  const version = header(req, "mcp-protocol-version");
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  // The SDK transport's own check of a JSON-RPC message (its error answer is the general path's).
  if (!isJSONRPCRequest(body)) return undefined;
  // The header names a 2025-era version (or none): only a `_meta` envelope can claim 2026-07-28,
  // and a request with `_meta` is classified as the SDK does (a claim is not ours to serve here).
  if (isRecord(body.params?._meta)) {
    const era = classifyInboundRequest({
      httpMethod: "POST",
      ...(version !== undefined && { protocolVersionHeader: version }),
      ...optional("mcpMethodHeader", header(req, "mcp-method")),
      ...optional("mcpNameHeader", header(req, "mcp-name")),
      body,
    });
    if (era.kind !== "legacy") return undefined;
  }
  return { sid, message: body };
}

/** A request header given once, or undefined. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

/**
 * What request handlers read of the HTTP request (`ctx.http.req`): its headers, by name. The SDK
 * types it as a web `Request`; building one per call is what this path saves, so handlers get a
 * view with the same `headers.get`.
 */
function requestView(req: IncomingMessage): Request {
  const headers = {
    get: (name: string): string | null => {
      const value = req.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
    has: (name: string): boolean => req.headers[name.toLowerCase()] !== undefined,
  };
  return { method: req.method, headers } as unknown as Request;
}

/**
 * How long an answer's status and headers may wait to leave in one write with the answer itself:
 * at least this, at most twice this. Most calls end sooner: one write instead of three (headers,
 * the opening comment, the answer, the end), and a JSON body the client reads instead of an event
 * stream it parses. A longer call's headers still reach its client within twice this.
 */
export const HEADERS_HOLD_MS = 10;

/**
 * The open direct answers of one endpoint, kept alive by one timer for all of them (the SDK
 * arms one per answer), and the answers whose headers are held, sent by one timer too. That
 * timer ticks every `holdMs` while answers are held and opens those that were already held at
 * the tick before: an answer begun just before a tick is not opened by it (under load, calls
 * begin all the time, and a tick opening every held answer would open most of them young). The
 * answer that starts the timer is opened by its first tick, `holdMs` later.
 */
export class DirectAnswers {
  private readonly open = new Set<DirectAnswer>();
  /** Answers held since the last tick, and those held since the one before (opened next tick). */
  private held = new Set<DirectAnswer>();
  private older = new Set<DirectAnswer>();
  private timer?: NodeJS.Timeout;
  private holdTimer?: NodeJS.Timeout;

  constructor(private readonly holdMs = HEADERS_HOLD_MS) {}

  /** Start answering `id` on `res`: status and headers go out with the answer, or within 2 × holdMs. */
  begin(
    req: IncomingMessage,
    res: ServerResponse,
    id: Id,
    onEnd: (answered: boolean) => void,
  ): { exchange: DirectAnswer; extra: MessageExtraInfo } {
    const exchange = new DirectAnswer(res, id, (answered) => {
      this.open.delete(exchange);
      this.held.delete(exchange);
      this.older.delete(exchange);
      if (this.open.size === 0) this.stopTimer();
      onEnd(answered);
    });
    this.open.add(exchange);
    if (this.holdTimer === undefined) {
      this.older.add(exchange);
      this.holdTimer = setInterval(() => this.tick(), this.holdMs);
    } else this.held.add(exchange);
    this.timer ??= setInterval(() => {
      for (const answer of this.open) answer.keepAlive();
    }, KEEP_ALIVE_MS).unref();
    return { exchange, extra: { request: requestView(req) } };
  }

  /** End every open answer (shutdown). */
  closeAll(): void {
    for (const answer of [...this.open]) answer.end();
    this.stopTimer();
  }

  /** Open the answers held for a whole tick; the younger ones wait for the next. */
  private tick(): void {
    const due = this.older;
    for (const answer of due) answer.opened();
    due.clear();
    // Whatever began meanwhile waits a whole tick more.
    this.older = this.held;
    this.held = due;
    if (this.older.size === 0) {
      clearInterval(this.holdTimer);
      this.holdTimer = undefined;
    }
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    clearInterval(this.holdTimer);
    this.holdTimer = undefined;
  }
}

/**
 * One request's answer on node's response: the `Transport` the session's `SessionTransport`
 * hands the messages of that request to. The response ends with the request's answer, or when
 * the exchange is ended (a cancellation, the client gone, shutdown).
 */
export class DirectAnswer implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private done = false;
  /** Whether the status and headers went out. */
  private headersSent = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: Id,
    private readonly onEnd: (answered: boolean) => void,
  ) {
    res.once("close", () => this.finish(false));
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.done) return Promise.resolve();
    const json = JSON.stringify(message);
    // The SessionTransport hands over only this request's messages: a result or error is its answer.
    const m = message as { id?: unknown; result?: unknown; error?: unknown };
    if (m.id === this.id && (m.result !== undefined || m.error !== undefined)) {
      if (this.headersSent) this.res.end(`event: message\ndata: ${json}\n\n`);
      else {
        // Nothing went out before the answer: it is the whole response, as JSON (the transport
        // lets a server answer a request either way, and every client reads both). One write,
        // and the client reads one JSON body instead of parsing an event stream.
        this.headersSent = true;
        if (!this.res.headersSent)
          this.res.writeHead(200, {
            "Content-Type": "application/json",
            "Content-Length": Buffer.byteLength(json),
          });
        this.res.end(json);
      }
      this.finish(true);
    } else {
      this.opened();
      this.res.write(`event: message\ndata: ${json}\n\n`);
    }
    return Promise.resolve();
  }

  /** Send the status and headers now, with a comment so they reach the client before any event. */
  opened(): void {
    if (this.done || this.headersSent) return;
    this.writeHead();
    this.res.write(": open\n\n");
  }

  keepAlive(): void {
    if (!this.done && this.headersSent) this.res.write(": keepalive\n\n");
  }

  /** End the answer now (the stream ends; its handler, if still running, is abandoned). */
  end(): void {
    if (this.done) return;
    if (!this.headersSent) this.writeHead();
    this.res.end();
    this.finish(false);
  }

  close(): Promise<void> {
    this.end();
    return Promise.resolve();
  }

  /** Give the response up unanswered, writing nothing: whoever holds it answers it. */
  drop(): void {
    this.finish(false);
  }

  private writeHead(): void {
    this.headersSent = true;
    if (!this.res.headersSent) this.res.writeHead(200, SSE_HEADERS);
  }

  private finish(answered: boolean): void {
    if (this.done) return;
    this.done = true;
    this.onEnd(answered);
  }
}
