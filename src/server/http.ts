/**
 * Streamable HTTP downstream: `/mcp` and `/mcp/<caller>` for both protocol eras, and `/healthz`.
 * Security checks (Host, Origin, bearer tokens) come first (src/auth/http-security.ts); then each request
 * goes to the endpoint of its era: 2026-07-28 (http-modern.ts) or 2025 (http-legacy.ts).
 */
import { createServer, type RequestListener, type Server as NodeServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { AuthInfo } from "@modelcontextprotocol/server";
import express, { type NextFunction, type Request, type Response } from "express";
import getPort from "get-port";
import { settledWithin } from "../clock.js";
import { healthReport } from "../health/status.js";
import { textNestsDeeper } from "../json.js";
import { LIMITS, megabytes } from "../limits.js";
import { AuthThrottle, DEFAULT_THROTTLE, type ThrottleLimits } from "../auth/throttle.js";
import type { ProxyContext } from "./context.js";
import { fastFront, hostValidation, PARSE_ERROR_MESSAGE, TOO_DEEP_MESSAGE } from "./http-fast.js";
import { LegacyEndpoint } from "./http-legacy.js";
import { ModernEndpoint } from "./http-modern.js";
import { mcpRoute } from "./http-route.js";
import {
  allowedHostnames,
  bearerToken,
  jsonRpcError,
  originValidation,
  retryAfterSeconds,
} from "../auth/http-security.js";
import { Authenticator, type AuthCheck } from "../auth/authenticator.js";
import type { VerifierOptions } from "../auth/oauth.js";
import { challenge, RESOURCE_METADATA_PATHS, resourceMetadata } from "../auth/resource-metadata.js";
import type { AuthConfig } from "../config/types.js";
import { authInfoFor, cleanCaller } from "./mcp-server.js";
import { sessionKey } from "./session-token.js";

export interface HttpOptions {
  host: string;
  port: number;
  /** More hostnames accepted in Host and Origin, e.g. the name of a load balancer in front. */
  allowedHosts?: string[];
  /**
   * End a 2025-era session after this long with no request and no open stream on this replica
   * (a client that went away without DELETE). Default 30 minutes; a client that comes back gets
   * 404 and initializes anew.
   */
  sessionIdleMs?: number;
  /** A 2025-era session id is refused this long after its initialize. Default 24 hours. */
  sessionMaxAgeMs?: number;
  /** The clock session ids are issued and checked with (tests). */
  now?: () => number;
  /** How long a quick answer's headers wait to leave with it (default 10 ms; tests). */
  headersHoldMs?: number;
  /** Connection caps and timeouts (defaults: DEFAULT_CONNECTION_LIMITS). */
  connections?: Partial<ConnectionLimits>;
  /** Throttling of failed bearer tokens, and its clock (defaults: DEFAULT_THROTTLE, Date.now). */
  throttle?: Partial<ThrottleLimits> & { now?: () => number };
  /** How OAuth access tokens are checked: clock, JWKS cooldown (tests). */
  oauth?: VerifierOptions;
  /**
   * More routes beside /mcp, behind the same Host, Origin and token checks: the web dashboard
   * (serve.ts passes src/dashboard's mountDashboard; the dashboard sits above the server, so the
   * server never imports it).
   */
  mount?: HttpMount;
}

/** Mounts routes on the app; closed with the server. */
export type HttpMount = (
  app: express.Express,
  ctx: ProxyContext,
  auth: { tokens: Authenticator },
) => { close(): void };

/** What one HTTP server holds open and how long a client may take to send a request. */
export interface ConnectionLimits {
  /** Open connections at once; more are closed as they arrive (node's `maxConnections`). */
  maxConnections: number;
  /** Time to send the request headers (node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** Time to send the whole request, body included (node's `requestTimeout`); streams after it are not bound. */
  requestTimeoutMs: number;
}

/**
 * Enough for hundreds of clients with a stream each; a request that trickles in (slowloris) is
 * cut after 10 s of headers or 60 s in all (a 4 MB body at 70 kB/s).
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
};

export interface HttpHandle {
  /** The URL actually served, e.g. http://127.0.0.1:3000/mcp */
  readonly url: string;
  readonly port: number;
  /** True when the requested port was taken and another was chosen. */
  readonly portChanged: boolean;
  /** 2025-era sessions live on this replica now. */
  readonly sessionCount: number;
  close(): Promise<void>;
}

