/**
 * Who a bearer token names: a static token of `auth.tokens` (checked first, in constant time),
 * else an OAuth access token of `auth.oauth`. Failed tokens count toward the throttle
 * (throttle.ts); a valid OAuth token without the required scopes, or one that cannot be checked
 * because the issuer is down, does not. The server's /mcp and /healthz and the dashboard share
 * one instance per HTTP server.
 */
import type { AuthConfig, OAuthResourceConfig } from "../config/types.js";
import type { Logger } from "../logger.js";
import { TokenTable } from "./http-security.js";
import type { AccessTokenVerifier, VerifierOptions } from "./oauth.js";
import type { AuthThrottle } from "./throttle.js";
import { lazyImport } from "../install.js";

/** What {@link Authenticator.check} found. Reasons never quote the token. */
export type AuthCheck =
  /** `expiresAt` (ms): an OAuth token's `exp`; static tokens do not expire. */
  | { caller: string; expiresAt?: number }
  | { invalid: true; reason?: string }
  | { retryAfterMs: number }
  | { insufficientScope: string }
  | { unavailable: string };

export class Authenticator {
  /** Static tokens (the dashboard's cookie sessions check digests against it). */
  readonly tokens = new TokenTable();
  /** Per `auth.oauth` object: a reload that replaces it starts over (new issuer, new keys). */
  private readonly verifiers = new WeakMap<OAuthResourceConfig, Promise<AccessTokenVerifier>>();

  constructor(
    private readonly logger: Logger,
    private readonly throttle?: AuthThrottle,
    private readonly options: VerifierOptions = {},
  ) {}

  /**
   * A token presented from `address`: its caller, or why not. `known` says whether `callers`
   * names a caller (array claims pick the first it names).
   */
  async check(
    auth: AuthConfig,
    token: string | null,
    address: string | undefined,
    known: (caller: string) => boolean = () => false,
  ): Promise<AuthCheck> {
    const wait = this.throttle?.retryAfterMs(address) ?? 0;
    if (wait > 0) return { retryAfterMs: wait };
    if (token) {
      const caller = this.tokens.callerOf(auth, token);
      if (caller !== undefined) return { caller };
      if (auth.oauth) {
        const found = await (await this.verifier(auth.oauth)).verify(token, known);
        if (!("invalid" in found)) return found;
        this.throttle?.failed(address);
        return { invalid: true, reason: found.invalid };
      }
    }
    this.throttle?.failed(address);
    return { invalid: true };
  }

  /** jose (oauth.ts) loads with the first OAuth token: a config without `auth.oauth` never pays for it. */
  private verifier(oauth: OAuthResourceConfig): Promise<AccessTokenVerifier> {
    let verifier = this.verifiers.get(oauth);
    if (!verifier) {
      verifier = lazyImport(() => import("./oauth.js")).then(
        (m) => new m.AccessTokenVerifier(oauth, this.logger, this.options),
      );
      this.verifiers.set(oauth, verifier);
    }
    return verifier;
  }
}
