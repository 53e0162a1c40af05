/**
 * Streamable HTTP downstream: `/mcp` and `/mcp/<caller>`, sessions, `/healthz`. Security checks
 * (Host, Origin, bearer tokens) come from http-security.ts.
 */
import { randomUUID } from "node:crypto";
import type { Server as NodeServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hostHeaderValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import express, { type NextFunction, type Request, type Response } from "express";
import getPort from "get-port";
import { errorMessage } from "../errors.js";
import { healthReport } from "../health/status.js";
import { CancelledStreams } from "./cancelled-streams.js";
import type { ProxyContext } from "./context.js";
import {
  allowedHostnames,
  bearerToken,
  jsonRpcError,
  originValidation,
  TokenTable,
} from "./http-security.js";
import { authInfoFor, cleanCaller, createMcpServer, type DownstreamServer } from "./mcp-server.js";

export interface HttpOptions {
  host: string;
  port: number;
  /** More hostnames accepted in Host and Origin, e.g. the name of a load balancer in front. */
  allowedHosts?: string[];
  /**
   * Close a session after this long with no request and no open stream (a client that went away
   * without DELETE). Default 30 minutes; a client that comes back gets 404 and initializes anew.
   */
  sessionIdleMs?: number;
}

export interface HttpHandle {
  /** The URL actually served, e.g. http://127.0.0.1:3000/mcp */
  readonly url: string;
  readonly port: number;
  /** True when the requested port was taken and another was chosen. */
  readonly portChanged: boolean;
  /** Downstream sessions open now. */
  readonly sessionCount: number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  downstream: DownstreamServer;
  /** The caller whose token opened the session (auth configured): no other token may use it. */
  owner?: string;
  /** When the session last saw a request or a stream close (ms since epoch). */
  lastSeen: number;
  /** Responses of this session still open (the GET stream, streamed POST answers). */
  open: number;
  /** Answer streams by request id, so those of cancelled requests can be ended. */
  streams: CancelledStreams;
}

const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

export { allowedHostnames, exposure, isLoopback } from "./http-security.js";

/** Tool arguments can carry whole files (filesystem write_file): allow more than express's 100 kB. */
const BODY_LIMIT = "32mb";

/** The HTTP routes: `/mcp`, and `/mcp/<caller>` to name the caller in the URL. */
const ROUTES = ["/mcp", "/mcp/:caller"];

/** Who a request is, after authentication: its caller, and whether a token fixed it. */
interface Identity {
  caller?: string;
  pinned: boolean;
}

/**
 * Serve streamable HTTP at /mcp: POST for requests, GET for the server-to-client stream (Claude
 * Code opens it; a 405 breaks it), DELETE to end a session. One SDK server per session.
 *
 * Every request is checked in this order: Host (DNS rebinding), Origin, bearer token (when the
 * config has `auth`). Then its caller is resolved, per request: the token's caller, else the
 * `/mcp/<caller>` path, else `X-MCPX-Caller`; mcp-server.ts falls back to clientInfo.name.
 * Nothing about a request is forwarded upstream: upstream sessions carry only their config.
 */
export async function serveHttp(ctx: ProxyContext, options: HttpOptions): Promise<HttpHandle> {
  const tokens = new TokenTable();
  const sessions = new SessionTable(ctx, options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS);
  const app = express();
  app.disable("x-powered-by");
  const allowed = allowedHostnames(options.host, options.allowedHosts);
  // DNS-rebinding protection: a page on another site must not reach the proxy by a name of its own.
  app.use(hostHeaderValidation(allowed));
  app.use(originValidation(allowed));
  app.use(express.json({ limit: BODY_LIMIT }));
  app.get("/healthz", healthz(ctx, tokens));
  const identify = (req: Request, res: Response) => authenticate(ctx, tokens, req, res);
  app.post(ROUTES, postRoute(ctx, sessions, identify));
  const other = sessionRoute(ctx, sessions, identify);
  app.get(ROUTES, other);
  app.delete(ROUTES, other);
  app.use(errorRoute(ctx));

  const { server, port, portChanged } = await listen(app, options);
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}/mcp`;
  return {
    url,
    port,
    portChanged,
    get sessionCount() {
      return sessions.size;
    },
    close: async () => {
      // Stop accepting first, then end every session (their SSE streams keep sockets open).
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      await sessions.closeAll();
      server.closeAllConnections();
      await closing;
    },
  };
}

/**
 * GET /healthz: 200 whenever mcpx serves; the body says how each upstream is doing. With auth
 * configured, the per-server detail (names, errors) is for token holders only, and only for the
 * servers of their profile; a load balancer's unauthenticated probe gets the overall status.
 */
function healthz(ctx: ProxyContext, tokens: TokenTable) {
  return (req: Request, res: Response) => {
    const report = healthReport(ctx.registry);
    const auth = ctx.config.auth;
    if (auth) {
      const token = bearerToken(req);
      const caller = token ? tokens.callerOf(auth, token) : undefined;
      if (caller === undefined) {
        res.json({ status: report.status });
        return;
      }
      const visible = new Set(
        ctx.views
          .forCaller(caller)
          .servers()
          .map((s) => s.name),
      );
      report.servers = Object.fromEntries(
        Object.entries(report.servers).filter(([n]) => visible.has(n)),
      );
    }
    res.json(report);
  };
}

/**
 * Authenticate a request and name its caller; false when a 401 went out. Read per request: a
 * reload that adds, changes or removes tokens applies at once.
 */
function authenticate(
  ctx: ProxyContext,
  tokens: TokenTable,
  req: Request,
  res: Response,
): Identity | false {
  const auth = ctx.config.auth;
  let caller: string | undefined;
  if (auth) {
    const token = bearerToken(req);
    caller = token ? tokens.callerOf(auth, token) : undefined;
    if (caller === undefined) {
      res.setHeader(
        "WWW-Authenticate",
        token ? 'Bearer realm="mcpx", error="invalid_token"' : 'Bearer realm="mcpx"',
      );
      jsonRpcError(
        res,
        401,
        -32000,
        token
          ? "Unauthorized: the bearer token is not valid."
          : "Unauthorized: send Authorization: Bearer <token>.",
      );
      return false;
    }
  }
  const fromPath = req.params.caller;
  caller ??=
    cleanCaller(typeof fromPath === "string" ? fromPath : undefined) ??
    cleanCaller(req.header("x-mcpx-caller"));
  // The SDK hands req.auth to request handlers as extra.authInfo.
  (req as Request & { auth?: AuthInfo }).auth = authInfoFor(caller);
  return { ...(caller !== undefined && { caller }), pinned: auth !== undefined };
}

type Identify = (req: Request, res: Response) => Identity | false;

/** POST /mcp: an initialize opens a session; anything else goes to the session it names. */
function postRoute(ctx: ProxyContext, sessions: SessionTable, identify: Identify) {
  return async (req: Request, res: Response) => {
    try {
      const who = identify(req, res);
      if (!who) return;
      const session = sessions.find(req, who);
      if (session) {
        sessions.touch(session, res);
        session.streams.track(req.body, res);
        await session.transport.handleRequest(req, res, req.body);
        session.streams.endCancelled(req.body, session.transport);
        return;
      }
      if (req.header("mcp-session-id") !== undefined) {
        jsonRpcError(res, 404, -32001, "Session not found: initialize a new session.");
        return;
      }
      if (!isInitializeRequest(req.body)) {
        jsonRpcError(
          res,
          400,
          -32000,
          "Bad request: no mcp-session-id header and not an initialize request.",
        );
        return;
      }
      await sessions.open(who, req, res);
    } catch (err) {
      ctx.logger.error(`HTTP request failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
}

