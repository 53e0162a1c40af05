/**
 * The 2025-era exchanges a replica answers straight on node's response, without the web-standard
 * Request and Response the general path (http-legacy.ts) goes through: a session's single request
 * (http-direct.ts) on its kept server, and its initialize, notifications, GET stream and DELETE
 * (http-direct-session.ts). Each is served as the general path would serve it, with the same
 * session bookkeeping, which the endpoint lends it (`DirectHost`); anything else is left to the
 * general path, untouched.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo, Server, Transport } from "@modelcontextprotocol/server";
import { jsonRpcError } from "../auth/http-security.js";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "./context.js";
import { DirectAnswers, directRequest, type DirectRequest } from "./http-direct.js";
import {
  directExchange,
  StreamAnswer,
  type InitializeParams,
  type InitializeRequest,
} from "./http-direct-session.js";
import type { SessionSharing } from "./legacy-replicas.js";
import type { LegacySessionTable } from "./legacy-sessions.js";
import type { LegacyTaskStatuses } from "./legacy-task-status.js";
import { createDownstream } from "./mcp-server.js";
import type { Session, SessionServers } from "./session-servers.js";
import type { SessionClaims } from "./session-token.js";

/** What the direct path uses of its endpoint: the session table and bookkeeping both paths share. */
export interface DirectHost {
  ctx: ProxyContext;
  sessions: LegacySessionTable;
  servers: SessionServers;
  taskStatuses: LegacyTaskStatuses;
  sharing?: SessionSharing;
  /** The claims of a session id this request may use, or undefined (404). */
  verified(sid: string, authInfo?: AuthInfo): SessionClaims | undefined;
  /** The session was seen here (Redis: shared). */
  seen(session: Session, authInfo?: AuthInfo): Promise<void>;
  /** A new session's signed id, its state kept here. */
  openSession(params: InitializeParams, authInfo?: AuthInfo): string;
  /** End a session here and on every replica (DELETE). */
  endSession(sid: string, claims: SessionClaims): void;
  /** Cancellations, answers and roots changes a POST brings; why an answer was not forwarded. */
  received(session: Session, messages: unknown[]): Promise<string | undefined>;
  /** A fresh server on `transport`, seeded with `session`. */
  fresh(session: Session, transport: Transport): Promise<{ server: Server; end: () => void }>;
  /** Hook a session's stream up to what it carries; returns what stops that. */
  streaming(
    session: Session,
    served: { server: Server; end: () => void },
    authInfo?: AuthInfo,
  ): () => void;
  closeServer(server: Server): void;
}

export class LegacyDirect {
  /** Requests answered straight on node's response (http-direct.ts). */
  private readonly answering: DirectAnswers;

  constructor(
    private readonly host: DirectHost,
    headersHoldMs?: number,
  ) {
    this.answering = new DirectAnswers(headersHoldMs);
  }

  /** End every open direct answer (shutdown; streams end with their sessions). */
  close(): void {
    this.answering.closeAll();
  }

