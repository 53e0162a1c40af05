/**
 * OAuth access tokens checked by mcpx (src/auth/oauth.ts, authenticator.ts) against a real
 * authorization server (oidc-provider, test/helpers/oidc-issuer.ts): real tokens from the
 * client_credentials grant, and tokens signed with the provider's own key for the cases a grant
 * never produces. The clock is injected: expiry and the retry after an unreachable issuer need
 * no waiting.
 */
import { base64url, decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import getPort from "get-port";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Authenticator } from "../../src/auth/authenticator.js";
import {
  AccessTokenVerifier,
  type OAuthCheck,
  CLOCK_SKEW_S,
  metadataUrls,
  RETRY_MS,
} from "../../src/auth/oauth.js";
import type { AuthConfig, OAuthResourceConfig } from "../../src/config/types.js";
import { createLogger, type LogLine } from "../../src/logger.js";
import { startIssuer, type Issuer } from "../helpers/oidc-issuer.js";

const AUDIENCE = "http://127.0.0.1:9/mcp";
const CLIENTS = [
  { id: "ci-bot", secret: "ci-bot-secret-0123456789", scope: "mcp:tools mcp:admin" },
  { id: "mcpx-rs", secret: "mcpx-rs-introspection-secret-42", scope: "mcp:tools" },
  {
    id: "reader",
    secret: "reader-secret-0123456789",
    scope: "mcp:tools",
    groups: ["staff", "eng"],
  },
];

let issuer: Issuer;
beforeAll(async () => {
  issuer = await startIssuer(CLIENTS);
});
afterAll(async () => {
  await issuer.close();
});

function setup(overrides: Partial<OAuthResourceConfig> = {}, now: () => number = Date.now) {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: "debug", write: () => undefined });
  logger.tap((l) => lines.push(l));
  const config: OAuthResourceConfig = {
    issuer: issuer.url,
    audience: AUDIENCE,
    scopes: ["mcp:tools"],
    callerClaim: "sub",
    ...overrides,
  };
  const verifier = new AccessTokenVerifier(config, logger, { now, jwksCooldownMs: 0 });
  return { verifier, lines, config };
}

/** Why a token was refused ("" when it was not). */
const refusal = (check: OAuthCheck) => ("invalid" in check ? check.invalid : "");
const known = (names: string[]) => (c: string) => names.includes(c);
const nobody = known([]);
const seconds = () => Math.floor(Date.now() / 1000);
/** Claims a valid token of the issuer for AUDIENCE has. */
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer.url,
  aud: AUDIENCE,
  sub: "signed-caller",
  scope: "mcp:tools",
  iat: seconds(),
  exp: seconds() + 300,
  ...extra,
});

