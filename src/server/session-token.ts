/**
 * Legacy (2025) session ids any replica can serve: the little a session needs (negotiated
 * version, client info and capabilities, the token's caller) signed with HMAC-SHA256 and an
 * absolute expiry, so no replica keeps a session table another one would need to consult.
 */
import { createHash, randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import { SignedJson } from "./signed.js";
import type { Config } from "../config/load.js";

/** What a legacy session carries from its initialize to every later request. */
export interface SessionClaims {
  /** The protocol version negotiated at initialize. */
  v: string;
  /** The client's clientInfo (name, version, title), as it sent it. */
  ci: { name: string; version: string; title?: string };
  /** The client's capabilities, as it sent them. */
  cc: Record<string, unknown>;
  /** The caller a bearer token fixed at initialize; no other token may use the session. */
  owner?: string;
  /** Issued at and expires at, ms since the epoch. */
  iat: number;
  exp: number;
}

/** The claims and a random nonce: two clients alike, initializing at once, get two sessions. */
type SignedClaims = SessionClaims & { n: string };

/** Capabilities bigger than this are not carried (mcpx asks clients for nothing): headers stay small. */
const MAX_CAPABILITIES_CHARS = 2_000;

/** Session ids whose signature was checked, kept so a session's every request skips the HMAC. */
const VERIFIED_IDS = 1_024;

/** Signs and verifies session ids with one key. */
export class SessionTokens {
  /** Genuine ids seen lately and their claims: the same string always verifies the same way. */
  private readonly verified = new LRUCache<string, SessionClaims>({ max: VERIFIED_IDS });

  private readonly signed: SignedJson;

  constructor(key: Buffer) {
    this.signed = new SignedJson(key);
  }

  sign(claims: SessionClaims): string {
    const cc = JSON.stringify(claims.cc).length <= MAX_CAPABILITIES_CHARS ? claims.cc : {};
    const signed: SignedClaims = { ...claims, cc, n: randomBytes(12).toString("base64url") };
    return this.signed.seal(signed);
  }

  /** The claims of a genuine, unexpired id; undefined for anything else. */
  verify(token: string, now: number): SessionClaims | undefined {
    const known = this.verified.get(token);
    if (known) return known.exp > now ? known : undefined;
    const claims = this.check(token);
    if (claims) this.verified.set(token, claims);
    return claims && claims.exp > now ? claims : undefined;
  }

  /** The claims of a genuinely signed id, expired or not. */
  private check(token: string): SessionClaims | undefined {
    const claims = this.signed.open(token);
    return isClaims(claims) ? claims : undefined;
  }
}

/**
 * The signing key: `sessionSecret` when the config sets one, else a digest of the config's
 * content (servers, access, auth tokens and the environment values it expanded), so replicas
 * started with one config agree. A derived key is guessable for a config without secrets; that
 * forges nothing a client could not get by initializing: the session's caller is still checked
 * against the bearer token on every request.
 */
export function sessionKey(config: Config): Buffer {
  const material =
    config.sessionSecret ??
    JSON.stringify({
      servers: config.servers,
      profiles: config.profiles,
      callers: config.callers,
      tokens: config.auth ? [...config.auth.tokens] : [],
      secrets: config.secrets,
    });
  return createHash("sha256").update("mcpx legacy session key\n").update(material).digest();
}

function isClaims(value: unknown): value is SessionClaims {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  const ci = c.ci as Record<string, unknown> | undefined;
  return (
    typeof c.v === "string" &&
    typeof ci === "object" &&
    ci !== null &&
    typeof ci.name === "string" &&
    typeof c.cc === "object" &&
    c.cc !== null &&
    (c.owner === undefined || typeof c.owner === "string") &&
    typeof c.iat === "number" &&
    typeof c.exp === "number"
  );
}