const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
const DEFAULT_SESSION_MAX_AGE_MS = 24 * 3600_000;
/** How long closing waits for ended streams to reach their clients before cutting connections. */
const CLOSE_GRACE_MS = 1_000;
/** Sessions one replica keeps state for (idle time, log level, stream); see legacy-sessions.ts. */
const MAX_SESSIONS = 10_000;
/**
 * Sessions whose SDK server is kept between requests (session-servers.ts); the others build one
 * per request. A few tens of kB each.
 */
const MAX_KEPT_SERVERS = 512;

export { allowedHostnames, exposure, isLoopback } from "../auth/http-security.js";

/** The HTTP routes: `/mcp`, and `/mcp/<caller>` to name the caller in the URL. */
const ROUTES = ["/mcp", "/mcp/:caller"];

/**
 * Serve streamable HTTP at /mcp. 2026-07-28 requests are stateless; 2025 ones have sessions
 * (POST, GET for the server-to-client stream, DELETE) that any replica with the same config
 * serves.
 *
 * Every request is checked in this order: Host (DNS rebinding), Origin, bearer token (when the
 * config has `auth`). Then its caller is resolved, per request: the token's caller, else the
 * `/mcp/<caller>` path, else `X-MCPX-Caller`; mcp-server.ts falls back to clientInfo.name.
 * Nothing about a request is forwarded upstream: upstream sessions carry only their config.
 */
