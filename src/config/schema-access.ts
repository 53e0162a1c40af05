/**
 * Config schema, the access part: profiles (what each caller sees), code mode's limits, callers,
 * auth, and the OAuth client a remote server's sign-in uses. The rest of the config document is in
 * schema.ts.
 */
import { z } from "zod";

/**
 * What mcpx does with a tool or prompt whose definition differs from its pin, is new on a pinned
 * server, or holds suspicious text (src/registry/trust.ts): nothing, say so, or hold it back.
 */
export const trustModeSchema = z.enum(["off", "warn", "hold"]);

/** `tools` of a profile: `server.tool` refs with `*` wildcards; deny wins over allow. */
export const profileToolsSchema = z.strictObject({
  allow: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Refs with `*` wildcards (`"github.*"`); no `allow` means every one of the profile\'s servers.',
    ),
  deny: z
    .array(z.string().min(1))
    .optional()
    .describe('Refs with `*` wildcards (`"*.delete_*"`); deny wins over allow.'),
});

/** What one profile may see and call. */
export const profileSchema = z.strictObject(
  {
    /** Server names, or patterns with `*` (`["*"]` is every server). */
    servers: z
      .array(z.string().min(1))
      .describe('Names from `mcpServers`, or patterns with `*` (`["*"]` is every server).'),
    tools: profileToolsSchema
      .optional()
      .describe("`server.tool` refs the profile may see and call; deny wins over allow."),
    /** `server.prompt` refs with `*` wildcards; deny wins over allow. */
    prompts: profileToolsSchema
      .optional()
      .describe(
        "`server.prompt` refs, as `tools` does for tools; a hidden prompt is answered like a missing one.",
      ),
    /** "direct": every app tool (MCP Apps) of the profile's servers is also listed as server__tool. */
    apps: z
      .enum(["direct"])
      .optional()
      .describe(
        "`direct`: tools of the profile's servers that declare an MCP Apps UI are also listed in `tools/list` as `server__tool` (as the server key `apps` does for one server).",
      ),
    /** Hide every tool whose annotations do not say `readOnlyHint: true`. */
    readOnly: z
      .boolean()
      .optional()
      .describe("`true` hides every tool whose annotations do not say `readOnlyHint: true`."),
    /** HTTP callers' roots reach upstreams as given, not held within each server's `roots`. */
    clientRoots: z
      .boolean()
      .optional()
      .describe(
        "`true`: the profile's HTTP callers give upstreams their own roots as they are, not held within each server's `roots`.",
      ),
    /** Tools a person must allow (through elicitation) before each call: `server.tool` patterns, "destructive". */
    confirm: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Tools a person must allow (through elicitation) before each call: `server.tool` patterns, or `destructive`.",
      ),
    /** Pins for this profile's callers: only ever stricter than the server's own mode. */
    trust: trustModeSchema
      .optional()
      .describe(
        "`hold` or `warn`: this profile's callers get changed, new or suspicious definitions held (or noted) even where the server's own `trust` is looser; never looser than it.",
      ),
    /** `call({ script })`: true, false, or limits (codeModeLimitsSchema), checked in access.ts. */
    codeMode: z
      .unknown()
      .optional()
      .describe(
        "`call({ script })`: `false` turns it off; `true` or limits (each missing one takes the sandbox's default). Off in untrusted configs.",
      ),
  },
  { error: notAnObject('must be an object like { "servers": ["*"] }') },
);

const MIB = 1024 * 1024;
const bytes = (min: number, max: number) => z.number().int().min(min).max(max);

/**
 * A profile's code-mode limits. Bounds match what the sandbox accepts (src/sandbox/limits.ts;
 * a test checks both agree); maxima beyond it keep one script from claiming the machine.
 */
export const codeModeLimitsSchema = z.strictObject({
  /** Wall time of one script, inner calls included (ms). */
  timeMs: z
    .number()
    .int()
    .min(1)
    .max(24 * 3600 * 1000)
    .optional()
    .describe("Wall time of one script, inner calls included (ms)."),
  /** Memory of one script's QuickJS runtime (bytes). */
  memoryBytes: bytes(MIB, 1024 * MIB)
    .optional()
    .describe("Memory of one script's QuickJS runtime (bytes)."),
  /** QuickJS stack (bytes). */
  stackBytes: bytes(64 * 1024, 4 * MIB)
    .optional()
    .describe("QuickJS stack (bytes)."),
  /** Inner calls one script may make. */
  calls: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .optional()
    .describe("Inner calls one script may make."),
  /** The returned value as JSON (bytes). */
  resultBytes: bytes(1, 64 * MIB)
    .optional()
    .describe("The returned value as JSON (bytes)."),
  /** Everything one script logs (bytes). */
  logBytes: bytes(0, 16 * MIB)
    .optional()
    .describe("Everything one script logs (bytes)."),
});

/** Profile name → profile; each profile is checked on its own (access.ts). */
export const profilesSchema = z.record(z.string(), z.unknown());

/** Caller → profile name. */
export const callersSchema = z.record(z.string(), z.string().min(1));

/** An absolute http(s) URL; `what` says which one in the message. */
const httpUrl = (what: string, example: string) =>
  z.url({
    protocol: /^https?$/,
    error: `must be ${what}, an absolute http(s) URL, e.g. "${example}"`,
  });

