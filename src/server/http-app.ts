/**
 * The Express app behind the HTTP server's front (http-fast.ts): everything the front does not
 * serve itself. `/healthz`, the OAuth resource metadata, `/mcp` with a bearer token, an Origin,
 * a caller in its path or anything unusual, and the routes mounted beside it (the dashboard,
 * `/metrics`). Loaded with the first request that needs it (http.ts): a 2025-era client with
 * nothing of that is served without Express (~4 MB of RSS).
 */
import type { RequestListener } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/server";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { healthReport } from "../health/status.js";
import { textNestsDeeper } from "../json.js";
import { LIMITS, megabytes } from "../limits.js";
import type { ProxyContext } from "./context.js";
import { hostValidation, PARSE_ERROR_MESSAGE, TOO_DEEP_MESSAGE } from "./http-fast.js";
import type { LegacyEndpoint } from "./http-legacy.js";
import type { ModernEndpoint } from "./http-modern.js";
import { mcpRoute } from "./http-route.js";
import {
  bearerToken,
  jsonRpcError,
  originValidation,
  retryAfterSeconds,
} from "../auth/http-security.js";
import type { Authenticator, AuthCheck } from "../auth/authenticator.js";
import { challenge, RESOURCE_METADATA_PATHS, resourceMetadata } from "../auth/resource-metadata.js";
import type { AuthConfig } from "../config/types.js";
import { authInfoFor, cleanCaller } from "./mcp-server.js";

/** The HTTP routes: `/mcp`, and `/mcp/<caller>` to name the caller in the URL. */
const ROUTES = ["/mcp", "/mcp/:caller"];

export interface AppParts {
  /** Hostnames accepted in Host and Origin. */
  allowed: string[];
  tokens: Authenticator;
  modern: ModernEndpoint;
  legacy: LegacyEndpoint;
  /** Adds the routes mounted beside /mcp (http.ts's `HttpMount`). */
  routes(app: Express): Promise<void>;
}

/** The app: the checks every request passes, then its route. */
export async function buildApp(ctx: ProxyContext, parts: AppParts): Promise<RequestListener> {
  const { allowed, tokens, modern, legacy } = parts;
  const app = express();
  app.disable("x-powered-by");
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
  await parts.routes(app);
  app.use(errorRoute(ctx));
  return app;
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
