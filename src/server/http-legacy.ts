/**
 * 2025-era requests over HTTP, with sessions no replica has to hold: every request is served on
 * a stateless transport by a server seeded from the session id, which is a signed copy of what
 * the session's initialize said (session-token.ts); the replica keeps that server for the
 * session's next requests (session-servers.ts) and builds it anew from the id on a miss. Any
 * replica with the same key serves any request of any session. What needs one connection stays on the replica that has it: the
 * GET stream (list_changed), and the calls a `notifications/cancelled` can stop. With Redis, the
 * replicas share the rest (legacy-replicas.ts): cancellations and DELETEs, the log level, idle
 * expiry, subscriptions, resource updates relayed to the replica holding the stream, and a
 * client's answer to a request another replica asked (legacy-answers.ts).
 */
import {
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type Server,
  type Transport,
} from "@modelcontextprotocol/server";
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "./context.js";
import { serverSink, watchClient } from "./handlers/subscriptions.js";
import { SessionSharing } from "./legacy-replicas.js";
import type { InitializeParams } from "./http-direct-session.js";
import { LegacyDirect } from "./legacy-direct.js";
import {
  cancelledIds,
  isEventStream,
  isRequest,
  requestId,
  rpcError,
  whenEnded,
} from "./http-messages.js";
import { LegacySessionTable, type SessionState } from "./legacy-sessions.js";
import { LEGACY_TOPIC } from "./legacy-shared.js";
import { LegacyTaskStatuses } from "./legacy-task-status.js";
import { watchCatalog } from "./list-changed.js";
import { callerOfAuth, cleanCaller, createDownstream, DEFAULT_CALLER } from "./mcp-server.js";
import { SeededTransport } from "./seeded-transport.js";
import { LegacyAnswers } from "./legacy-answers.js";
import { SessionServers, type Exchange, type Session } from "./session-servers.js";
import { SessionTokens, type SessionClaims } from "./session-token.js";
import { isRecord } from "../json.js";

export interface LegacyOptions {
  /** Signs session ids; replicas that share it serve each other's sessions. */
  key: Buffer;
  /** A session with nothing open here for this long is ended here. */
  idleMs: number;
  /** A session id is refused everywhere this long after its initialize. */
  maxAgeMs: number;
  /** Sessions this replica keeps state for (see legacy-sessions.ts). */
  maxSessions: number;
  /** Sessions whose SDK server this replica keeps between requests (session-servers.ts). */
  maxKeptServers: number;
  now: () => number;
  /** How long a direct answer's headers may wait for the answer (default HEADERS_HOLD_MS; tests). */
  headersHoldMs?: number;
}

interface Served {
  response: Response;
  server: Server;
  /** Close the exchange's server and transport (ends its stream; aborts its handler). */
  end: () => void;
}

type FetchOptions = { authInfo?: AuthInfo; parsedBody?: unknown };

