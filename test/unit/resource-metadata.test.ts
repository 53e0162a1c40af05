/**
 * What mcpx tells OAuth clients (src/auth/resource-metadata.ts): the RFC 9728 metadata URL for
 * an audience, and the WWW-Authenticate challenges the MCP authorization spec asks for.
 */
import { describe, expect, it } from "vitest";
import { challenge, resourceMetadataUrl } from "../../src/auth/resource-metadata.js";
import type { AuthConfig, OAuthResourceConfig } from "../../src/config/types.js";

const oauth = (audience: string, scopes: string[] = []): OAuthResourceConfig => ({
  issuer: "https://sso.example.com/realms/team",
  audience,
  scopes,
  callerClaim: "sub",
});

describe("protected resource metadata", () => {
  it("inserts the well-known between the host and the audience's path", () => {
    expect(resourceMetadataUrl(oauth("https://mcp.example.com/mcp"))).toBe(
      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
    );
    expect(resourceMetadataUrl(oauth("https://mcp.example.com/team/mcp/"))).toBe(
      "https://mcp.example.com/.well-known/oauth-protected-resource/team/mcp",
    );
    expect(resourceMetadataUrl(oauth("https://mcp.example.com:8443/"))).toBe(
      "https://mcp.example.com:8443/.well-known/oauth-protected-resource",
    );
  });

  it("challenges name the metadata, the error and the scopes; static-only configs stay plain", () => {
    const plain: AuthConfig = { tokens: new Map() };
    expect(challenge(plain, {})).toBe('Bearer realm="mcpx"');
    expect(challenge(plain, { error: "invalid_token" })).toBe(
      'Bearer realm="mcpx", error="invalid_token"',
    );
    const auth: AuthConfig = {
      tokens: new Map(),
      oauth: oauth("https://mcp.example.com/mcp", ["mcp:tools"]),
    };
    const meta =
      'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
    expect(challenge(auth, {})).toBe(`Bearer realm="mcpx", ${meta}, scope="mcp:tools"`);
    // A description never breaks out of its quoted string.
    expect(
      challenge(auth, { error: "invalid_token", description: 'the "sub" claim \\ is\nmissing' }),
    ).toBe(
      `Bearer realm="mcpx", ${meta}, error="invalid_token", error_description="the 'sub' claim ' is?missing", scope="mcp:tools"`,
    );
    expect(challenge(auth, { error: "insufficient_scope", scope: "mcp:tools mcp:admin" })).toBe(
      `Bearer realm="mcpx", ${meta}, error="insufficient_scope", scope="mcp:tools mcp:admin"`,
    );
  });
});