/** mcpx as an OAuth 2.1 protected resource (RFC 9728): JWT access tokens from one issuer. */
/** One OAuth scope (RFC 6749 §3.3 scope-token). */
const scope = z
  .string()
  .min(1)
  .regex(/^[!#-[\]-~]+$/, "a scope is printable ASCII without spaces, quotes or backslashes");

/** A remote server's `oauth`: how `mcpx login` identifies itself to its authorization server. */
export const oauthClientSchema = z
  .strictObject({
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A client id registered for mcpx at the server's authorization server (redirect URI `http://127.0.0.1/callback`, any port, or `http://127.0.0.1:<callbackPort>/callback`). Used instead of a client ID metadata document or dynamic registration.",
      ),
    clientSecret: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The secret of `clientId`, if the authorization server gave one: write `"${VAR}"` (a secret: never shown).',
      ),
    scopes: z
      .array(scope)
      .optional()
      .describe(
        "Scopes `mcpx login` asks for, besides those the server names (its challenge or metadata).",
      ),
    clientMetadataUrl: z
      .url({ protocol: /^https$/, error: "must be an https:// URL with a path" })
      .optional()
      .describe(
        "An https URL where mcpx's OAuth client metadata document is published (Client ID Metadata Documents): the client id at authorization servers that advertise `client_id_metadata_document_supported`; others get dynamic registration.",
      ),
    callbackPort: z
      .number()
      .int()
      .min(1)
      .max(65_535)
      .optional()
      .describe(
        "A fixed port for the loopback redirect (`http://127.0.0.1:<port>/callback`), for an authorization server that matches redirect URIs exactly. Default: a free port per sign-in.",
      ),
  })
  .optional()
  .describe(
    "How `mcpx login` identifies itself to the server's authorization server: a configured client id > a client ID metadata document > dynamic client registration.",
  );

export const oauthSchema = z.strictObject(
  {
    issuer: httpUrl(
      "the authorization server's issuer",
      "https://login.example.com/realms/team",
    ).describe(
      "The authorization server's issuer URL, exactly as its tokens' `iss` claim has it; its metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else OpenID `/.well-known/openid-configuration`) gives the signing keys (`jwks_uri`).",
    ),
    audience: httpUrl(
      "this server's /mcp URL as clients reach it",
      "https://mcp.example.com/mcp",
    ).describe(
      "This server's MCP URL as clients reach it (e.g. `https://mcp.example.com/mcp`): the `resource` clients ask tokens for (RFC 8707) and the `aud` a token must carry.",
    ),
    scopes: z
      .array(scope)
      .optional()
      .describe(
        "Scopes every token must carry (`scope` or `scp` claim); a token without them gets 403 `insufficient_scope`. Default: none.",
      ),
    introspection: z
      .strictObject({
        endpoint: httpUrl("the introspection endpoint", "https://sso.example.com/oauth2/introspect")
          .optional()
          .describe(
            "The RFC 7662 introspection endpoint. Default: `introspection_endpoint` of the issuer's metadata.",
          ),
        clientId: z.string().min(1).describe("The client id mcpx introspects as."),
        clientSecret: z
          .string()
          .min(1)
          .describe("Its client secret (takes `${VAR}`; never logged)."),
      })
      .optional()
      .describe(
        "Check opaque (non-JWT) access tokens by RFC 7662 introspection at the authorization server; answers are kept until the token's `exp`, at most 60 s. Without it, only JWT access tokens are accepted.",
      ),
    jwksCooldown: z
      .number()
      .int()
      .min(0)
      .max(86_400_000)
      .optional()
      .describe(
        "ms between two fetches of the issuer's signing keys (JWKS) for a token whose key id mcpx does not know: how soon a rotated-in key is accepted, and how often forged key ids may make mcpx ask. Default 30000.",
      ),
    callerClaim: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The claim whose value is the caller (then `callers` maps it to a profile): `sub` (default), `email`, `azp`, `client_id`, a groups claim… For an array claim, the first value `callers` names, else the first value.",
      ),
  },
  {
    error: notAnObject(
      'must be an object like { "issuer": "https://login.example.com", "audience": "https://mcp.example.com/mcp" }',
    ),
  },
);

export const authSchema = z.strictObject(
  {
    /**
     * Bearer token (or `${VAR}`) → the caller it identifies. Values are checked by position in
     * access.ts: a zod issue would name the key, and a key may be a literal token.
     */
    tokens: z
      .record(z.string(), z.unknown(), {
        error: notAnObject(
          'must be an object of token → caller, e.g. { "${MCPX_TOKEN_CI}": "ci-bot" }',
        ),
      })
      .optional()
      .describe(
        "Bearer token (or `${VAR}`) → the caller it identifies; every HTTP request then needs `Authorization: Bearer <token>`.",
      ),
    oauth: oauthSchema
      .optional()
      .describe(
        "Accept OAuth access tokens (JWT) from an authorization server beside `tokens`: mcpx serves `/.well-known/oauth-protected-resource` and answers 401/403 as the MCP authorization spec says.",
      ),
  },
  {
    error: notAnObject(
      'must be an object like { "tokens": { "${MCPX_TOKEN}": "caller" } } or { "oauth": { "issuer": "…", "audience": "…" } }',
    ),
  },
);

/** A zod error map: `message` when the value is not an object (other issues keep theirs). */
export function notAnObject(message: string) {
  return (issue: z.core.$ZodRawIssue) => (issue.code === "invalid_type" ? message : undefined);
}