/** The 2025-era HTTP endpoint of one replica. */
export class LegacyEndpoint {
  private readonly tokens: SessionTokens;
  private readonly sessions: LegacySessionTable;
  private readonly sweeper: NodeJS.Timeout;
  /** Requests to clients (elicitation, …) whose answers this replica (or, Redis, another) gets. */
  private readonly answers: LegacyAnswers;
  /** The SDK servers of sessions live here, kept between their requests. */
  private readonly servers: SessionServers;
  /** Stop hearing other replicas (cancellations, DELETE) through shared state. */
  private readonly unlisten: () => void;
  /** Session state shared with other replicas (with Redis only; legacy-replicas.ts). */
  private readonly sharing?: SessionSharing;
  /** Exchanges answered straight on node's response (legacy-direct.ts). */
  private readonly directPath: LegacyDirect;
  /** Where sessions' task statuses go: their GET stream, here or (Redis) on another replica. */
  private readonly taskStatuses: LegacyTaskStatuses;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly options: LegacyOptions,
  ) {
    this.tokens = new SessionTokens(options.key);
    this.answers = new LegacyAnswers(ctx, (sid) => !!this.tokens.verify(sid, options.now()));
    this.servers = new SessionServers(ctx, this.answers.routes, options.maxKeptServers);
    // A session that ends here takes its upstream sessions (the `client` policy) and its kept
    // server with it.
    this.sessions = new LegacySessionTable({
      ...options,
      onEnd: (sid) => {
        this.servers.drop(sid);
        ctx.registry.clientLeft(sid);
        this.sharing?.ended(sid);
      },
    });
    if (ctx.shared?.status().store === "redis") {
      this.sharing = new SessionSharing(ctx, this.sessions, ctx.shared, {
        ...options,
        endIdle: (sid, exp) => {
          this.sessions.end(sid, exp);
          this.broadcast({ kind: "end", sid });
        },
      });
    }
    this.taskStatuses = new LegacyTaskStatuses(ctx, this.sharing?.store);
    const idleLog = (closed: number) => {
      if (closed > 0) ctx.logger.debug(`ended ${closed} HTTP session(s) idle past sessionIdleMs`);
    };
    this.sweeper = setInterval(
      () => {
        if (!this.sharing) idleLog(this.sessions.sweep());
        else void this.sharing.sweep().then(idleLog);
      },
      Math.max(10, Math.min(60_000, Math.floor(options.idleMs / 2))),
    );
    this.sweeper.unref();
    // Other replicas (Redis): a cancellation of a call running here, a session DELETEd there.
    this.unlisten = ctx.shared?.listen(LEGACY_TOPIC, (m) => this.fromReplica(m)) ?? (() => {});
    this.directPath = new LegacyDirect(
      {
        ctx,
        sessions: this.sessions,
        servers: this.servers,
        taskStatuses: this.taskStatuses,
        ...(this.sharing && { sharing: this.sharing }),
        verified: (sid, authInfo) => this.verified(sid, authInfo),
        seen: (session, authInfo) =>
          this.seen(session.sid, session.claims, session.state, authInfo),
        openSession: (params, authInfo) => this.openSession(params, authInfo),
        endSession: (sid, claims) => this.endSession(sid, claims),
        received: (session, messages) => this.received(session, messages),
        fresh: (session, transport) => this.fresh(session, transport),
        streaming: (session, served, authInfo) => this.streaming(session, served, authInfo),
        closeServer: (server) => this.closeServer(server),
      },
      options.headersHoldMs,
    );
  }

  /** What another replica broadcast: cancel a call running here, or end a session here. */
  private fromReplica(message: unknown): void {
    if (!isRecord(message) || typeof message.sid !== "string") return;
    const claims = this.tokens.verify(message.sid, this.options.now());
    if (!claims) return;
    if (message.kind === "end") this.sessions.end(message.sid, claims.exp);
    else if (message.kind === "task") {
      const state = this.sessions.peek(message.sid);
      if (state) this.taskStatuses.heard(state, message);
    } else this.sharing?.heard(message.sid, message);
    const id = message.id;
    if (message.kind === "cancel" && (typeof id === "string" || typeof id === "number"))
      this.sessions.peek(message.sid)?.calls.get(id)?.();
  }

  /** Tell the other replicas (when they share state through Redis); a failure is only logged. */
  private broadcast(message: { kind: "cancel" | "end"; sid: string; id?: string | number }) {
    void this.ctx.shared
      ?.broadcast(LEGACY_TOPIC, message)
      .catch((err: unknown) =>
        this.ctx.logger.warn(`${message.kind} not sent to other replicas: ${errorMessage(err)}`),
      );
  }

  /** Sessions this replica knows to be live. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  async fetch(request: Request, options: FetchOptions): Promise<Response> {
    const body = options.parsedBody;
    if (request.method === "POST" && isInitializeRequest(body))
      return this.initialize(request, options);
    const sid = request.headers.get("mcp-session-id");
    // A body the parser did not take (not JSON): the SDK says what is wrong with it.
    if (sid === null && request.method === "POST" && body === undefined)
      return (await this.serve(request, options)).response;
    if (sid === null) {
      return rpcError(
        400,
        -32000,
        "Bad Request: Mcp-Session-Id header is required. Send initialize first to open a session.",
      );
    }
    const claims = this.verified(sid, options.authInfo);
    if (!claims) return rpcError(404, -32001, "Session not found: initialize a new session.");
    const state = this.sessions.state(sid, claims.exp);
    this.taskStatuses.attach(sid, state);
    if (request.method !== "DELETE") await this.seen(sid, claims, state, options.authInfo);
    switch (request.method) {
      case "DELETE":
        this.endSession(sid, claims);
        return new Response(null, { status: 200 });
      case "GET":
        return this.stream(request, options, { sid, claims, state });
      case "POST":
        return this.post(request, options, { sid, claims, state });
      default:
        return rpcError(405, -32000, "Method not allowed: use POST, GET or DELETE.");
    }
  }

  /**
   * Serve an exchange straight on node's response when the general path would serve it the same
   * way (legacy-direct.ts); false, having done nothing, when it is not one of those.
   */
  direct(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    authInfo?: AuthInfo,
  ): Promise<boolean> {
    return this.directPath.serve(req, res, body, authInfo);
  }

  /** The claims of a session id this request may use, or undefined (404). */
  private verified(sid: string, authInfo?: AuthInfo): SessionClaims | undefined {
    const claims = this.tokens.verify(sid, this.options.now());
    if (!claims || this.sessions.isEnded(sid)) return undefined;
    const pinned = authInfo?.extra?.pinned === true;
    return pinned && claims.owner !== callerOfAuth(authInfo) ? undefined : claims;
  }

  /** The session was seen here (Redis: its idle time, caller and subscriptions are shared). */
  private async seen(
    sid: string,
    claims: SessionClaims,
    state: SessionState,
    authInfo?: AuthInfo,
  ): Promise<void> {
    if (!this.sharing) return;
    const caller = callerOfAuth(authInfo) ?? cleanCaller(claims.ci.name) ?? DEFAULT_CALLER;
    await this.sharing.seen(sid, state, caller);
  }

  /** End every session's stream and calls, and stop the idle sweep (shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    this.unlisten();
    // First: this replica going away ends no session for the others (its shared state stays).
    this.sharing?.close();
    this.answers.close();
    this.directPath.close();
    this.sessions.closeAll();
    this.servers.closeAll();
  }

  /** Serve initialize on a fresh server and name the new session in the answer. */
  private async initialize(request: Request, options: FetchOptions): Promise<Response> {
    const params = (options.parsedBody as { params: InitializeParams }).params;
    const { response } = await this.serve(request, options);
    if (response.status !== 200) return response;
    const sid = this.openSession(params, options.authInfo);
    const headers = new Headers(response.headers);
    headers.set("mcp-session-id", sid);
    return new Response(response.body, { status: response.status, headers });
  }

  /** Sign a new session's id from its initialize, and keep its state here. */
  private openSession(params: InitializeParams, authInfo?: AuthInfo): string {
    const now = this.options.now();
    const owner = authInfo?.extra?.pinned === true ? callerOfAuth(authInfo) : undefined;
    const claims: SessionClaims = {
      // What the SDK's initialize answered with: the client's version when supported, else ours.
      v: SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion)
        ? params.protocolVersion
        : LATEST_PROTOCOL_VERSION,
      ci: {
        name: params.clientInfo.name,
        version: params.clientInfo.version,
        ...(params.clientInfo.title !== undefined && { title: params.clientInfo.title }),
      },
      cc: params.capabilities,
      ...(owner !== undefined && { owner }),
      iat: now,
      exp: now + this.options.maxAgeMs,
    };
    const sid = this.tokens.sign(claims);
    this.sessions.state(sid, claims.exp);
    return sid;
  }

  /** End a session here and, with Redis, on every replica (DELETE). */
  private endSession(sid: string, claims: SessionClaims): void {
    this.sessions.end(sid, claims.exp);
    this.broadcast({ kind: "end", sid });
  }

  /**
   * A POST of a session: requests on a fresh seeded server; cancellations to the calls here;
   * answers to the exchanges here that asked the client something.
   */
  private async post(request: Request, options: FetchOptions, session: Session): Promise<Response> {
    const { state } = session;
    const body = options.parsedBody;
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    // An initialize in a live session, well-formed or not (the fuzz found a malformed one reaching
    // the session's server, which answered -32603 as if it were our bug).
    if (messages.some((m) => isRecord(m) && m.method === "initialize" && "id" in m)) {
      return rpcError(
        400,
        -32600,
        "Invalid Request: this session is already initialized. Send initialize without Mcp-Session-Id to open a new session.",
      );
    }
    const unforwarded = await this.received(session, messages);
    // Notifications and responses only: nothing for a server to answer (cancellations are done).
    if (body !== undefined && messages.every((m) => !isRequest(m))) {
      // An answer that could not reach the replica that asked: the client hears why (Redis).
      if (unforwarded) return rpcError(503, -32000, unforwarded);
      return new Response(null, { status: 202 });
    }
    // A single request can be cancelled by id; a batch shares its stream with requests that
    // were not cancelled, so it is not tracked.
    const id = messages.length === 1 ? requestId(messages[0]) : undefined;
    const served = await this.serve(request, options, session, id);
    if (id === undefined || served.response.body === null) return served.response;
    state.calls.set(id, served.end);
    return whenEnded(served.response, () => {
      if (state.calls.get(id) === served.end) state.calls.delete(id);
    });
  }

  /** GET: the session's server-to-client stream, held on this replica while it lasts. */
  private async stream(
    request: Request,
    options: FetchOptions,
    session: Session,
  ): Promise<Response> {
    const { state } = session;
    if (state.endStream) {
      return rpcError(409, -32000, "Conflict: only one SSE stream is allowed per session.");
    }
    const served = await this.serve(request, options, session);
    if (served.response.status !== 200 || served.response.body === null) return served.response;
    return whenEnded(served.response, this.streaming(session, served, options.authInfo));
  }

  /**
   * What a session's GET stream carries: catalog, prompt and resource list changes, updates of
   * what it subscribed to, its tasks' statuses. Returns what to call when the stream ends.
   */
  private streaming(
    session: Session,
    served: { server: Server; end: () => void },
    authInfo?: AuthInfo,
  ): () => void {
    const { claims, state } = session;
    const callerOf = () => callerOfAuth(authInfo) ?? cleanCaller(claims.ci.name) ?? DEFAULT_CALLER;
    const unsubscribe = watchCatalog(
      this.ctx,
      state,
      () => served.server.sendToolListChanged(),
      callerOf,
    );
    // Prompt and resource list changes, and updates of what the session subscribed to (through
    // this replica; with Redis, through any: legacy-replicas.ts).
    const sink = serverSink(served.server);
    const unwatch = watchClient(this.ctx, state, sink, callerOf);
    // With Redis, updates relayed from other replicas reach this stream too.
    const unrelay = this.sharing?.streaming(state, sink, callerOf);
    // And its tasks' statuses (legacy-task-status.ts).
    const untask = this.taskStatuses.streaming(state, served.server);
    state.endStream = served.end;
    return () => {
      unsubscribe();
      unwatch();
      unrelay?.();
      untask();
      if (state.endStream === served.end) delete state.endStream;
    };
  }

  /**
   * One exchange on a stateless transport: a single request `id` of a session on the session's
   * kept server (session-servers.ts), anything else on a fresh server seeded with the session
   * when there is one. The exchange lasts until the answer (an SSE stream, perhaps) ends or the
   * client goes.
   */
  private async serve(
    request: Request,
    options: FetchOptions,
    session?: Session,
    id?: string | number,
  ): Promise<Served> {
    const state = session?.state;
    const lent =
      session && id !== undefined && request.method === "POST"
        ? await this.servers.lend(session, id)
        : undefined;
    const { server, transport: inner, end: finish } = lent ?? (await this.freshExchange(session));
    const closed = state ? this.sessions.opened(state) : () => {};
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      closed();
      finish();
    };
    request.signal.addEventListener("abort", end, { once: true });
    let response: Response;
    try {
      response = await inner.handleRequest(request, {
        ...(options.authInfo && { authInfo: options.authInfo }),
        ...(options.parsedBody !== undefined && { parsedBody: options.parsedBody }),
      });
    } catch (err) {
      end();
      throw err;
    }
    if (response.body === null || !isEventStream(response)) {
      end();
      return { response, server, end };
    }
    // toNodeHandler sends the status and headers with the first chunk only: without one, a
    // client would wait for them until the first event or keep-alive (15 s).
    return { response: whenEnded(response, end, ": open\n\n"), server, end };
  }

  /** A fresh server and stateless transport for one exchange, seeded with `session` if any. */
  private async freshExchange(session?: Session): Promise<Exchange> {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
    });
    return { ...(await this.fresh(session, transport)), transport };
  }

  /** A fresh server on `transport`, seeded with `session` if any; `end` closes it. */
  private async fresh(
    session: Session | undefined,
    transport: Transport,
  ): Promise<{ server: Server; end: () => void }> {
    const server = createDownstream(this.ctx, {
      era: "legacy",
      ...(session && { memory: session.state, clientId: session.sid }),
    });
    await server.connect(
      session
        ? new SeededTransport(transport, session.claims, {
            sid: session.sid,
            routes: this.answers.routes,
          })
        : transport,
    );
    return { server, end: () => this.closeServer(server) };
  }

  private closeServer(server: Server): void {
    void server
      .close()
      .catch((err: unknown) => this.ctx.logger.debug(`HTTP exchange close: ${errorMessage(err)}`));
  }

  /**
   * What a POST brings besides requests: cancellations end the calls here (or, Redis, are told
   * to the other replicas); answers and roots changes as `fromClient`. Returns why an answer
   * could not be forwarded, if one could not.
   */
  private async received(session: Session, messages: unknown[]): Promise<string | undefined> {
    const { sid, state } = session;
    for (const id of cancelledIds(messages)) {
      const end = state.calls.get(id);
      // Not running here: it may run on another replica, which hears it through Redis.
      if (end) end();
      else this.broadcast({ kind: "cancel", sid, id });
    }
    const unforwarded = await this.fromClient(sid, messages);
    await this.sharing?.beforePost(sid, state, messages);
    return unforwarded;
  }

  /**
   * What a client POSTs besides requests: answers to requests an exchange here or (Redis) on
   * another replica sent it (legacy-answers.ts), and news of changed roots, for the upstream
   * sessions of its calls. Returns why an answer could not be forwarded, if one could not.
   */
  private async fromClient(sid: string, messages: unknown[]): Promise<string | undefined> {
    let unforwarded: string | undefined;
    for (const m of messages) {
      if (!isRecord(m)) continue;
      if (m.method === "notifications/roots/list_changed") this.ctx.registry.rootsChanged(sid);
      if (m.method !== undefined || (m.result === undefined && m.error === undefined)) continue;
      unforwarded = (await this.answers.take(sid, m)) ?? unforwarded;
    }
    return unforwarded;
  }
}
