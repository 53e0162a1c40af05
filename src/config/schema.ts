import { z } from "zod";

export {
  authSchema,
  callersSchema,
  codeModeLimitsSchema,
  profileSchema,
  profilesSchema,
  profileToolsSchema,
  trustModeSchema,
} from "./schema-access.js";
import { oauthClientSchema, trustModeSchema } from "./schema-access.js";

/** Server names prefix tool refs (`server.tool`), so they cannot contain dots. */
export const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

const stringMap = z.record(z.string(), z.string());
const DAY_MS = 24 * 3600 * 1000;
const timeoutMs = z.number().int().positive().max(DAY_MS);
/** A wait in ms where 0 means "not at all". */
const waitMs = z.number().int().min(0).max(DAY_MS);
/** Tokens a `call` result may take before it is cut and kept for paging. */
const resultBudget = z.number().int().min(100).max(1_000_000);

/** Keys mcpx understands in a server entry, whatever its transport. */
const common = {
  /** One-line summary shown in the catalog instead of the server's own instructions. */
  description: z
    .string()
    .optional()
    .describe(
      "One-line summary shown in the catalog (default: the server's own title or instructions).",
    ),
  /** Skip this server entirely (Cline and others write this key). */
  disabled: z.boolean().optional().describe("`true` skips the server."),
  /** Per-request timeout in milliseconds (Claude Code's key). */
  timeout: timeoutMs
    .optional()
    .describe(
      "Per-request timeout in ms (default `callTimeout`), reset whenever the upstream reports progress.",
    ),
  /** How calls map onto upstream sessions: client (default), isolated, shared, caller. */
  session: z
    .enum(["client", "isolated", "shared", "caller"])
    .optional()
    .describe(
      "How calls map onto upstream sessions: `client` (default: one session per downstream client), `isolated` (a fresh session per call), `shared` (one long-lived session for all), `caller` (one per caller). See docs/operations.md, Sessions.",
    ),
  /** client, isolated: spare sessions kept ready (default 1 for stdio, 0 for http/sse). */
  prewarm: z
    .number()
    .int()
    .min(0)
    .max(16)
    .optional()
    .describe(
      "client, isolated: spare sessions kept initialized (default 1 for stdio, 0 for http/sse); isolated: a burst or quickly paced calls add more, up to `maxSessions`.",
    ),
  /** Concurrent sessions (client: clients; isolated: calls and spares; caller: callers); further calls queue. */
  maxSessions: z
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe(
      "client: concurrent clients; isolated: sessions held at once, calls and spares together; caller: concurrent callers. Further calls queue.",
    ),
  /** client, caller: close an idle client's (caller's) session after this many ms. */
  idleTimeout: timeoutMs
    .optional()
    .describe(
      "client, caller: ms before an idle session closes; isolated: spares a burst added close after this long unused.",
    ),
  /** Which of the server's tools are shown (Gemini's includeTools / excludeTools, Codex's enabled_tools / disabled_tools). */
  tools: z
    .strictObject({
      /** Only these tools (exact names); exclude wins over include. */
      include: z
        .array(
          z
            .string()
            .min(1)
            .refine((t) => !t.includes("*"), {
              error: 'takes exact tool names; "*" patterns belong in "exclude" or a profile',
            }),
        )
        .optional()
        .describe("Only these tools (exact names); exclude wins over include."),
      /** Never these tools: names, or patterns where "*" matches any characters. */
      exclude: z
        .array(z.string().min(1))
        .optional()
        .describe('Never these tools: names, or patterns where "*" matches any characters.'),
    })
    .optional()
    .describe(
      "Only / never these tools of the server, through every profile (also spelled `includeTools` / `excludeTools`, as Gemini does); exclude wins.",
    ),
  /** This server's result budget in tokens (the top-level `resultBudget` otherwise). */
  resultBudget: resultBudget
    .optional()
    .describe(
      "Tokens a result of this server may take before it is cut (default: the top-level `resultBudget`).",
    ),
  /** Roots the server gets outside a call (or when the caller's client has none): paths or file:// URIs. */
  roots: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "Folders (relative to the config file) or `file://` URIs: the server's roots outside a call and on `shared` sessions.",
    ),
  /** "direct": tools that declare an MCP Apps UI are also listed in tools/list as server__tool. */
  apps: z
    .enum(["direct"])
    .optional()
    .describe(
      "`direct`: this server's tools that declare an MCP Apps UI (`_meta.ui.resourceUri`) are also listed in `tools/list` as `server__tool`, so a host can render them (default: only through the meta-tools).",
    ),
  /** "lazy": started on first use, its catalog from the cache, closed after idleTimeout unused. */
  start: z
    .enum(["eager", "lazy"])
    .optional()
    .describe(
      "`lazy`: started on first use, its catalog from the cache, closed after `idleTimeout` unused (default `eager`).",
    ),
  /** Pinned definitions for this server (the top-level `trust` otherwise); see registry/trust.ts. */
  trust: trustModeSchema
    .optional()
    .describe(
      "Pinned tool and prompt definitions of this server: `off`, `warn` or `hold` (default: the top-level `trust`). A boolean is Gemini CLI's key, ignored.",
    ),
};

