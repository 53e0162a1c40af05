/**
 * What mcpx tells OAuth clients about itself (RFC 9728 protected-resource metadata) and how it
 * refuses a request (RFC 6750 `WWW-Authenticate` challenges), as the MCP authorization spec asks:
 * 401 with `resource_metadata`, `error="invalid_token"` when a token was given, and 403
 * `insufficient_scope` naming the scopes needed.
 */
import type { AuthConfig, OAuthResourceConfig } from "../config/types.js";

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** The paths the metadata is served at: the bare well-known and the form suffixed with /mcp. */
export const RESOURCE_METADATA_PATHS = [WELL_KNOWN, `${WELL_KNOWN}/mcp`];

/**
 * The metadata's URL for the audience (RFC 9728 §3.1: the well-known inserted between the host
 * and the resource's path), e.g. https://mcp.example.com/.well-known/oauth-protected-resource/mcp.
 * Built from the configured audience, not the request's Host: behind a proxy only the audience is
 * the address clients use.
 */
export function resourceMetadataUrl(oauth: OAuthResourceConfig): string {
  const url = new URL(oauth.audience);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  return `${url.origin}${WELL_KNOWN}${path}`;
}

/** The RFC 9728 document. */
export function resourceMetadata(oauth: OAuthResourceConfig): Record<string, unknown> {
  return {
    resource: oauth.audience,
    authorization_servers: [oauth.issuer],
    bearer_methods_supported: ["header"],
    ...(oauth.scopes.length > 0 ? { scopes_supported: oauth.scopes } : {}),
    resource_name: "mcpx",
  };
}

/** Why a request is refused, for the challenge. */
export type Refusal =
  | { error?: undefined }
  | { error: "invalid_token"; description?: string }
  | { error: "insufficient_scope"; scope: string };

/** The `WWW-Authenticate` value of a 401 or 403 answer. */
export function challenge(auth: AuthConfig, refusal: Refusal): string {
  const params: string[] = ['realm="mcpx"'];
  if (auth.oauth) params.push(`resource_metadata="${resourceMetadataUrl(auth.oauth)}"`);
  if (refusal.error !== undefined) params.push(`error="${refusal.error}"`);
  if (refusal.error === "invalid_token" && refusal.description)
    params.push(`error_description="${quotable(refusal.description)}"`);
  const scope =
    refusal.error === "insufficient_scope" ? refusal.scope : auth.oauth?.scopes.join(" ");
  // The scopes to ask for (MCP 2025-11-25: on 401 too, so a client asks for them at once).
  if (scope) params.push(`scope="${quotable(scope)}"`);
  return `Bearer ${params.join(", ")}`;
}

/** A quoted-string's content (RFC 9110): no quotes or backslashes, printable ASCII. */
function quotable(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, "?");
}
