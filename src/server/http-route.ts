/**
 * The `/mcp` route, once a request passed the HTTP server's checks: a 2025-era session's
 * exchanges straight on node's response (http-legacy.ts's direct path); everything else through
 * the SDK's web-standard adapter to the endpoint of its era, 2026-07-28 (http-modern.ts) or 2025
 * (http-legacy.ts).
 */
import type { toNodeHandler } from "@modelcontextprotocol/node";
import { isLegacyRequest, type AuthInfo } from "@modelcontextprotocol/server";
import type { Request, Response } from "express";
import { jsonRpcError } from "../auth/http-security.js";
import { errorMessage } from "../errors.js";
import { lazyImport } from "../install.js";
import { isRecord } from "../json.js";
import type { ProxyContext } from "./context.js";
import { declinedByFront } from "./http-fast.js";
import type { LegacyEndpoint } from "./http-legacy.js";
import { notForLegacySession } from "./http-messages.js";
import type { ModernEndpoint } from "./http-modern.js";
import { callerOfAuth, envelopeClientName } from "./mcp-server.js";

/** Routes a checked request to the endpoint of its era. */
export function mcpRoute(
  ctx: ProxyContext,
  endpoints: { modern: ModernEndpoint; legacy: LegacyEndpoint },
) {
  const router = {
    fetch: async (
      request: globalThis.Request,
      opts?: { authInfo?: AuthInfo; parsedBody?: unknown },
    ) => {
      const options = opts ?? {};
      // Anything without a 2026-07-28 claim (header or `_meta` envelope) is 2025-era traffic.
      if (await isLegacyRequest(request, options.parsedBody))
        return endpoints.legacy.fetch(request, options);
      if (request.headers.has("mcp-session-id")) {
        return notForLegacySession(request.method, options.parsedBody);
      }
      const caller =
        callerOfAuth(options.authInfo) ?? envelopeClientName(envelopeOf(options.parsedBody));
      return endpoints.modern.fetch(request, options, caller);
    },
  };
  // The web-standard adapter, loaded with the first request that needs it: loading it loads
  // node's fetch implementation (~10 MB), which 2025-era sessions never need (http-direct*.ts).
  let node: Promise<ReturnType<typeof toNodeHandler>> | undefined;
  const adapter = () =>
    (node ??= lazyImport(() => import("@modelcontextprotocol/node")).then(
      ({ toNodeHandler }) =>
        toNodeHandler(router, {
          onerror: (err) => ctx.logger.error(`HTTP request failed: ${errorMessage(err)}`),
        }),
      (err: unknown) => {
        node = undefined; // the next request tries again
        throw err;
      },
    ));
  return async (req: Request, res: Response) => {
    try {
      // A 2025-era session's exchanges, straight on node's response (http-direct*.ts).
      const auth = (req as Request & { auth?: AuthInfo }).auth;
      // (Asked once: the front asked it already when it read the request, http-fast.ts.)
      if (!declinedByFront.has(req) && (await endpoints.legacy.direct(req, res, req.body, auth)))
        return;
      await (
        await adapter()
      )(req, res, req.body);
    } catch (err) {
      ctx.logger.error(`HTTP request failed: ${errorMessage(err)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    }
  };
}

/** The `_meta` of a single JSON-RPC message body, if any. */
function envelopeOf(body: unknown): unknown {
  if (!isRecord(body)) return undefined;
  const params = (body as { params?: unknown }).params;
  return typeof params === "object" && params !== null
    ? (params as { _meta?: unknown })._meta
    : undefined;
}