/** Keys only a stdio server has. */
const stdioShape = {
  command: z
    .string()
    .min(1, { error: "must be a non-empty command (an executable or path)" })
    .describe("How to start the server: an executable or a path (`${VAR}` expands)."),
  args: z.array(z.string()).optional().describe("The command's arguments (`${VAR}` expands)."),
  env: stringMap
    .optional()
    .describe("Variables added to the child's environment (`${VAR}` expands)."),
  cwd: z
    .string()
    .optional()
    .describe("The server's working folder; a relative `cwd` is relative to the config file."),
  inheritEnv: z
    .boolean()
    .optional()
    .describe(
      "`true` passes mcpx's whole environment (also settable at the top level); otherwise a child gets only `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` and its `env`.",
    ),
  /** A dotenv file whose variables are added to `env` (`env` wins); relative to the config file. */
  envFile: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A dotenv file whose variables the server gets (`env` wins); relative to the config file.",
    ),
};

/** Keys only an http or sse server has. */
const remoteShape = {
  // Checked as a URL after ${VAR} expansion (servers.ts): "${MCP_URL}" is not a URL until then.
  url: z
    .string()
    .min(1, { error: "must be an http:// or https:// URL" })
    .describe("Where the server is: an http:// or https:// URL (`${VAR}` expands)."),
  headers: stringMap
    .optional()
    .describe("What to send with every request (`${VAR}` expands; values are secrets)."),
  oauth: oauthClientSchema,
};

/** Every value `type` may take. */
export const SERVER_TYPES = ["stdio", "http", "streamable-http", "sse"] as const;

/**
 * Every key of ours in a server entry, whatever its transport, all optional: the first check of an
 * entry (foreign keys removed), so a misspelled key is reported even when the transport is unclear.
 */
export const serverKeysSchema = z
  .strictObject({
    type: z
      .enum(SERVER_TYPES)
      .describe(
        '`"stdio"` (default when `command` is given), `"http"` / `"streamable-http"` (default when only `url` is given), `"sse"`.',
      ),
    ...stdioShape,
    ...remoteShape,
    ...common,
  })
  .partial();

/** Keys of ours that may appear in a server entry. */
export const SERVER_KEYS = Object.keys(serverKeysSchema.shape);

/** The message for a key of the other transport; the key itself is named before it. */
function otherTransport(message: string) {
  return (issue: z.core.$ZodRawIssue) => (issue.code === "unrecognized_keys" ? message : undefined);
}

const stdioServer = z.strictObject(
  { type: z.literal("stdio"), ...stdioShape, ...common },
  { error: otherTransport("is for http and sse servers, not stdio ones. Remove it") },
);

const remoteServer = z.strictObject(
  { type: z.enum(["http", "streamable-http", "sse"]), ...remoteShape, ...common },
  { error: otherTransport("is for stdio servers, not http or sse ones. Remove it") },
);

/** A server entry once its keys passed `serverKeysSchema` and `type` is inferred. */
export const serverEntrySchema = z.discriminatedUnion("type", [stdioServer, remoteServer]);
export type ServerEntry = z.infer<typeof serverEntrySchema>;

/**
 * Keys other clients write in server entries. Accepted so their configs load as they are, and
 * ignored with one warning each, since mcpx has no equivalent yet.
 */
export const FOREIGN_SERVER_KEYS: Readonly<Record<string, string>> = {
  alwaysLoad: "Claude Code",
  headersHelper: "Claude Code",
  autoApprove: "Cline",
  alwaysAllow: "Cline",
  transportType: "Cline",
  networkTimeout: "Cline",
  gallery: "VS Code",
  version: "VS Code",
  dev: "VS Code",
  trust: "Gemini CLI",
};

/**
 * Keys other clients write for something mcpx does: renamed to ours when an entry is read, so
 * a tool the user excluded stays excluded whichever spelling the file uses.
 */
export const ALIASED_SERVER_KEYS: Readonly<
  Record<string, readonly ["tools", "include" | "exclude"]>
> = {
  includeTools: ["tools", "include"],
  excludeTools: ["tools", "exclude"],
};

