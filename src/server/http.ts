/**
 * Streamable HTTP downstream: `/mcp` and `/mcp/<caller>` for both protocol eras, and `/healthz`.
 * Security checks (Host, Origin, bearer tokens) come first (src/auth/http-security.ts); then each request
 * goes to the endpoint of its era: 2026-07-28 (http-modern.ts) or 2025 (http-legacy.ts).
 */
import { createServer, type RequestListener, type Server as NodeServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import getPort from "get-port";
import { settledWithin } from "../clock.js";
import { errorMessage } from "../errors.js";
import { lazyImport } from "../install.js";
import { AuthThrottle, DEFAULT_THROTTLE, type ThrottleLimits } from "../auth/throttle.js";
import type { ProxyContext } from "./context.js";
import { fastFront } from "./http-fast.js";
import { LegacyEndpoint } from "./http-legacy.js";
import { ModernEndpoint } from "./http-modern.js";
import { allowedHostnames, jsonRpcError } from "../auth/http-security.js";
import { Authenticator } from "../auth/authenticator.js";
import type { VerifierOptions } from "../auth/oauth.js";
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
  /** How long a quick answer's headers wait to leave with it (10 to 20 ms by default; tests). */
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

/** Routes beside /mcp: prepared as the server starts, closed with it. */
export type HttpMount = (ctx: ProxyContext, auth: { tokens: Authenticator }) => MountedRoutes;

export interface MountedRoutes {
  /** Adds the routes to the app, when the app is built (the first request that needs it). */
  routes(app: Express): Promise<void>;
  close(): void;
}

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
  const allowed = allowedHostnames(options.host, options.allowedHosts);
  // The routes beside /mcp are prepared now (the dashboard records from the start); Express and
  // the routes load with the first request the front leaves to the app (http-app.ts).
  const mounted: MountedRoutes = options.mount?.(ctx, { tokens }) ?? {
    routes: () => Promise.resolve(),
    close: () => undefined,
  };
  let closed = false;
  const app = lazyApp(ctx, async () => {
    const { buildApp } = await lazyImport(() => import("./http-app.js"));
    // Closed meanwhile: the mounted routes' state is gone; the connection is being cut anyway.
    if (closed) throw new Error("the server is closing");
    return buildApp(ctx, { allowed, tokens, modern, legacy, routes: (a) => mounted.routes(a) });
  });

  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connections };
  // A session's plain request to /mcp is served in front of the app (http-fast.ts).
  const front = fastFront(ctx, allowed, legacy, app);
  const { server, port, portChanged } = await listen(front, options, limits).catch(
    (err: unknown) => {
      mounted.close();
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
      closed = true;
      mounted.close();
      legacy.close();
      await modern.close();
      await settledWithin(closing, CLOSE_GRACE_MS);
      server.closeAllConnections();
      await closing;
    },
  };
}

/**
 * The app's listener, built by `build` with the first request that reaches it; a request meanwhile
 * waits for it. A build that failed gets a 500 and is tried again with the next request.
 */
function lazyApp(ctx: ProxyContext, build: () => Promise<RequestListener>): RequestListener {
  let listener: RequestListener | undefined;
  let building: Promise<RequestListener> | undefined;
  return (req, res) => {
    if (listener) {
      listener(req, res);
      return;
    }
    (building ??= build()).then(
      (built) => {
        listener = built;
        built(req, res);
      },
      (err: unknown) => {
        building = undefined;
        ctx.logger.error(`HTTP request failed: ${errorMessage(err)}`);
        if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
      },
    );
  };
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
