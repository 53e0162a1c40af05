/**
 * Signed JSON tokens: `base64url(JSON).base64url(HMAC-SHA256)`. What mcpx hands a client and must
 * get back unchanged (session ids, page cursors), checked without any state kept between
 * requests, so any replica holding the key reads it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export class SignedJson {
  constructor(private readonly key: Buffer) {}

  /** `value` as a token only this key's holder could have made. */
  seal(value: unknown): string {
    const body = Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${body}.${this.mac(body).toString("base64url")}`;
  }

  /** The value of a genuine token; undefined for a forged, altered or malformed one. */
  open(token: string): unknown {
    const dot = token.indexOf(".");
    if (dot <= 0) return undefined;
    const body = token.slice(0, dot);
    const presented = Buffer.from(token.slice(dot + 1), "base64url");
    const expected = this.mac(body);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected))
      return undefined;
    try {
      return JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as unknown;
    } catch {
      return undefined;
    }
  }

  private mac(body: string): Buffer {
    return createHmac("sha256", this.key).update(body).digest();
  }
}