export const compressionSchema = z.strictObject({
  results: z
    .enum(["auto", "toon", "json", "off"])
    .optional()
    .describe(
      "`auto` (default: TOON only when it is smaller than compact JSON), `toon`, `json`, `off`.",
    ),
  schemas: z
    .enum(["typescript", "json"])
    .optional()
    .describe("`typescript` (default: a declaration, JSON when that is not smaller) or `json`."),
});

export const healthSchema = z.strictObject({
  /** ms between health checks of a ready server. */
  interval: timeoutMs.optional().describe("ms between health checks of each upstream."),
  /** ms a health check may take. */
  timeout: timeoutMs.optional().describe("ms a health check may take."),
  /** Consecutive failed checks after which a server is down. */
  failureThreshold: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe("Failed checks in a row after which a server is `down`."),
  /** First reconnect delay of a down server, in ms; doubles up to retryMax. */
  retryInitial: timeoutMs
    .optional()
    .describe("First reconnect delay of a down server (ms); doubles, ±25% jitter."),
  retryMax: timeoutMs.optional().describe("Cap of the reconnect delay (ms)."),
});

export const logSchema = z.strictObject({
  /** Also write logs to this file (useful in stdio mode, where a client may hide stderr). */
  file: z.string().min(1).describe("Also write logs to this file (relative to the config file)."),
  /** Rotate when the file reaches this size. */
  maxBytes: z.number().int().min(1024).optional().describe("Rotate the log file at this size."),
  /** Rotated files kept (file.1 … file.N). */
  maxFiles: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe("Rotated files kept (`file.1` … `file.N`)."),
});

