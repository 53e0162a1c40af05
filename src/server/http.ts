import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { Server as NodeServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { hostHeaderValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import express, { type NextFunction, type Request, type Response } from "express";
import type { AuthConfig, Config } from "../config/load.js";
import getPort from "get-port";
import { errorMessage } from "../errors.js";
import { healthReport } from "../health/status.js";
import { CancelledStreams } from "./cancelled-streams.js";
import type { ProxyContext } from "./context.js";
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

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
const WILDCARD = new Set(["0.0.0.0", "::", "[::]"]);

/** Whether binding `host` keeps mcpx on this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Whether a bind is allowed: beyond loopback, only with auth or an explicit opt-out. Returns the
 * problem to refuse with, or the warning to shout; nothing for a safe bind.
 */
export function exposure(
  host: string,
  config: Pick<Config, "auth">,
  allowUnauthenticated: boolean,
): { error: string } | { warning: string } | undefined {
  if (isLoopback(host) || config.auth) return undefined;
  if (!allowUnauthenticated) {
    return {
      error: `--host ${host} makes mcpx reachable from other machines, but the config has no "auth". Add "auth": { "tokens": { "\${MCPX_TOKEN}": "caller-name" } }, bind 127.0.0.1, or pass --allow-unauthenticated to let anyone who can reach ${host} use every upstream.`,
    };
  }
  return {
    warning: `SERVING WITHOUT AUTHENTICATION ON ${host}: anyone who can reach this address can call every upstream tool of the default profile. Configure "auth" to stop this.`,
  };
}

/** Hostnames (as URL.hostname writes them) a request may name in its Host or Origin header. */
export function allowedHostnames(bind: string, extra: readonly string[] = []): string[] {
  const names = new Set(["localhost", "127.0.0.1", "[::1]", ...extra]);
  const add = (h: string) => names.add(h.includes(":") && !h.startsWith("[") ? `[${h}]` : h);
  if (!isLoopback(bind)) {
    names.add(hostname());
    if (WILDCARD.has(bind)) {
      add(bind);
      for (const addrs of Object.values(networkInterfaces()))
        for (const a of addrs ?? []) add(a.address);
    } else {
      add(bind);
    }
  }
  return [...names];
}

/** Refuse requests from a browser page of another origin (403), as MCP's security guidance asks. */
function originValidation(allowed: readonly string[]) {
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.header("origin");
    if (origin === undefined) return next();
    let host: string | undefined;
    try {
      host = new URL(origin).hostname;
    } catch {
      // "null" and other opaque origins: not ours.
    }
    if (host !== undefined && allowed.includes(host)) return next();
    jsonRpcError(res, 403, -32000, `Forbidden: origin ${origin} may not use this server.`);
  };
}

/**
 * Bearer tokens as sha256 digests: comparing equal-length digests with timingSafeEqual, against
 * every token without stopping at a match, leaks neither a token's bytes nor which one matched.
 */
class TokenTable {
  private readonly digests = new WeakMap<AuthConfig, { digest: Buffer; caller: string }[]>();

  callerOf(auth: AuthConfig, token: string): string | undefined {
    let table = this.digests.get(auth);
    if (!table) {
      table = [...auth.tokens].map(([t, caller]) => ({ digest: sha256(t), caller }));
      this.digests.set(auth, table);
    }
    const presented = sha256(token);
    let found: string | undefined;
    for (const entry of table) {
      if (timingSafeEqual(entry.digest, presented)) found ??= entry.caller;
    }
    return found;
  }
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
/** Tool arguments can carry whole files (filesystem write_file): allow more than express's 100 kB. */
const BODY_LIMIT = "32mb";

/** The HTTP routes: `/mcp`, and `/mcp/<caller>` to name the caller in the URL. */
const ROUTES = ["/mcp", "/mcp/:caller"];

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
  const log = ctx.logger;
  const sessions = new Map<string, Session>();
  const tokens = new TokenTable();
  const app = express();
  app.disable("x-powered-by");
  const allowed = allowedHostnames(options.host, options.allowedHosts);
  // DNS-rebinding protection: a page on another site must not reach the proxy by a name of its own.
  app.use(hostHeaderValidation(allowed));
  app.use(originValidation(allowed));
  app.use(express.json({ limit: BODY_LIMIT }));

  // 200 whenever mcpx serves; the body says how each upstream is doing. With auth configured,
  // the per-server detail (names, errors) is for token holders only; a load balancer's
  // unauthenticated probe still gets the overall status.
  app.get("/healthz", (req: Request, res: Response) => {
    const report = healthReport(ctx.registry);
    const auth = ctx.config.auth;
    if (auth) {
      const m = /^Bearer[ ]+(\S+)\s*$/i.exec(req.header("authorization") ?? "");
      const caller = m?.[1] === undefined ? undefined : tokens.callerOf(auth, m[1]);
      if (caller === undefined) {
        res.json({ status: report.status });
        return;
      }
      // A token holder sees the servers of its own profile, as describe shows them.
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
  });

  /** Authenticate and name the caller; false when a 401 went out. */
  const identify = (req: Request, res: Response): { caller?: string; pinned: boolean } | false => {
    // Read per request: a reload that adds, changes or removes tokens applies at once.
    const auth = ctx.config.auth;
    let caller: string | undefined;
    if (auth) {
      const header = req.header("authorization") ?? "";
      const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
      caller = m?.[1] === undefined ? undefined : tokens.callerOf(auth, m[1]);
      if (caller === undefined) {
        res.setHeader(
          "WWW-Authenticate",
          m ? 'Bearer realm="mcpx", error="invalid_token"' : 'Bearer realm="mcpx"',
        );
        jsonRpcError(
          res,
          401,
          -32000,
          m
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
  };

  const existing = (
    req: Request,
    who: { caller?: string; pinned: boolean },
  ): Session | undefined => {
    const id = req.header("mcp-session-id");
    const session = id === undefined ? undefined : sessions.get(id);
    // A session opened with one token is invisible to every other token.
    if (session?.owner !== undefined && who.pinned && session.owner !== who.caller)
      return undefined;
    return session;
  };

  /** Count the response as activity of `session` while it is open. */
  const inUse = (session: Session, res: Response) => {
    session.open += 1;
    session.lastSeen = Date.now();
    res.once("close", () => {
      session.open -= 1;
      session.lastSeen = Date.now();
    });
  };

  // Sessions whose client left without DELETE would otherwise live (and listen to catalog
  // changes) until mcpx exits.
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const session of sessions.values()) {
        if (session.open === 0 && now - session.lastSeen > idleMs) {
          log.debug("closing an HTTP session idle past sessionIdleMs");
          void session.transport.close().catch(() => {
            /* already closed */
          });
        }
      }
    },
    Math.max(10, Math.min(60_000, Math.floor(idleMs / 2))),
  );
  sweeper.unref();

  app.post(ROUTES, async (req: Request, res: Response) => {
    try {
      const who = identify(req, res);
      if (!who) return;
      const session = existing(req, who);
      if (!session) {
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
        const downstream = createMcpServer(ctx);
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, {
              transport,
              downstream,
              ...(who.pinned && who.caller !== undefined && { owner: who.caller }),
              lastSeen: Date.now(),
              open: 0,
              streams: new CancelledStreams(),
            });
          },
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
          void downstream.close().catch(() => {
            /* already closed */
          });
        };
        await downstream.server.connect(transport);
        await transport.handleRequest(req, res, req.body);
        // The SDK refused the initialize (bad Accept, bad version…): no session was made, so
        // nothing else will ever close this server and its catalog subscription.
        if (transport.sessionId === undefined) await downstream.close();
        return;
      }
      inUse(session, res);
      session.streams.track(req.body, res);
      await session.transport.handleRequest(req, res, req.body);
      session.streams.endCancelled(req.body, session.transport);
    } catch (err) {
      log.error(`HTTP request failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  });

  const sessionRequest = async (req: Request, res: Response) => {
    const who = identify(req, res);
    if (!who) return;
    const session = existing(req, who);
    if (!session) {
      jsonRpcError(
        res,
        req.header("mcp-session-id") ? 404 : 400,
        -32000,
        "Unknown or missing mcp-session-id.",
      );
      return;
    }
    inUse(session, res);
    try {
      await session.transport.handleRequest(req, res);
    } catch (err) {
      log.error(`HTTP ${req.method} failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
  app.get(ROUTES, sessionRequest);
  app.delete(ROUTES, sessionRequest);

  // Last: a body that is not JSON (or too large) gets a JSON-RPC error, not Express's HTML page,
  // and nothing of the body reaches a log (express's default handler prints it with console).
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
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
      log.error(`HTTP request failed: ${typeof type === "string" ? type : "unexpected error"}`);
      jsonRpcError(res, 500, -32603, "Internal error");
    }
  });

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
      clearInterval(sweeper);
      // Stop accepting first, then end every session (their SSE streams keep sockets open).
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.map((s) => s.downstream.close()));
      server.closeAllConnections();
      await closing;
    },
  };
}

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
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