describe("access tokens from a real authorization server", () => {
  it("discovers the issuer: RFC 8414 path-inserted first, then OpenID", () => {
    expect(metadataUrls("https://login.example.com/realms/team/")).toEqual([
      "https://login.example.com/.well-known/oauth-authorization-server/realms/team",
      "https://login.example.com/realms/team/.well-known/openid-configuration",
    ]);
  });

  it("accepts a client_credentials token for this audience, naming its caller by sub", async () => {
    const { verifier } = setup();
    const token = await issuer.token("ci-bot", AUDIENCE, "mcp:tools");
    expect(await verifier.verify(token, nobody)).toMatchObject({ caller: "ci-bot" });
  });

  it("an array claim names the first value callers knows, else its first", async () => {
    const { verifier } = setup({ callerClaim: "groups" });
    const token = await issuer.token("reader", AUDIENCE, "mcp:tools");
    expect(await verifier.verify(token, known(["eng"]))).toMatchObject({ caller: "eng" });
    expect(await verifier.verify(token, nobody)).toMatchObject({ caller: "staff" });
    const { verifier: v2 } = setup({ callerClaim: "email" });
    expect(refusal(await v2.verify(token, nobody))).toContain('no usable "email" claim');
  });

  it("refuses a real token for another audience", async () => {
    const { verifier } = setup();
    const token = await issuer.token("ci-bot", "https://other.example.com/mcp", "mcp:tools");
    expect(refusal(await verifier.verify(token, nobody))).toContain("another resource (aud)");
  });

  it("answers a token without the required scopes with the scopes to ask for", async () => {
    const { verifier } = setup({ scopes: ["mcp:tools", "mcp:admin"] });
    const narrow = await issuer.token("reader", AUDIENCE, "mcp:tools");
    expect(await verifier.verify(narrow, nobody)).toEqual({
      insufficientScope: "mcp:tools mcp:admin",
    });
    const wide = await issuer.token("ci-bot", AUDIENCE, "mcp:tools mcp:admin");
    expect(await verifier.verify(wide, nobody)).toMatchObject({ caller: "ci-bot" });
    // `scp` as an array (Azure AD, Okta) counts as well.
    const scp = await issuer.sign(claims({ scope: undefined, scp: ["mcp:admin", "mcp:tools"] }));
    expect(await verifier.verify(scp, nobody)).toMatchObject({ caller: "signed-caller" });
  });

  it("refuses another issuer, expired and not-yet-valid tokens; tolerates small skew", async () => {
    const exp = seconds() + 300;
    const token = await issuer.sign(claims({ exp }));
    const at = (ms: number) => setup({}, () => ms).verifier;
    expect(await at(exp * 1000 + (CLOCK_SKEW_S - 5) * 1000).verify(token, nobody)).toMatchObject({
      caller: "signed-caller",
    });
    expect(await at(exp * 1000 + (CLOCK_SKEW_S + 5) * 1000).verify(token, nobody)).toEqual({
      invalid: "the token expired",
    });
    const { verifier } = setup();
    const later = await issuer.sign(claims({ nbf: seconds() + 600 }));
    expect(await verifier.verify(later, nobody)).toEqual({
      invalid: "the token is not valid yet (nbf)",
    });
    const foreign = await issuer.sign(claims({ iss: "https://evil.example.com" }));
    expect(refusal(await verifier.verify(foreign, nobody))).toContain(
      "another authorization server (iss)",
    );
    const noExp = await issuer.sign(claims({ exp: undefined }));
    expect(await verifier.verify(noExp, nobody)).toHaveProperty("invalid");
  });

  it("refuses forged tokens: another key, alg none, HS256", async () => {
    const { verifier } = setup();
    const { privateKey } = await generateKeyPair("RS256");
    // Another key under the issuer's kid: the signature does not verify.
    const sameKid = await issuer.sign(claims(), { key: privateKey });
    expect(await verifier.verify(sameKid, nobody)).toEqual({
      invalid: "the token's signature does not verify",
    });
    const otherKid = await issuer.sign(claims(), { key: privateKey, kid: "attacker" });
    expect(refusal(await verifier.verify(otherKid, nobody))).toContain(
      "key the authorization server does not publish",
    );
    const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
    const none = `${enc({ alg: "none", typ: "JWT" })}.${enc(claims())}.`;
    expect(await verifier.verify(none, nobody)).toHaveProperty("invalid");
    const hs = await new SignJWT(claims())
      .setProtectedHeader({ alg: "HS256", kid: issuer.kid })
      .sign(new TextEncoder().encode("a-shared-secret-of-32-bytes-long!"));
    expect(await verifier.verify(hs, nobody)).toEqual({
      invalid: "the token's signing algorithm is not accepted",
    });
    expect(await verifier.verify("not-a-jwt", nobody)).toHaveProperty("invalid");
  });

  it("follows key rotation: a token under a new kid refetches the JWKS", async () => {
    const { verifier } = setup();
    const before = await issuer.token("ci-bot", AUDIENCE, "mcp:tools");
    expect(await verifier.verify(before, nobody)).toMatchObject({ caller: "ci-bot" });
    const oldKid = issuer.kid;
    await issuer.rotate();
    expect(issuer.kid).not.toBe(oldKid);
    const after = await issuer.token("ci-bot", AUDIENCE, "mcp:tools");
    expect(decodeProtectedHeader(after).kid).toBe(issuer.kid);
    expect(await verifier.verify(after, nobody)).toMatchObject({ caller: "ci-bot" });
    expect(await verifier.verify(before, nobody)).toMatchObject({ caller: "ci-bot" });
  });
});