/** Top-level mcpx settings; `mcpServers` entries and access (profiles, callers, auth) are checked one by one. */
export const settingsSchema = z.strictObject({
  $schema: z
    .string()
    .optional()
    .describe(
      "The JSON Schema editors check this file with, e.g. `./node_modules/mcpx/schema/mcpx.schema.json`; mcpx ignores it.",
    ),
  mcpServers: z
    .record(z.string(), z.unknown(), {
      error: (issue) =>
        issue.input === undefined
          ? 'missing. Add an object of servers, e.g. "mcpServers": { "memory": { "command": "npx", "args": ["@modelcontextprotocol/server-memory"] } }'
          : undefined,
    })
    .describe("Server name (`A-Z a-z 0-9 _ -`) → server entry."),
  inheritEnv: z.boolean().optional().describe("Default `inheritEnv` for every stdio server."),
  /** How long discovery of one upstream may take at startup, in ms. */
  discoveryTimeout: timeoutMs
    .optional()
    .describe("ms one upstream may take to start and list its tools at startup."),
  /**
   * How long a first look (tools/list, describe) waits for servers still starting, in ms; 0
   * answers at once with what is ready.
   */
  startupWait: waitMs
    .optional()
    .describe(
      "ms the first `tools/list`, `describe` (any form) and the prompt and resource lists wait for servers still starting; then they answer with what is ready (`0`: never wait).",
    ),
  /** Default per-call timeout in ms (a server's own `timeout` wins). */
  callTimeout: timeoutMs.optional().describe("Default per-request timeout in ms."),
  compression: compressionSchema.optional().describe("How results and schemas are encoded."),
  /** Tokens a `call` result may take before it is cut and kept for paging (servers may override). */
  resultBudget: resultBudget
    .optional()
    .describe(
      "Tokens (o200k) a `call` result may take before it is cut and kept for paging (servers may override).",
    ),
  health: healthSchema.optional().describe("Health checks and reconnects of each upstream."),
  log: logSchema.optional().describe("A log file besides stderr."),
  /** ms in-flight calls may take to finish at shutdown before they are cancelled. */
  shutdownGrace: timeoutMs
    .optional()
    .describe("ms in-flight calls may take to finish at shutdown before they are cancelled."),
  /** ms after which a still-running call answers with a handle to poll (0: never). */
  taskAfter: waitMs
    .optional()
    .describe(
      "ms after which a `call` still running answers with a handle (`mcpx://tasks/<id>`) the model polls with `resources`, the call going on; 0 never hands off.",
    ),
  /** The persistent catalog cache: false turns it off, a path moves it (default $XDG_CACHE_HOME/mcpx). */
  catalogCache: z
    .union([z.boolean(), z.string().min(1)], {
      error: 'must be false (no cache) or a folder path, e.g. "catalogCache": "~/.cache/mcpx"',
    })
    .optional()
    .describe(
      "`false` turns the catalog cache off, a folder moves it (default `$XDG_CACHE_HOME/mcpx`, `~/.cache/mcpx`).",
    ),
  /** Traces (issue 29): where spans go. Off without it unless OTEL_EXPORTER_OTLP_*ENDPOINT is set. */
  tracing: z
    .strictObject({
      otlp: z
        .string()
        .refine(isPlainHttpUrl, {
          error:
            'must be the http(s) URL of an OTLP/HTTP traces endpoint without credentials, e.g. "http://localhost:4318/v1/traces" (give the collector\'s headers in OTEL_EXPORTER_OTLP_HEADERS)',
        })
        .optional()
        .describe(
          "OTLP/HTTP traces URL (e.g. `http://localhost:4318/v1/traces`): a span per call and per upstream request. Without it, traces are on only when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set. See docs/operations.md, Telemetry.",
        ),
    })
    .optional()
    .describe(
      "Traces: OpenTelemetry over OTLP/HTTP (see docs/operations.md, Telemetry). (Not `telemetry`: that key marks a file as Gemini CLI settings.)",
    ),
  /** Items per page of the aggregated prompts/list, resources/list and resources/templates/list. */
  pageSize: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .describe("Items per page of `prompts/list`, `resources/list` and `resources/templates/list`."),
  /** Key that signs 2025-era HTTP session ids (`${VAR}` allowed); replicas must share it. */
  sessionSecret: z
    .string()
    .optional()
    .describe(
      "Key signing 2025-era HTTP session ids (`${VAR}` allowed, ≥ 16 characters, a secret); set the same one on every replica (default: derived from the config's content).",
    ),
  /** How long a 2025-era HTTP session may go unseen (by every replica, with Redis) before it ends. */
  sessionIdle: timeoutMs
    .optional()
    .describe(
      "ms a 2025-era HTTP session may go without a request or an open stream before it ends (default 30 minutes); with `redis`, unseen by every replica.",
    ),
  /** Redis (or Valkey) the replicas share state through (issue 31); absent: this process only. */
  redis: z
    .union([
      z.string(),
      z
        .object({
          url: z
            .string()
            .describe(
              "`redis://host:port/db` or `rediss://…` (TLS); a password as `redis://:${REDIS_PASSWORD}@host:6379/0` (`${VAR}` allowed; a secret).",
            ),
          encryptionKey: z
            .string()
            .optional()
            .describe(
              "Key (`${VAR}`, ≥ 16 characters, a secret; e.g. `openssl rand -hex 32`) that encrypts what replicas share in Redis with AES-256-GCM: OAuth sign-ins and trust pins. With it they live in Redis (one `mcpx login`, one approval for every replica); without it they stay in each machine's state folder.",
            ),
        })
        .strict(),
    ])
    .optional()
    .describe(
      'Redis or Valkey every replica shares: `redis://host:port/db` (or `rediss://…`, TLS), or `{ "url": …, "encryptionKey": "${MCPX_REDIS_KEY}" }` to share OAuth sign-ins and trust pins too. Result handles readable on any replica; 2025-era sessions\' cancellations, DELETEs, log level, idle expiry, subscriptions, resource updates and mid-call answers reaching the replica concerned. A password as `redis://:${REDIS_PASSWORD}@host:6379/0` (`${VAR}` allowed; a secret). Absent: state stays in this process. See docs/operations.md, Running several replicas.',
    ),
  profiles: z
    .unknown()
    .optional()
    .describe(
      "Profile name → what it may see and call (default: one `default` profile with every server; with `profiles`, `default` is required).",
    ),
  callers: z
    .unknown()
    .optional()
    .describe("Caller → profile name; callers not listed get `default`."),
  auth: z.unknown().optional().describe("Bearer tokens for HTTP."),
  /**
   * "untrusted": a file that may not be the user's (it came with a cloned repository). No stdio
   * servers, only https to public hosts, no credentials or environment values sent upstream.
   */
  trust: z
    .enum(["off", "warn", "hold", "untrusted"])
    .optional()
    .describe(
      "Pinned tool and prompt definitions (docs/trust.md): `warn` (default) serves a changed, new or suspicious definition and says so, `hold` keeps it out of the catalog until `mcpx trust approve`, `off` pins nothing (suspicious text is still noted). `untrusted`: the file may not be the user's (no stdio servers, only https to public hosts, no credentials or environment values sent upstream, no code mode), and pins `hold`.",
    ),
});
export type Settings = z.infer<typeof settingsSchema>;

/** An http(s) URL with no user or password in it. */
function isPlainHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && !url.username && !url.password;
}

/** Keys of ours at the top level. */
export const TOP_KEYS = Object.keys(settingsSchema.shape);
