/**
 * mcpx as an OAuth 2.1 protected resource: JWT access tokens of one authorization server,
 * checked with jose. The issuer's metadata (RFC 8414, else OpenID discovery) names its JWKS;
 * jose's remote key set refetches it when a token names a key it does not know (rotation), at
 * most once per cooldown. An unreachable issuer is not fatal: its tokens are answered
 * "unavailable" (503) until it is back, said once in the log, and retried at most every
 * {@link RETRY_MS}. Nothing here ever logs or returns a token.
 */
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import { LRUCache } from "lru-cache";
import type { OAuthResourceConfig } from "../config/types.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { sha256 } from "./http-security.js";
import { introspect, judge } from "./introspection.js";

/** What a presented access token is. Reasons are safe to show: they never quote the token. */
export type OAuthCheck =
  | { caller: string; expiresAt: number }
  | { invalid: string }
  | { insufficientScope: string }
  | { unavailable: string };

export interface VerifierOptions {
  /** The clock tokens' `exp`/`nbf` are checked against (tests). Default Date.now. */
  now?: () => number;
  /** Least time between two JWKS fetches for an unknown `kid` (jose's cooldown). Default 30 s. */
  jwksCooldownMs?: number;
  /** How long a metadata or JWKS fetch may take. Default 5 s. */
  fetchTimeoutMs?: number;
}

/** Clock skew tolerated on `exp` and `nbf`, in seconds. */
export const CLOCK_SKEW_S = 30;
/** After a failed discovery, requests wait this long before the issuer is asked again. */
export const RETRY_MS = 5_000;
/** How long an introspection answer is reused (never past the token's `exp`). */
export const INTROSPECTION_CACHE_MS = 60_000;
/**
 * Asymmetric algorithms only: `none` and HS* (a shared secret, which a resource server
 * would have to hold and an issuer's JWKS never publishes) are refused.
 */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** What discovery found: the key set, the issuer tokens carry, the introspection endpoint. */
interface IssuerKeys {
  jwks: JWTVerifyGetKey;
  issuer: string;
  introspectionEndpoint?: string;
}

/** The verifier of one `auth.oauth` config (a reload that changes it gets a new one). */
export class AccessTokenVerifier {
  private keys: IssuerKeys | undefined;
  /** Introspection answers by the token's sha256 (hex): never the token itself. */
  private readonly introspected = new LRUCache<string, { claims: JWTPayload; until: number }>({
    max: 10_000,
  });
  private discovering: Promise<void> | undefined;
  private failure: { at: number; reason: string } | undefined;
  private readonly now: () => number;