  /**
   * Serve an exchange straight on node's response when the general path would serve it the same
   * way: a session's single request (http-direct.ts), its initialize, notifications, stream or
   * DELETE (http-direct-session.ts). False, having done nothing, when it is not one of those.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    authInfo?: AuthInfo,
  ): Promise<boolean> {
    const request = directRequest(req, body);
    if (request) return this.call(req, res, request, authInfo);
    const exchange = directExchange(req, body);
    if (!exchange) return false;
    if (exchange.kind === "initialize") {
      await this.initialize(req, res, exchange.message, authInfo);
      return true;
    }
    const { sid } = exchange;
    const claims = this.host.verified(sid, authInfo);
    if (!claims) return false;
    const state = this.host.sessions.state(sid, claims.exp);
    this.host.taskStatuses.attach(sid, state);
    if (exchange.kind === "delete") {
      this.host.endSession(sid, claims);
      res.writeHead(200).end();
      return true;
    }
    // A second stream is refused by the general path (409).
    if (exchange.kind === "stream" && state.endStream) return false;
    await this.host.seen({ sid, claims, state }, authInfo);
    const session = { sid, claims, state };
    if (exchange.kind === "stream") await this.stream(res, session, authInfo);
    else {
      const unforwarded = await this.host.received(session, [exchange.message]);
      if (unforwarded) jsonRpcError(res, 503, -32000, unforwarded);
      else res.writeHead(202).end();
    }
    return true;
  }

  /** A session's single request, on its kept server (http-direct.ts). */
  private async call(
    req: IncomingMessage,
    res: ServerResponse,
    request: DirectRequest,
    authInfo?: AuthInfo,
  ): Promise<boolean> {
    const { sid, message } = request;
    const claims = this.host.verified(sid, authInfo);
    if (!claims) return false;
    const state = this.host.sessions.state(sid, claims.exp);
    this.host.taskStatuses.attach(sid, state);
    const reserved = await this.host.servers.reserve({ sid, claims, state }, message.id);
    if (!reserved) return false;
    await this.host.seen({ sid, claims, state }, authInfo);
    await this.host.sharing?.beforePost(sid, state, [message]);
    const closed = this.host.sessions.opened(state);
    const id = message.id;
    const { exchange, extra } = this.answering.begin(req, res, id, (answered) => {
      closed();
      if (state.calls.get(id) === end) state.calls.delete(id);
      if (!answered) reserved.abandon(exchange);
    });
    const end = () => exchange.end();
    state.calls.set(id, end);
    reserved.receive(exchange, message, { ...extra, ...(authInfo && { authInfo }) });
    // The client went away while the session was being looked up: the handler is abandoned.
    if (res.destroyed) exchange.end();
    return true;
  }

  /** Initialize on a fresh server, answered on node's response with the new session's id. */
  private async initialize(
    req: IncomingMessage,
    res: ServerResponse,
    message: InitializeRequest,
    authInfo?: AuthInfo,
  ): Promise<void> {
    const server = createDownstream(this.host.ctx, { era: "legacy" });
    const { exchange, extra } = this.answering.begin(req, res, message.id, () =>
      this.host.closeServer(server),
    );
    try {
      await server.connect(exchange);
    } catch (err) {
      // No session was opened: the route answers 500, as the general path would.
      exchange.drop();
      throw err;
    }
    // The session exists once its server does (the general path opens it after serving).
    res.setHeader("mcp-session-id", this.host.openSession(message.params, authInfo));
    exchange.onmessage?.(message, { ...extra, ...(authInfo && { authInfo }) });
  }

  /** GET on node's response (http-direct-session.ts): the session's stream, as `stream` serves it. */
  private async stream(res: ServerResponse, session: Session, authInfo?: AuthInfo): Promise<void> {
    const { sid, state } = session;
    // The client went while the session was looked up: no stream to open.
    if (res.destroyed) return;
    // The session ended meanwhile (DELETE, shutdown): as the general path answers an ended one.
    if (this.host.sessions.isEnded(sid) || this.host.sessions.peek(sid) !== state) {
      jsonRpcError(res, 404, -32001, "Session not found: initialize a new session.");
      return;
    }
    if (state.endStream) {
      jsonRpcError(res, 409, -32000, "Conflict: only one SSE stream is allowed per session.");
      return;
    }
    const closed = this.host.sessions.opened(state);
    let stopped = (): void => undefined;
    const answer = new StreamAnswer(res, () => {
      closed();
      if (state.endStream === streamEnd) delete state.endStream;
      stopped();
    });
    // The session's one stream is this one from now: a second GET meanwhile is refused.
    const streamEnd = () => answer.end();
    state.endStream = streamEnd;
    try {
      const { server, end } = await this.host.fresh(session, answer);
      if (state.endStream !== streamEnd) {
        // The stream ended while its server was being built (the client went, the session ended).
        end();
        return;
      }
      const stop = this.host.streaming(session, { server, end: streamEnd }, authInfo);
      stopped = () => {
        stop();
        end();
      };
    } catch (err) {
      // The status went out already: the stream ends, and the client opens another.
      this.host.ctx.logger.error(`HTTP stream failed: ${errorMessage(err)}`);
      answer.end();
    }
  }
}
