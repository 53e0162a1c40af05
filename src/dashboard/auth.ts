/**
 * Who is looking at the dashboard. Without `auth` in the config, only this machine (a loopback
 * peer address) may, and it sees everything. With `auth`, a bearer token names the caller,
 * as on /mcp, and the viewer sees only that caller's servers, calls and logs.
 *
 * A browser cannot send a bearer header when it opens a page, so a token is exchanged once for
 * a cookie: posted from the login form (or given as `/?token=…`, which is then cleaned from the
 * address bar by a redirect). The cookie holds a random session id, never the token; it is
 * HttpOnly and SameSite=Strict; the server keeps only the token's sha256 digest with the caller
 * it named, and checks on every request that the current config still gives that digest that
 * caller (a token removed or remapped by a reload ends its sessions at once). An OAuth access
 * token (`auth.oauth`) is accepted the same way; its session lasts until the token's `exp`, and
 * while the config accepts tokens of the same issuer for the same audience. Scripts send
 * `Authorization: Bearer <token>` on every request instead.
 */
import { randomBytes } from "node:crypto";
import ipaddr from "ipaddr.js";
import type { Request, Response } from "express";
import { LRUCache } from "lru-cache";
import type { ProxyContext } from "../server/context.js";
import type { Authenticator } from "../auth/authenticator.js";
import { bearerToken, retryAfterSeconds, sha256 } from "../auth/http-security.js";
import { challenge } from "../auth/resource-metadata.js";
import type { AuthConfig } from "../config/types.js";

/** Who is asking: `caller` under auth, the machine's own user (sees everything) without. */
export interface Viewer {
  caller?: string;
}

const COOKIE = "mcpx_dashboard";
const SESSION_MS = 12 * 3600_000;
const MAX_SESSIONS = 1000;

/** Whether a socket's peer address is this machine. */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined || !ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === "loopback";
}

export class DashboardAuth {
  private readonly sessions = new LRUCache<string, Session>({
    max: MAX_SESSIONS,
    ttl: SESSION_MS,
  });

  constructor(
    private readonly ctx: ProxyContext,
    private readonly tokens: Authenticator,
  ) {}

  /** A token's check, with the config's callers for an OAuth token's array claim. */
  private check(auth: AuthConfig, token: string | null, req: Request) {
    return this.tokens.check(auth, token, req.socket.remoteAddress, (caller) =>
      Object.hasOwn(this.ctx.config.callers, caller),
    );
  }

  /** Whether a cookie session still stands under the current config. */
  private stands(auth: AuthConfig, session: Session): boolean {
    if (!session.oauth)
      return this.tokens.tokens.callerOfDigest(auth, session.digest) === session.caller;
    return (
      auth.oauth?.issuer === session.oauth.issuer &&
      auth.oauth.audience === session.oauth.audience &&
      Date.now() < session.oauth.expiresAt
    );
  }

  /**
   * The viewer of a request, or undefined when a refusal was sent: 403 for another machine
   * without auth, 401 (the login form for a page, JSON for the API) without a valid token.
   */
  async viewer(req: Request, res: Response, page: boolean): Promise<Viewer | undefined> {
    const auth = this.ctx.config.auth;
    if (!auth) {
      if (isLoopbackPeer(req.socket.remoteAddress)) return {};
      refuse(
        res,
        403,
        page,
        'The dashboard is served only to this machine when the config has no "auth". Add "auth" to open it to token holders.',
      );
      return undefined;
    }
    const token = bearerToken(req);
    if (token !== undefined) {
      const check = await this.check(auth, token, req);
      if ("caller" in check) return { caller: check.caller };
      if ("retryAfterMs" in check) {
        throttled(res, page, check.retryAfterMs);
        return undefined;
      }
      if ("unavailable" in check) {
        refuse(res, 503, page, `Cannot check the token now: ${check.unavailable}.`);
        return undefined;
      }
      if ("insufficientScope" in check) {
        res.setHeader(
          "WWW-Authenticate",
          challenge(auth, { error: "insufficient_scope", scope: check.insufficientScope }),
        );
        refuse(res, 403, page, `The token lacks a required scope: ${check.insufficientScope}.`);
        return undefined;
      }
      res.setHeader(
        "WWW-Authenticate",
        challenge(auth, { error: "invalid_token", description: check.reason }),
      );
      refuse(res, 401, page, "The bearer token is not valid.");
      return undefined;
    }
    const sid = cookieOf(req, COOKIE);
    const session = sid === undefined ? undefined : this.sessions.get(sid);
    if (session && this.stands(auth, session)) return { caller: session.caller };
    if (sid !== undefined) this.sessions.delete(sid);
    res.setHeader("WWW-Authenticate", challenge(auth, {}));
    refuse(
      res,
      401,
      page,
      auth.oauth
        ? "Sign in with a token from the config's auth.tokens or an access token from the authorization server."
        : "Sign in with a token from the config's auth.tokens.",
    );
    return undefined;
  }