  constructor(
    private readonly config: OAuthResourceConfig,
    private readonly logger: Logger,
    private readonly options: VerifierOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Check `token`: signature against the issuer's keys, `iss`, `aud`, `exp`/`nbf` (with
   * {@link CLOCK_SKEW_S} of skew), the required scopes; then its caller from `callerClaim`.
   * `known` says whether a caller is named in `callers` (for array claims, see callerOf).
   */
  async verify(token: string, known: (caller: string) => boolean): Promise<OAuthCheck> {
    // Right after a failure, answer at once: a request must not wait out a fetch timeout each
    // time, nor every request knock on an issuer that is down.
    if (this.failure && this.now() - this.failure.at < RETRY_MS && !this.discovering)
      return { unavailable: this.failure.reason };
    const keys = await this.discover();
    if ("unavailable" in keys) return keys;
    if (this.config.introspection && !looksLikeJwt(token))
      return this.checkOpaque(token, keys, known);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys.jwks, {
        issuer: keys.issuer,
        audience: this.config.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_SKEW_S,
        currentDate: new Date(this.now()),
        requiredClaims: ["exp"],
      }));
    } catch (err) {
      const refused = refusal(err);
      if (refused !== undefined) {
        this.recovered();
        return { invalid: refused };
      }
      // The key set could not be fetched: the issuer, not the token, is the problem.
      return { unavailable: this.failed(`its keys could not be fetched: ${errorMessage(err)}`) };
    }
    this.recovered();
    return this.accept(payload, known);
  }

  /** The required scopes, then the caller, of a token whose claims were checked. */
  private accept(payload: JWTPayload, known: (caller: string) => boolean): OAuthCheck {
    const missing = this.config.scopes.filter((s) => !scopesOf(payload).has(s));
    if (missing.length > 0) return { insufficientScope: this.config.scopes.join(" ") };
    const caller = callerOf(payload, this.config.callerClaim, known);
    return caller === undefined
      ? {
          invalid: `the token has no usable "${this.config.callerClaim}" claim to name its caller (auth.oauth.callerClaim)`,
        }
      : { caller, expiresAt: (payload.exp ?? 0) * 1000 };
  }

  /** An opaque token: RFC 7662 introspection, its answer reused until `exp` (at most a minute). */
  private async checkOpaque(
    token: string,
    keys: IssuerKeys,
    known: (caller: string) => boolean,
  ): Promise<OAuthCheck> {
    const digest = sha256(token).toString("hex");
    const now = this.now();
    const cached = this.introspected.get(digest);
    if (cached && now < cached.until) return this.accept(cached.claims, known);
    const endpoint = this.config.introspection?.endpoint ?? keys.introspectionEndpoint;
    if (!endpoint || !this.config.introspection)
      return {
        invalid:
          "the token is not a JWT and the authorization server publishes no introspection_endpoint (set auth.oauth.introspection.endpoint)",
      };
    let body: Record<string, unknown>;
    try {
      body = await introspect(
        endpoint,
        this.config.introspection,
        token,
        this.options.fetchTimeoutMs ?? 5_000,
      );
    } catch (err) {
      return { unavailable: this.failed(errorMessage(err)) };
    }
    this.recovered();
    const expected = { issuer: keys.issuer, audience: this.config.audience };
    const found = judge(body, expected, Math.floor(now / 1000), CLOCK_SKEW_S);
    if ("refused" in found) return { invalid: found.refused };
    const claims = found.claims as JWTPayload;
    const exp = typeof claims.exp === "number" ? claims.exp * 1000 : now + INTROSPECTION_CACHE_MS;
    this.introspected.set(digest, { claims, until: Math.min(exp, now + INTROSPECTION_CACHE_MS) });
    return this.accept(claims, known);
  }

  /** The issuer's key set, discovered once (single flight); retried after a failure. */
  private async discover(): Promise<IssuerKeys | { unavailable: string }> {
    if (this.keys) return this.keys;
    this.discovering ??= this.fetchMetadata()
      .then(
        (meta) => {
          this.keys = {
            issuer: meta.issuer,
            introspectionEndpoint: meta.introspectionEndpoint,
            jwks: createRemoteJWKSet(new URL(meta.jwksUri), {
              cooldownDuration: this.config.jwksCooldownMs ?? this.options.jwksCooldownMs ?? 30_000,
              timeoutDuration: this.options.fetchTimeoutMs ?? 5_000,
            }),
          };
        },
        (err: unknown) => {
          this.failed(errorMessage(err));
        },
      )
      .finally(() => (this.discovering = undefined));
    await this.discovering;
    return this.keys ?? { unavailable: this.failure?.reason ?? "discovery failed" };
  }

  /** RFC 8414 metadata (path-inserted), else OpenID discovery (path-appended). */
  private async fetchMetadata(): Promise<{
    issuer: string;
    jwksUri: string;
    introspectionEndpoint?: string;
  }> {
    const problems: string[] = [];
    for (const url of metadataUrls(this.config.issuer)) {
      let body: unknown;
      try {
        const res = await fetch(url, {
          headers: { accept: "application/json" },
          signal: AbortSignal.timeout(this.options.fetchTimeoutMs ?? 5_000),
        });
        if (!res.ok) {
          problems.push(`${url}: HTTP ${res.status}`);
          continue;
        }
        body = await res.json();
      } catch (err) {
        problems.push(`${url}: ${errorMessage(err)}`);
        continue;
      }
      const meta = (typeof body === "object" && body !== null ? body : {}) as Record<
        string,
        unknown
      >;
      const issuer = typeof meta.issuer === "string" ? meta.issuer : "";
      // RFC 8414 §3.3: the metadata must name the issuer it was fetched for (a trailing slash aside,
      // so "https://tenant.auth0.com" finds "https://tenant.auth0.com/"); tokens then carry it.
      if (trimSlash(issuer) !== trimSlash(this.config.issuer)) {
        throw new Error(
          `${url} names issuer "${issuer}", not "${this.config.issuer}": set auth.oauth.issuer to the issuer your tokens carry in "iss"`,
        );
      }
      if (typeof meta.jwks_uri !== "string")
        throw new Error(
          `${url} has no "jwks_uri": mcpx checks JWT access tokens with the issuer's keys`,
        );
      const introspectionEndpoint =
        typeof meta.introspection_endpoint === "string" ? meta.introspection_endpoint : undefined;
      return { issuer, jwksUri: meta.jwks_uri, introspectionEndpoint };
    }
    throw new Error(`no authorization server metadata (${problems.join("; ")})`);
  }

  /** Record a failure (logged when it starts, not on every request); returns the reason to answer. */
  private failed(detail: string): string {
    const reason = `the authorization server ${this.config.issuer} cannot be reached to check tokens: ${detail}`;
    if (!this.failure)
      this.logger.warn(
        `auth.oauth: ${reason}. Requests with OAuth tokens get 503 until it answers (static auth.tokens still work); mcpx retries at most every ${RETRY_MS / 1000} s.`,
      );
    this.failure = { at: this.now(), reason };
    return reason;
  }

  private recovered(): void {
    if (!this.failure) return;
    this.failure = undefined;
    this.logger.info(`auth.oauth: the authorization server ${this.config.issuer} answers again`);
  }
}

