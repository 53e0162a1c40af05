/**
 * RFC 7662 token introspection, for authorization servers that hand out opaque access tokens:
 * the one request, and what of its answer mcpx requires (active, `iss`, `aud` naming this
 * resource, `exp` with skew). The caller and scopes are then read as from a JWT (oauth.ts).
 */
import type { OAuthResourceConfig } from "../config/types.js";

/** The claims an introspection answer gave, or a reason the token is refused. */
export type Introspected = { claims: Record<string, unknown> } | { refused: string };

/**
 * Ask `endpoint` about `token` as the configured client (client_secret_basic). Throws when the
 * endpoint cannot answer (the caller answers 503), never with the token or secret in the message.
 */
export async function introspect(
  endpoint: string,
  client: NonNullable<OAuthResourceConfig["introspection"]>,
  token: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  // RFC 6749 §2.3.1: id and secret are form-encoded before the Basic encoding.
  const basic = Buffer.from(
    `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
  ).toString("base64");
  const res = await fetch(endpoint, {
    method: "POST",
    headers: {
      authorization: `Basic ${basic}`,
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    },
    body: new URLSearchParams({ token, token_type_hint: "access_token" }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok)
    throw new Error(
      `introspection at ${endpoint} answered HTTP ${res.status}${res.status === 401 ? " (check auth.oauth.introspection.clientId and clientSecret)" : ""}`,
    );
  const body: unknown = await res.json();
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new Error(`introspection at ${endpoint} did not answer a JSON object`);
  return body as Record<string, unknown>;
}

/** What mcpx requires of an introspection answer, checked at `nowS` (seconds) with `skewS`. */
export function judge(
  body: Record<string, unknown>,
  expected: { issuer: string; audience: string },
  nowS: number,
  skewS: number,
): Introspected {
  if (body.active !== true)
    return { refused: "the token is not active (revoked, expired or unknown)" };
  if (typeof body.exp === "number" && body.exp + skewS < nowS)
    return { refused: "the token expired" };
  if (typeof body.nbf === "number" && body.nbf - skewS > nowS)
    return { refused: "the token is not valid yet (nbf)" };
  if (body.iss !== undefined && body.iss !== expected.issuer)
    return { refused: "the token was issued by another authorization server (iss)" };
  // `aud` is optional in RFC 7662, but without it a token for any resource of the issuer would
  // pass here: mcpx requires it, as for JWTs.
  const aud = Array.isArray(body.aud) ? body.aud : [body.aud];
  if (!aud.includes(expected.audience))
    return {
      refused:
        "the token is for another resource (aud): ask for one with resource set to auth.oauth.audience",
    };
  return { claims: body };
}