  /**
   * Exchange a token (the login form's POST, or `/?token=`) for a session cookie, then redirect
   * to the dashboard's clean address. A wrong token gets the login form again, with 401.
   */
  async signIn(req: Request, res: Response, token: string | undefined): Promise<void> {
    const auth = this.ctx.config.auth;
    if (!auth) {
      res.redirect(303, "/");
      return;
    }
    const check = await this.check(auth, token ?? null, req);
    if ("retryAfterMs" in check) {
      throttled(res, true, check.retryAfterMs);
      return;
    }
    if ("unavailable" in check) {
      refuse(res, 503, true, `Cannot check the token now: ${check.unavailable}.`);
      return;
    }
    if ("insufficientScope" in check) {
      refuse(res, 403, true, `The token lacks a required scope: ${check.insufficientScope}.`);
      return;
    }
    if ("invalid" in check) {
      refuse(res, 401, true, "That token is not valid. Check auth.tokens in the config.");
      return;
    }
    const sid = randomBytes(32).toString("base64url");
    const oauth =
      check.expiresAt !== undefined && auth.oauth
        ? { issuer: auth.oauth.issuer, audience: auth.oauth.audience, expiresAt: check.expiresAt }
        : undefined;
    this.sessions.set(sid, { caller: check.caller, digest: sha256(token!), oauth });
    res.setHeader("Set-Cookie", cookie(req, sid, SESSION_MS / 1000));
    res.redirect(303, "/");
  }

  signOut(req: Request, res: Response): void {
    const sid = cookieOf(req, COOKIE);
    if (sid !== undefined) this.sessions.delete(sid);
    res.setHeader("Set-Cookie", cookie(req, "", 0));
    res.redirect(303, "/");
  }
}

/** A signed-in dashboard: the token's digest (static tokens) or the OAuth token's issuer and expiry. */
interface Session {
  caller: string;
  digest: Buffer;
  oauth?: { issuer: string; audience: string; expiresAt: number };
}

/**
 * HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Secure when
 * the request came over TLS. Path=/ because the dashboard is served at `/`; /mcp ignores it.
 */
function cookie(req: Request, value: string, maxAgeSeconds: number): string {
  return [
    `${COOKIE}=${value}`,
    "HttpOnly",
    "SameSite=Strict",
    "Path=/",
    `Max-Age=${maxAgeSeconds}`,
    ...(req.secure ? ["Secure"] : []),
  ].join("; ");
}

function cookieOf(req: Request, name: string): string | undefined {
  const header = req.header("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** 429 while the address is throttled for wrong tokens (src/auth/throttle.ts). */
function throttled(res: Response, page: boolean, ms: number): void {
  const seconds = retryAfterSeconds(ms);
  res.setHeader("Retry-After", String(seconds));
  refuse(res, 429, page, `Too many wrong tokens from this address: try again in ${seconds} s.`);
}

function refuse(res: Response, status: number, page: boolean, message: string): void {
  res.status(status);
  if (!page) {
    res.json({ error: message });
    return;
  }
  res.type("html").send(loginPage(status, message));
}

/** The sign-in page: a form that posts the token (so it never lands in the address bar). */
function loginPage(status: number, message: string): string {
  const form =
    status === 401
      ? `<form method="post" action="/login">
  <label for="token">Token</label>
  <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
  <button type="submit">Sign in</button>
</form>`
      : "";
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcpx dashboard: sign in</title><link rel="stylesheet" href="/assets/app.css"></head>
<body class="login"><main>
<h1>mcpx</h1>
<p role="alert">${escapeHtml(message)}</p>
${form}
</main></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}
