/** Legacy session ids: genuine ones verify (from the cache too) until they expire; others never. */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SessionTokens, type SessionClaims } from "../../src/server/session-token.js";

const claims = (exp: number): SessionClaims => ({
  v: "2025-06-18",
  ci: { name: "client", version: "1" },
  cc: {},
  iat: 0,
  exp,
});

describe("SessionTokens", () => {
  it("verifies a genuine id again and again, and refuses it once expired, cached or not", () => {
    const tokens = new SessionTokens(randomBytes(32));
    const id = tokens.sign(claims(1_000));
    expect(tokens.verify(id, 10)?.ci.name).toBe("client");
    expect(tokens.verify(id, 999)?.ci.name).toBe("client");
    expect(tokens.verify(id, 1_000)).toBeUndefined();
    // A fresh instance with the same key (another replica) agrees.
    expect(new SessionTokens(Buffer.alloc(32)).verify(id, 10)).toBeUndefined();
  });

  it("refuses an id signed with another key or altered, even after the genuine one was seen", () => {
    const key = randomBytes(32);
    const tokens = new SessionTokens(key);
    const id = tokens.sign(claims(1_000));
    expect(tokens.verify(id, 0)).toBeDefined();
    const [body, mac] = id.split(".") as [string, string];
    const forged = Buffer.from(
      Buffer.from(body, "base64url").toString().replace('"client"', '"intruder"'),
    ).toString("base64url");
    expect(tokens.verify(`${forged}.${mac}`, 0)).toBeUndefined();
    expect(tokens.verify(`${body}.${mac.slice(0, -2)}AA`, 0)).toBeUndefined();
    expect(new SessionTokens(randomBytes(32)).verify(id, 0)).toBeUndefined();
    expect(new SessionTokens(key).verify(id, 0)?.ci.name).toBe("client");
  });
});
