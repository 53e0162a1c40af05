/**
 * {@link SharedValues} sealed with a key from the config (`redis.encryptionKey`): each value is
 * encrypted with AES-256-GCM (node:crypto) under a fresh random 96-bit IV, and authenticated
 * together with its name and key (the additional data), so Redis holds no token in clear and a
 * value copied under another key (another server's sign-in) does not open. The AES key is derived
 * from the configured one with HKDF-SHA256, so any long random string serves.
 *
 * Stored form: `m1.<base64url(iv ‖ tag ‖ ciphertext)>`. A value that does not open (another key
 * wrote it, or it was altered) is {@link SealedKeyError}, naming the key and the fix; never a crash.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { SharedValues } from "./types.js";

const VERSION = "m1.";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A value in Redis that the configured key does not open. */
export class SealedKeyError extends Error {
  readonly code = "SEALED_KEY";
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The 32-byte AES key of a configured `encryptionKey`. */
export function sealingKey(secret: string): Buffer {
  return Buffer.from(
    hkdfSync("sha256", secret, "mcpx redis sealing", "mcpx sealed values v1 aes-256-gcm", 32),
  );
}

/** Encrypt `plain` for `aad` (what it is stored under). */
export function seal(key: Buffer, aad: string, plain: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return VERSION + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** Decrypt what {@link seal} made for `aad`; undefined when the key (or the data) is not the one. */
export function open(key: Buffer, aad: string, sealed: string): string | undefined {
  if (!sealed.startsWith(VERSION)) return undefined;
  const raw = Buffer.from(sealed.slice(VERSION.length), "base64url");
  if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
    return plain.toString("utf8");
  } catch {
    // Authentication failed: another key, or bytes changed in Redis.
    return undefined;
  }
}

/**
 * `values` with every value sealed under `secret`; `name` (the values' name) enters the
 * additional data with each key. `what` says in errors what the values are ("the sign-in").
 */
export function sealValues(
  values: SharedValues,
  secret: string,
  name: string,
  what = `a value (${name})`,
): SharedValues {
  const key = sealingKey(secret);
  const aad = (k: string) => `mcpx:${name}:${k}`;
  return {
    async get(k) {
      const stored = await values.get(k);
      if (stored === undefined) return undefined;
      const plain = open(key, aad(k), stored);
      if (plain === undefined) {
        throw new SealedKeyError(
          `redis.encryptionKey does not open ${what} in Redis: another key wrote it. Give every replica and mcpx command the same redis.encryptionKey, or write it again with this key (mcpx login, mcpx trust approve).`,
        );
      }
      return plain;
    },
    set: (k, v, ttlMs) => values.set(k, seal(key, aad(k), v), ttlMs),
    setIfAbsent: (k, v, ttlMs) => values.setIfAbsent(k, seal(key, aad(k), v), ttlMs),
    delete: (k) => values.delete(k),
  };
}