describe("opaque access tokens by RFC 7662 introspection", () => {
  const introspection = { clientId: "mcpx-rs", clientSecret: "mcpx-rs-introspection-secret-42" };

  it("accepts an active token for this audience, refuses others, keeps no secret in output", async () => {
    const { verifier, lines } = setup({ introspection, callerClaim: "client_id" });
    issuer.format = "opaque";
    try {
      const opaque = await issuer.token("ci-bot", AUDIENCE, "mcp:tools");
      expect(opaque.split(".")).toHaveLength(1);
      expect(await verifier.verify(opaque, nobody)).toMatchObject({ caller: "ci-bot" });
      // Answered again from the cache (a minute at most): same caller.
      expect(await verifier.verify(opaque, nobody)).toMatchObject({ caller: "ci-bot" });
      const elsewhere = await issuer.token("ci-bot", "https://other.example.com/mcp", "mcp:tools");
      expect(refusal(await verifier.verify(elsewhere, nobody))).toContain("another resource (aud)");
      expect(refusal(await verifier.verify("made-up-opaque-token-value", nobody))).toContain(
        "not active",
      );
      const narrow = await issuer.token("ci-bot", AUDIENCE, "mcp:admin");
      expect(await verifier.verify(narrow, nobody)).toEqual({ insufficientScope: "mcp:tools" });
      // JWTs are still checked by signature beside introspection.
      issuer.format = "jwt";
      const jwt = await issuer.token("ci-bot", AUDIENCE, "mcp:tools");
      expect(await verifier.verify(jwt, nobody)).toMatchObject({ caller: "ci-bot" });
    } finally {
      issuer.format = "jwt";
    }
    expect(lines.map((l) => l.text).join("\n")).not.toContain(introspection.clientSecret);
  });

  it("a wrong client secret is the server's problem (503), named without the secret", async () => {
    const wrong = { clientId: "mcpx-rs", clientSecret: "not-the-secret-0123456789" };
    const { verifier, lines } = setup({ introspection: wrong });
    const check = await verifier.verify("some-opaque-token-value", nobody);
    expect(check).toHaveProperty("unavailable");
    const said = JSON.stringify(check) + lines.map((l) => l.text).join("\n");
    expect(said).toContain("check auth.oauth.introspection.clientId and clientSecret");
    expect(said).not.toContain(wrong.clientSecret);
    expect(said).not.toContain("some-opaque-token-value");
  });
});

describe("an unreachable authorization server", () => {
  it("answers unavailable, says so once, and recovers when the issuer is back", async () => {
    const port = await getPort();
    let now = Date.now();
    const lines: LogLine[] = [];
    const logger = createLogger({ level: "debug", write: () => undefined });
    logger.tap((l) => lines.push(l));
    const oauth: OAuthResourceConfig = {
      issuer: `http://127.0.0.1:${port}`,
      audience: AUDIENCE,
      scopes: [],
      callerClaim: "sub",
    };
    const auth: AuthConfig = { tokens: new Map([["static-token-0123456789", "static"]]), oauth };
    const authenticator = new Authenticator(logger, undefined, { now: () => now });
    const token = await issuer.sign(claims({ iss: oauth.issuer }));
    const first = await authenticator.check(auth, token, "127.0.0.1");
    expect(first).toHaveProperty("unavailable");
    expect(JSON.stringify(first)).toContain(
      `authorization server ${oauth.issuer} cannot be reached`,
    );
    expect(await authenticator.check(auth, token, "127.0.0.1")).toHaveProperty("unavailable");
    // Static tokens do not depend on the issuer.
    expect(await authenticator.check(auth, "static-token-0123456789", "127.0.0.1")).toEqual({
      caller: "static",
    });
    const warnings = lines.filter((l) => l.level === "warn" && l.text.includes("auth.oauth"));
    expect(warnings).toHaveLength(1);

    const back = await startIssuer(CLIENTS, port);
    try {
      // Within RETRY_MS the issuer is not asked again; after it, it is.
      expect(await authenticator.check(auth, token, "127.0.0.1")).toHaveProperty("unavailable");
      now += RETRY_MS + 1;
      const real = await back.token("ci-bot", AUDIENCE, "mcp:tools");
      expect(await authenticator.check(auth, real, "127.0.0.1")).toMatchObject({
        caller: "ci-bot",
      });
      expect(lines.some((l) => l.level === "info" && l.text.includes("answers again"))).toBe(true);
      for (const l of lines) expect(l.text).not.toContain(real.slice(20));
    } finally {
      await back.close();
    }
  });
});
