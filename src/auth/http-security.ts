/**
 * HTTP security: who may bind where, which Host and Origin headers a request may carry, and
 * bearer tokens. Pure functions and small classes; the routes of server/http.ts and the dashboard
 * apply them. A leaf of its own (src/auth/): config and logger below it, nothing above.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ServerResponse } from "node:http";
import { hostname, networkInterfaces } from "node:os";
import type { NextFunction, Request, Response } from "express";
import type { AuthConfig, Config } from "../config/load.js";
import type { AuthThrottle } from "./throttle.js";

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
export function originValidation(allowed: readonly string[]) {
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
export class TokenTable {
  private readonly digests = new WeakMap<AuthConfig, { digest: Buffer; caller: string }[]>();

  /** `throttle` slows down guessing: see throttle.ts. */
  constructor(private readonly throttle?: AuthThrottle) {}

  /**
   * A token presented from `address`, checked under the throttle: its caller; `invalid` (counted
   * as a failure); or `retryAfterMs` when the address must wait first (nothing was checked).
   */
  check(auth: AuthConfig, token: string | null, address: string | undefined): TokenCheck {
    const wait = this.throttle?.retryAfterMs(address) ?? 0;
    if (wait > 0) return { retryAfterMs: wait };
    const caller = token ? this.callerOf(auth, token) : undefined;
    if (caller !== undefined) return { caller };
    this.throttle?.failed(address);
    return { invalid: true };
  }

  callerOf(auth: AuthConfig, token: string): string | undefined {
    return this.callerOfDigest(auth, sha256(token));
  }

  /** {@link callerOf} for a token known only by its sha256 digest (a dashboard's cookie session). */
  callerOfDigest(auth: AuthConfig, presented: Buffer): string | undefined {
    let table = this.digests.get(auth);
    if (!table) {
      table = [...auth.tokens].map(([t, caller]) => ({ digest: sha256(t), caller }));
      this.digests.set(auth, table);
    }
    let found: string | undefined;
    for (const entry of table) {
      if (timingSafeEqual(entry.digest, presented)) found ??= entry.caller;
    }
    return found;
  }
}

/** What {@link TokenTable.check} found. */
export type TokenCheck = { caller: string } | { invalid: true } | { retryAfterMs: number };

/** Whole seconds to put in Retry-After for a wait in milliseconds (at least 1). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The sha256 digest of a token: what may be kept of it. */
export function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The token of an `Authorization: Bearer <token>` header; null when the header has another form. */
export function bearerToken(req: Request): string | null | undefined {
  const header = req.header("authorization");
  if (header === undefined) return undefined;
  return /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1] ?? null;
}

/**
 * A JSON-RPC error answer with an HTTP status (id null: it answers no particular request), on
 * node's response (Express's included).
 */
export function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}
