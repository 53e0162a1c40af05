/**
 * The front of the HTTP server: a 2025-era session's requests to `/mcp` (its `initialize`, a
 * `tools/call` most often, its notifications and answers, its GET stream and its DELETE), when
 * nothing about them needs the Express app, are read and served without it (Express's routing,
 * its request and response decoration and body-parser were about a tenth of mcpx's CPU per call,
 * and loading Express ~4 MB of RSS: the app is built only for what comes to it, http.ts).
 * Everything else goes to the app untouched, as it arrives.
 *
 * Only a request the app would pass through the same checks with no other outcome is taken: no
 * `auth` configured, no Origin, a Host the app allows; a POST with a UTF-8 JSON body of a
 * declared length within the limit, uncompressed; a GET or DELETE of a session, without a body.
 * A body is then read and checked here as body-parser and the app's error route would (depth
 * first, then JSON), with the same answers. A request that is not one the direct path serves
 * (http-direct.ts, http-direct-session.ts) goes on to the app, its body already parsed:
 * body-parser leaves a request whose body was read as it is.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Request, Response } from "express";
import { isJsonContentType, validateHostHeader } from "@modelcontextprotocol/server";
import { jsonRpcError } from "../auth/http-security.js";
import { errorMessage } from "../errors.js";
import { textNestsDeeper } from "../json.js";
import { LIMITS } from "../limits.js";
import type { ProxyContext } from "./context.js";
import type { LegacyEndpoint } from "./http-legacy.js";
import { authInfoFor, cleanCaller } from "./mcp-server.js";

/** The only charset a fast request may name: what body-parser decodes it with anyway. */
const UTF8 = /^\s*charset\s*=\s*"?utf-8"?\s*$/i;

/** Where the app's error route and body-parser agree: the answers to a body they refuse. */
export const TOO_DEEP_MESSAGE = `Invalid Request: the body nests objects and arrays more than ${LIMITS.messageDepth} levels deep.`;
export const PARSE_ERROR_MESSAGE = "Parse error: the body is not valid JSON.";

/**
 * Refuse a request whose Host names none of `allowed` (403): DNS-rebinding protection. What
 * `hostHeaderValidation` of `@modelcontextprotocol/node` does, with the same answer; that
 * package is loaded only when a request needs its web-standard adapter (it reads the global
 * `Headers` when it loads, which loads node's fetch implementation, ~10 MB).
 */
export function hostValidation(allowed: readonly string[]) {
  const names = [...allowed];
  return (req: Request, res: Response): boolean => {
    const result = validateHostHeader(req.headers.host, names);
    if (result.ok) return true;
    res.writeHead(403, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify({
        jsonrpc: "2.0",
        error: { code: -32000, message: result.message },
        id: null,
      }),
    );
    return false;
  };
}

/** The app, with a session's plain requests to `/mcp` served in front of it. */
export function fastFront(
  ctx: ProxyContext,
  allowedHosts: string[],
  legacy: LegacyEndpoint,
  app: RequestListener,
): RequestListener {
  // A client sends the same Host every time: the last one allowed is not checked again.
  const hosts = { allowed: undefined as string | undefined, check: allowedHosts };
  return (req, res) => {
    const length = fastLength(ctx, hosts, req);
    if (length === undefined) {
      app(req, res);
      return;
    }
    if (length === 0) {
      void serve(ctx, legacy, app, req, res, undefined);
      return;
    }
    readBody(req, length).then(
      (body) => serve(ctx, legacy, app, req, res, body),
      () => {
        // The client went away or sent less than it declared: what the app's error route says.
        if (!res.headersSent)
          jsonRpcError(res, 400, -32600, "Bad request: the body could not be read.");
      },
    );
  };
}

/**
 * The declared body length of a request the front may take (0: a GET or DELETE of a session,
 * which has none), or undefined.
 */
function fastLength(
  ctx: ProxyContext,
  hosts: { allowed: string | undefined; check: string[] },
  req: IncomingMessage,
): number | undefined {
  if (req.url !== "/mcp" || ctx.config.auth !== undefined) return;
  const h = req.headers;
  if (h.origin !== undefined || h["transfer-encoding"] !== undefined) return;
  const length = req.method === "POST" ? postLength(h) : sessionRequest(req) ? 0 : undefined;
  if (length === undefined) return;
  if (h.host === undefined || h.host !== hosts.allowed) {
    if (!validateHostHeader(h.host, hosts.check).ok) return;
    hosts.allowed = h.host;
  }
  return length;
}

/** A POST's JSON body length, when the front may read it. */
function postLength(h: IncomingMessage["headers"]): number | undefined {
  const encoding = h["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return;
  const type = h["content-type"];
  if (type === undefined || !isJsonContentType(type)) return;
  const params = type.split(";").slice(1);
  if (params.some((p) => p.trim() !== "" && !UTF8.test(p))) return;
  const declared = h["content-length"];
  if (declared === undefined || !/^\d{1,9}$/.test(declared)) return;
  const length = Number(declared);
  if (length === 0 || length > LIMITS.httpBodyBytes) return;
  return length;
}

/**
 * A session's GET (its stream) or DELETE that says nothing of a body (body-parser looks at one
 * of length 0: its type and encoding).
 */
function sessionRequest(req: IncomingMessage): boolean {
  const h = req.headers;
  return (
    (req.method === "GET" || req.method === "DELETE") &&
    typeof h["mcp-session-id"] === "string" &&
    h["content-length"] === undefined
  );
}

/** Requests the direct path declined here: the app's route does not ask it again. */
export const declinedByFront = new WeakSet<IncomingMessage>();

/** The body, once `length` bytes arrived and the request ended. */
function readBody(req: IncomingMessage, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    req.on("data", (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    req.once("end", () => {
      if (received === length) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      else reject(new Error("body length differs from Content-Length"));
    });
    req.once("error", reject);
    req.once("aborted", () => reject(new Error("aborted")));
  });
}

async function serve(
  ctx: ProxyContext,
  legacy: LegacyEndpoint,
  app: RequestListener,
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer | undefined,
): Promise<void> {
  let body: unknown;
  if (raw !== undefined) {
    // body-parser: the verify step (depth) sees the raw body first, then JSON.parse (strict: an
    // object or array), the text decoded as UTF-8 without a byte-order mark.
    if (textNestsDeeper(raw, LIMITS.messageDepth)) {
      jsonRpcError(res, 400, -32600, TOO_DEEP_MESSAGE);
      return;
    }
    body = parseStrict(raw.toString("utf8"));
    if (body === undefined) {
      jsonRpcError(res, 400, -32700, PARSE_ERROR_MESSAGE);
      return;
    }
    (req as IncomingMessage & { body?: unknown }).body = body;
  }
  try {
    const caller = cleanCaller(headerText(req.headers["x-mcpx-caller"]));
    if (await legacy.direct(req, res, body, authInfoFor(caller, false))) return;
    declinedByFront.add(req);
  } catch (err) {
    ctx.logger.error(`HTTP request failed: ${errorMessage(err)}`);
    if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
    return;
  }
  app(req, res);
}

/** JSON as body-parser's strict mode reads it: an object or an array, else undefined. */
function parseStrict(text: string): unknown {
  const trimmed = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const first = /^[ \t\n\r]*(.)/s.exec(trimmed)?.[1];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}
