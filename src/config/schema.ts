import { z } from "zod";

/** Server names prefix tool refs (`server.tool`), so they cannot contain dots. */
export const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

const stringMap = z.record(z.string(), z.string());
const timeoutMs = z
  .number()
  .int()
  .positive()
  .max(24 * 3600 * 1000);

/** Keys mcpx understands in a server entry, whatever its transport. */
const common = {
  /** One-line summary shown in the catalog instead of the server's own instructions. */
  description: z.string().optional(),
  /** Skip this server entirely (Cline and others write this key). */
  disabled: z.boolean().optional(),
  /** Per-request timeout in milliseconds (Claude Code's key). */
  timeout: timeoutMs.optional(),
  /** How calls map onto upstream sessions: isolated (default), shared, caller. */
  session: z.enum(["isolated", "shared", "caller"]).optional(),
  /** isolated: spare sessions kept ready (default 1 for stdio, 0 for http/sse). */
  prewarm: z.number().int().min(0).max(16).optional(),
  /** Concurrent sessions (isolated: calls; caller: callers); further calls queue. */
  maxSessions: z.number().int().min(1).max(256).optional(),
  /** caller: close a caller's idle session after this many ms. */
  idleTimeout: timeoutMs.optional(),
};

const stdioServer = z.strictObject({
  type: z.literal("stdio"),
  command: z.string().min(1, { error: "must be a non-empty command (an executable or path)" }),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: z.string().optional(),
  inheritEnv: z.boolean().optional(),
  ...common,
});

const remoteServer = z.strictObject({
  type: z.enum(["http", "streamable-http", "sse"]),
  // Checked as a URL after ${VAR} expansion (load.ts): "${MCP_URL}" is not a URL until then.
  url: z.string().min(1, { error: "must be an http:// or https:// URL" }),
  headers: stringMap.optional(),
  ...common,
});

/** A server entry after foreign keys are removed and `type` is inferred. */
export const serverEntrySchema = z.discriminatedUnion("type", [stdioServer, remoteServer]);

/** Every value `type` may take. */
export const SERVER_TYPES = ["stdio", "http", "streamable-http", "sse"] as const;
export type ServerEntry = z.infer<typeof serverEntrySchema>;

/** Keys of ours that may appear in a server entry. */
export const SERVER_KEYS = [
  "type",
  "command",
  "args",
  "env",
  "cwd",
  "inheritEnv",
  "url",
  "headers",
  "description",
  "disabled",
  "timeout",
  "session",
  "prewarm",
  "maxSessions",
  "idleTimeout",
] as const;

/**
 * Keys other clients write in server entries. Accepted so their configs load as they are, and
 * ignored with one warning each, since mcpx has no equivalent yet.
 */
export const FOREIGN_SERVER_KEYS: Readonly<Record<string, string>> = {
  alwaysLoad: "Claude Code",
  oauth: "Claude Code",
  headersHelper: "Claude Code",
  envFile: "VS Code / Cursor",
  autoApprove: "Cline",
  alwaysAllow: "Cline",
  transportType: "Cline",
  networkTimeout: "Cline",
  gallery: "VS Code",
  version: "VS Code",
  dev: "VS Code",
  trust: "Gemini CLI",
  includeTools: "Gemini CLI",
  excludeTools: "Gemini CLI",
};

export const compressionSchema = z.strictObject({
  results: z.enum(["auto", "toon", "json", "off"]).optional(),
  schemas: z.enum(["typescript", "json"]).optional(),
});

export const healthSchema = z.strictObject({
  /** ms between health checks of a ready server. */
  interval: timeoutMs.optional(),
  /** ms a health check may take. */
  timeout: timeoutMs.optional(),
  /** Consecutive failed checks after which a server is down. */
  failureThreshold: z.number().int().min(1).max(100).optional(),
  /** First reconnect delay of a down server, in ms; doubles up to retryMax. */
  retryInitial: timeoutMs.optional(),
  retryMax: timeoutMs.optional(),
});

export const logSchema = z.strictObject({
  /** Also write logs to this file (useful in stdio mode, where a client may hide stderr). */
  file: z.string().min(1),
  /** Rotate when the file reaches this size. */
  maxBytes: z.number().int().min(1024).optional(),
  /** Rotated files kept (file.1 … file.N). */
  maxFiles: z.number().int().min(1).max(100).optional(),
});

/** `tools` of a profile: `server.tool` refs with `*` wildcards; deny wins over allow. */
export const profileToolsSchema = z.strictObject({
  allow: z.array(z.string().min(1)).optional(),
  deny: z.array(z.string().min(1)).optional(),
});

/** What one profile may see and call. */
export const profileSchema = z.strictObject({
  /** Server names, or patterns with `*` (`["*"]` is every server). */
  servers: z.array(z.string().min(1)),
  tools: profileToolsSchema.optional(),
  /** Hide every tool whose annotations do not say `readOnlyHint: true`. */
  readOnly: z.boolean().optional(),
});

export const authSchema = z.strictObject({
  /** Bearer token (or `${VAR}`) → the caller it identifies. */
  tokens: z.record(z.string(), z.string().min(1)),
});

/** Top-level mcpx settings (mcpServers is validated entry by entry). */
export const settingsSchema = z.strictObject({
  $schema: z.string().optional(),
  mcpServers: z.record(z.string(), z.unknown()),
  inheritEnv: z.boolean().optional(),
  /** How long discovery of one upstream may take at startup, in ms. */
  discoveryTimeout: timeoutMs.optional(),
  /** Default per-call timeout in ms (a server's own `timeout` wins). */
  callTimeout: timeoutMs.optional(),
  compression: compressionSchema.optional(),
  health: healthSchema.optional(),
  log: logSchema.optional(),
  /** ms in-flight calls may take to finish at shutdown before they are cancelled. */
  shutdownGrace: timeoutMs.optional(),
  /** Profiles and callers are validated in access.ts, key by key, with suggestions. */
  profiles: z.record(z.string(), z.unknown()).optional(),
  callers: z.record(z.string(), z.string().min(1)).optional(),
  auth: z.unknown().optional(),
});

export const TOP_KEYS = Object.keys(settingsSchema.shape);
export const COMPRESSION_KEYS = Object.keys(compressionSchema.shape);
/** Objects of ours nested at the top level, for "did you mean" on their keys. */
export const NESTED_KEYS: Readonly<Record<string, string[]>> = {
  compression: COMPRESSION_KEYS,
  health: Object.keys(healthSchema.shape),
  log: Object.keys(logSchema.shape),
};
export const PROFILE_KEYS = Object.keys(profileSchema.shape);
export const PROFILE_TOOLS_KEYS = Object.keys(profileToolsSchema.shape);
export const AUTH_KEYS = Object.keys(authSchema.shape);