/** Whether a token has the shape of a JWS (a JSON header with `alg`); else it is opaque. */
function looksLikeJwt(token: string): boolean {
  if (token.split(".").length !== 3) return false;
  try {
    return typeof decodeProtectedHeader(token).alg === "string";
  } catch {
    // Not base64url JSON: an opaque token.
    return false;
  }
}

/** Where an issuer's metadata may be: RFC 8414 §3.1 first, then OpenID Connect Discovery 1.0. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = trimSlash(url.pathname);
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

function trimSlash(text: string): string {
  return text.endsWith("/") ? text.slice(0, -1) : text;
}

/**
 * Why jose refused a token, for the `error_description` (undefined when the failure is the key
 * set's fetch, not the token).
 */
function refusal(err: unknown): string | undefined {
  if (err instanceof errors.JWTExpired) return "the token expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case "nbf":
        return "the token is not valid yet (nbf)";
      case "iss":
        return "the token was issued by another authorization server (iss)";
      case "aud":
        return "the token is for another resource (aud): ask for one with resource set to auth.oauth.audience";
      default:
        return `the token's "${err.claim}" claim is not acceptable`;
    }
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return "the token's signing algorithm is not accepted";
  if (err instanceof errors.JWKSNoMatchingKey)
    return "the token is signed with a key the authorization server does not publish";
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return "the token's signature does not verify";
  if (err instanceof errors.JWKSMultipleMatchingKeys)
    return "the token names no key the authorization server publishes unambiguously";
  if (
    err instanceof errors.JWSInvalid ||
    err instanceof errors.JWTInvalid ||
    err instanceof errors.JOSENotSupported
  )
    return "the token is not a signed JWT access token";
  return undefined;
}

/** The token's scopes: `scope` (RFC 9068, space-separated) or `scp` (a string or an array). */
function scopesOf(payload: JWTPayload): Set<string> {
  const found = new Set<string>();
  for (const value of [payload.scope, payload.scp]) {
    if (typeof value === "string") for (const s of value.split(" ")) if (s) found.add(s);
    if (Array.isArray(value)) for (const s of value) if (typeof s === "string") found.add(s);
  }
  return found;
}

/**
 * The caller a token names: the `claim` (a dotted path such as `realm_access.roles` when no
 * top-level claim has the whole name). For an array (groups, roles), the first value `callers`
 * names, else the first value: a member of several groups gets the profile of the first group
 * the config knows, in the token's order.
 */
export function callerOf(
  payload: JWTPayload,
  claim: string,
  known: (caller: string) => boolean,
): string | undefined {
  let value: unknown = payload[claim];
  if (value === undefined && claim.includes(".")) {
    value = claim
      .split(".")
      .reduce<unknown>(
        (at, key) =>
          typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined,
        payload,
      );
  }
  const values = (Array.isArray(value) ? value : [value])
    .filter((v): v is string => typeof v === "string")
    .map((v) => v.trim())
    // eslint-disable-next-line no-control-regex
    .filter((v) => v !== "" && v.length <= 200 && !/[\u0000-\u001f\u007f]/.test(v));
  return values.find(known) ?? values[0];
}