/** GET (the server-to-client stream) and DELETE (end the session) of an existing session. */
function sessionRoute(ctx: ProxyContext, sessions: SessionTable, identify: Identify) {
  return async (req: Request, res: Response) => {
    const who = identify(req, res);
    if (!who) return;
    const session = sessions.find(req, who);
    if (!session) {
      jsonRpcError(
        res,
        req.header("mcp-session-id") ? 404 : 400,
        -32000,
        "Unknown or missing mcp-session-id.",
      );
      return;
    }
    sessions.touch(session, res);
    try {
      await session.transport.handleRequest(req, res);
    } catch (err) {
      ctx.logger.error(`HTTP ${req.method} failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
}

/**
 * Last: a body that is not JSON (or too large) gets a JSON-RPC error, not Express's HTML page,
 * and nothing of the body reaches a log (express's default handler prints it with console).
 */
function errorRoute(ctx: ProxyContext) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: unknown }).type;
    if (res.headersSent) {
      next(err);
      return;
    }
    if (type === "entity.parse.failed")
      jsonRpcError(res, 400, -32700, "Parse error: the body is not valid JSON.");
    else if (type === "entity.too.large")
      jsonRpcError(res, 413, -32600, `Request too large (limit ${BODY_LIMIT}).`);
    else {
      ctx.logger.error(
        `HTTP request failed: ${typeof type === "string" ? type : "unexpected error"}`,
      );
      jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
}

/**
 * The open downstream sessions, each with its SDK transport and server. Sessions whose client
 * left without DELETE are closed after `idleMs` with no request and no open stream; otherwise
 * they would live (and listen to catalog changes) until mcpx exits.
 */
class SessionTable {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly idleMs: number,
  ) {
    this.sweeper = setInterval(
      () => this.sweep(),
      Math.max(10, Math.min(60_000, Math.floor(idleMs / 2))),
    );
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session a request names, unless it was opened with another token. */
  find(req: Request, who: Identity): Session | undefined {
    const id = req.header("mcp-session-id");
    const session = id === undefined ? undefined : this.sessions.get(id);
    // A session opened with one token is invisible to every other token.
    if (session?.owner !== undefined && who.pinned && session.owner !== who.caller)
      return undefined;
    return session;
  }

  /** Count the response as activity of `session` while it is open. */
  touch(session: Session, res: Response): void {
    session.open += 1;
    session.lastSeen = Date.now();
    res.once("close", () => {
      session.open -= 1;
      session.lastSeen = Date.now();
    });
  }

  /** Answer an initialize with a new session (its own SDK server and transport). */
  async open(who: Identity, req: Request, res: Response): Promise<void> {
    const downstream = createMcpServer(this.ctx);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, {
          transport,
          downstream,
          streams: new CancelledStreams(),
          ...(who.pinned && who.caller !== undefined && { owner: who.caller }),
          lastSeen: Date.now(),
          open: 0,
        });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      void downstream.close().catch(() => {
        /* already closed */
      });
    };
    await downstream.server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    // The SDK refused the initialize (bad Accept, bad version…): no session was made, so
    // nothing else will ever close this server and its catalog subscription.
    if (transport.sessionId === undefined) await downstream.close();
  }

  /** End every session (shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.downstream.close()));
  }

  private sweep(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.open === 0 && now - session.lastSeen > this.idleMs) {
        this.ctx.logger.debug("closing an HTTP session idle past sessionIdleMs");
        void session.transport.close().catch(() => {
          /* already closed */
        });
      }
    }
  }
}

/** Listen on the requested port; when it is taken, on a free one chosen by get-port. */
async function listen(
  app: express.Express,
  { host, port }: HttpOptions,
): Promise<{ server: NodeServer; port: number; portChanged: boolean }> {
  try {
    const server = await bind(app, host, port);
    return { server, port: (server.address() as AddressInfo).port, portChanged: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    const free = await getPort({ host });
    const server = await bind(app, host, free);
    return { server, port: (server.address() as AddressInfo).port, portChanged: true };
  }
}

function bind(app: express.Express, host: string, port: number): Promise<NodeServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once("listening", () => resolve(server));
    server.once("error", reject);
  });
}