export async function serveHttp(ctx: ProxyContext, options: HttpOptions): Promise<HttpHandle> {
  const tokens = new Authenticator(
    ctx.logger,
    new AuthThrottle(ctx.logger, options.throttle?.now ?? Date.now, {
      ...DEFAULT_THROTTLE,
      ...options.throttle,
    }),
    options.oauth,
  );
  const modern = new ModernEndpoint(ctx);
  const legacy = new LegacyEndpoint(ctx, {
    key: sessionKey(ctx.config),
    idleMs: options.sessionIdleMs ?? ctx.config.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    maxAgeMs: options.sessionMaxAgeMs ?? DEFAULT_SESSION_MAX_AGE_MS,
    maxSessions: MAX_SESSIONS,
    maxKeptServers: MAX_KEPT_SERVERS,
    now: options.now ?? Date.now,
    ...(options.headersHoldMs !== undefined && { headersHoldMs: options.headersHoldMs }),
  });
  const app = express();
  app.disable("x-powered-by");
  const allowed = allowedHostnames(options.host, options.allowedHosts);
  // DNS-rebinding protection: a page on another site must not reach the proxy by a name of its own.
  const hostValid = hostValidation(allowed);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (hostValid(req, res)) next();
  });
  app.use(originValidation(allowed));
  app.get("/healthz", healthz(ctx, tokens));
  // RFC 9728: where OAuth clients learn which authorization server issues tokens for /mcp.
  app.get(RESOURCE_METADATA_PATHS, (_req: Request, res: Response) => {
    const oauth = ctx.config.auth?.oauth;
    if (oauth) res.json(resourceMetadata(oauth));
    else res.status(404).json({ error: 'This mcpx accepts no OAuth tokens (no "auth.oauth").' });
  });
  // MCP first: its requests never walk through the dashboard's routes. The token is checked
  // before a byte of the body is read: an unauthenticated request costs no parsing.
  app.all(ROUTES, authenticate(ctx, tokens), parseBody(), mcpRoute(ctx, { modern, legacy }));
  // The web dashboard: `/`, `/assets/*`, `/api/*` (src/dashboard/), same checks as /mcp above.
  const dashboard = options.mount?.(app, ctx, { tokens }) ?? { close: () => undefined };
  app.use(errorRoute(ctx));

  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connections };
  // A session's plain request to /mcp is served in front of the app (http-fast.ts).
  const front = fastFront(ctx, allowed, legacy, app);
  const { server, port, portChanged } = await listen(front, options, limits).catch(
    (err: unknown) => {
      dashboard.close();
      throw err;
    },
  );
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}/mcp`;
  return {
    url,
    port,
    portChanged,
    get sessionCount() {
      return legacy.sessionCount;
    },
    close: async () => {
      // Stop accepting first, then end every stream: 2026-07-28 listeners get the graceful
      // end of their subscription. Connections that do not finish soon are cut.
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      dashboard.close();
      legacy.close();
      await modern.close();
      await settledWithin(closing, CLOSE_GRACE_MS);
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
function healthz(ctx: ProxyContext, tokens: Authenticator) {
  return async (req: Request, res: Response) => {
    const report = healthReport(ctx.registry, ctx.shared?.status());
    const auth = ctx.config.auth;
    if (auth) {
      const token = bearerToken(req);
      // A throttled address is not told whether its token is good (the detail would say).
      const check =
        token === undefined ? undefined : await tokens.check(auth, token, peer(req), known(ctx));
      const caller = check && "caller" in check ? check.caller : undefined;
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
 * Authenticate a request and name its caller in `req.auth` (the SDK hands it to request
 * handlers as `authInfo`), before its body is read; a refusal (401, or 429 while the address is
 * throttled) closes the connection, so an unread body is never drained. Read per request: a
 * reload that adds, changes or removes tokens applies at once.
 */
function authenticate(ctx: ProxyContext, tokens: Authenticator) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const auth = ctx.config.auth;
    const done = (caller: string | undefined) => {
      const fromPath = req.params.caller;
      caller ??=
        cleanCaller(typeof fromPath === "string" ? fromPath : undefined) ??
        cleanCaller(req.header("x-mcpx-caller"));
      (req as Request & { auth?: AuthInfo }).auth = authInfoFor(caller, auth !== undefined);
      next();
    };
    if (!auth) return done(undefined);
    const token = bearerToken(req);
    const checking: Promise<AuthCheck> =
      token === undefined
        ? Promise.resolve({ invalid: true })
        : tokens.check(auth, token, peer(req), known(ctx));
    checking.then(
      (check) => {
        if ("caller" in check) done(check.caller);
        else refuse(res, auth, check, token !== undefined);
      },
      (err: unknown) => next(err),
    );
  };
}

/** Whether `callers` names a caller (an OAuth token's array claim picks the first it names). */
function known(ctx: ProxyContext) {
  return (caller: string) => Object.hasOwn(ctx.config.callers, caller);
}

/**
 * Answer a request whose token was not accepted; the connection is closed, so an unread body
 * is never drained. 401 (no or a bad token), 403 (an OAuth token without the scopes), 429
 * (throttled), 503 (the authorization server cannot be reached to check an OAuth token).
 */
function refuse(
  res: Response,
  auth: AuthConfig,
  check: Exclude<AuthCheck, { caller: string }>,
  hadToken: boolean,
): void {
  res.setHeader("Connection", "close");
  if ("retryAfterMs" in check) {
    const seconds = retryAfterSeconds(check.retryAfterMs);
    res.setHeader("Retry-After", String(seconds));
    jsonRpcError(
      res,
      429,
      -32000,
      `Too many wrong bearer tokens from this address: retry after ${seconds} s with a valid token.`,
    );
  } else if ("insufficientScope" in check) {
    res.setHeader(
      "WWW-Authenticate",
      challenge(auth, { error: "insufficient_scope", scope: check.insufficientScope }),
    );
    jsonRpcError(
      res,
      403,
      -32000,
      `Forbidden: the access token lacks a required scope. Ask the authorization server for a token with scope "${check.insufficientScope}".`,
    );
  } else if ("unavailable" in check) {
    res.setHeader("Retry-After", "5");
    jsonRpcError(res, 503, -32000, `Service unavailable: ${check.unavailable}. Retry later.`);
  } else {
    res.setHeader(
      "WWW-Authenticate",
      challenge(auth, hadToken ? { error: "invalid_token", description: check.reason } : {}),
    );
    jsonRpcError(
      res,
      401,
      -32000,
      hadToken
        ? `Unauthorized: the bearer token is not valid${check.reason ? `: ${check.reason}` : ""}.`
        : auth.oauth
          ? "Unauthorized: send Authorization: Bearer <token>, an access token from the authorization server named in the resource metadata (WWW-Authenticate resource_metadata)."
          : "Unauthorized: send Authorization: Bearer <token>.",
    );
  }
}

/** The remote address of a request's connection (what throttling counts by). */
export function peer(req: Request): string | undefined {
  return req.socket.remoteAddress;
}

/**
 * The body parser of /mcp, after authentication. Tool arguments can carry whole files
 * (filesystem write_file): more than express's 100 kB. A body nested deeper than any MCP
 * message needs is refused from its bytes, before JSON.parse or anything walks it: the SDK's
 * validation recurses, and a few thousand levels would overflow its stack.
 */
function parseBody() {
  return express.json({
    limit: LIMITS.httpBodyBytes,
    verify: (_req, _res, body) => {
      if (textNestsDeeper(body, LIMITS.messageDepth))
        throw Object.assign(new Error("body nested too deep"), {
          status: 400,
          type: TOO_DEEP,
        });
    },
  });
}

const TOO_DEEP = "entity.too.deep";

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
    if (type === TOO_DEEP) jsonRpcError(res, 400, -32600, TOO_DEEP_MESSAGE);
    else if (type === "entity.parse.failed") jsonRpcError(res, 400, -32700, PARSE_ERROR_MESSAGE);
    else if (type === "entity.too.large")
      jsonRpcError(
        res,
        413,
        -32600,
        `Request too large: the body may be at most ${megabytes(LIMITS.httpBodyBytes)}. Send large content as a file the upstream can read.`,
      );
    else if (type === "charset.unsupported" || type === "encoding.unsupported")
      jsonRpcError(
        res,
        415,
        -32600,
        "Unsupported body encoding: send the JSON-RPC message as UTF-8 JSON (Content-Type: application/json), uncompressed or gzip, deflate or br.",
      );
    else if (clientError(err))
      jsonRpcError(res, 400, -32600, "Bad request: the body could not be read.");
    else {
      ctx.logger.error(
        `HTTP request failed: ${typeof type === "string" ? type : "unexpected error"}`,
      );
      jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
}

/** An error the body parser raised for the request's fault (a 4xx it marks as such). */
function clientError(err: unknown): boolean {
  const status = (err as { status?: unknown }).status;
  return typeof status === "number" && status >= 400 && status < 500;
}

/** Listen on the requested port; when it is taken, on a free one chosen by get-port. */
async function listen(
  app: RequestListener,
  { host, port }: HttpOptions,
  limits: ConnectionLimits,
): Promise<{ server: NodeServer; port: number; portChanged: boolean }> {
  try {
    const server = await bind(app, host, port, limits);
    return { server, port: (server.address() as AddressInfo).port, portChanged: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    const free = await getPort({ host });
    const server = await bind(app, host, free, limits);
    return { server, port: (server.address() as AddressInfo).port, portChanged: true };
  }
}

function bind(
  app: RequestListener,
  host: string,
  port: number,
  limits: ConnectionLimits,
): Promise<NodeServer> {
  return new Promise((resolve, reject) => {
    const server = createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        // How often node looks for requests past those timeouts (its default, 30 s, would let
        // a trickling client hold a connection three times longer than headersTimeout).
        connectionsCheckingInterval: Math.max(
          10,
          Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)),
        ),
      },
      app,
    );
    server.maxConnections = limits.maxConnections;
    server.once("listening", () => resolve(server));
    server.once("error", reject);
    server.listen(port, host);
  });
}
