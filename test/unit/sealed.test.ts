/**
 * Sealed shared values (src/shared/sealed.ts): AES-256-GCM under a key from the config, a random
 * IV per value, authenticated with the name and key it is stored under.
 */
import { describe, expect, it } from "vitest";
import { MemoryShared } from "../../src/shared/memory.js";
import { open, seal, sealingKey, sealValues, SealedKeyError } from "../../src/shared/sealed.js";

const SECRET = "sealing-test-key-0123456789abcdef";

describe("sealed values", () => {
  it("opens what it sealed; each seal differs (random IV); the plain text is nowhere in it", () => {
    const key = sealingKey(SECRET);
    const a = seal(key, "k", "access-token-value");
    const b = seal(key, "k", "access-token-value");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^m1\./);
    expect(a).not.toContain("access-token-value");
    expect(open(key, "k", a)).toBe("access-token-value");
  });

  it("refuses another key, another name, and any changed byte", () => {
    const key = sealingKey(SECRET);
    const sealed = seal(key, "oauth:one", "token");
    expect(open(sealingKey("another-key-0123456789abcdef"), "oauth:one", sealed)).toBeUndefined();
    expect(open(key, "oauth:two", sealed)).toBeUndefined();
    const raw = Buffer.from(sealed.slice(3), "base64url");
    raw[raw.length - 1]! ^= 1;
    expect(open(key, "oauth:one", `m1.${raw.toString("base64url")}`)).toBeUndefined();
    expect(open(key, "oauth:one", "token")).toBeUndefined();
    expect(open(key, "oauth:one", "m1.")).toBeUndefined();
  });

  it("SharedValues sealed: the store holds only sealed text; a wrong key is SealedKeyError naming redis.encryptionKey", async () => {
    const shared = new MemoryShared();
    const raw = shared.values("oauth");
    const sealed = sealValues(raw, SECRET, "oauth", "the sign-in");
    await sealed.set("r1", '{"access_token":"abc-123"}');
    expect(await raw.get("r1")).not.toContain("abc-123");
    expect(await sealed.get("r1")).toBe('{"access_token":"abc-123"}');
    expect(await sealed.get("missing")).toBeUndefined();
    // A value moved to another key does not open there.
    await raw.set("r2", (await raw.get("r1"))!);
    await expect(sealed.get("r2")).rejects.toBeInstanceOf(SealedKeyError);
    const wrong = sealValues(raw, "wrong-key-0123456789abcdef", "oauth", "the sign-in");
    await expect(wrong.get("r1")).rejects.toThrow(
      /^redis\.encryptionKey does not open the sign-in in Redis/,
    );
    await shared.close();
  });
});
