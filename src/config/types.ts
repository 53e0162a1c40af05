/** The validated config every other module reads, its defaults, and the error a bad one raises. */
import { ProxyError } from "../errors.js";

/** How to start or reach one upstream, after validation and `${VAR}` expansion. */
export type UpstreamSpec =
  | {
      transport: "stdio";
      command: string;
      args: string[];
      /** Only the variables the config sets; the safe default environment is added at spawn. */
      env: Record<string, string>;
      cwd?: string;
      /** Pass the proxy's whole environment to the child instead of the safe default. */
      inheritEnv: boolean;
    }
  | {
      transport: "http" | "sse";
      url: string;
      headers: Record<string, string>;
      /** How `mcpx login` identifies itself to the authorization server (`${VAR}` expanded). */
      oauth?: OAuthClientConfig;
    };

/** A remote server's `oauth`: the client identity `mcpx login` uses. */
export interface OAuthClientConfig {
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  clientMetadataUrl?: string;
  callbackPort?: number;
}

export type SessionPolicy = "client" | "isolated" | "shared" | "caller";

/** How calls to a server map onto upstream sessions (see src/registry/pool.ts). */
export interface SessionSettings {
  policy: SessionPolicy;
  prewarm: number;
  maxSessions: number;
  idleTimeoutMs: number;
}

/** Which tools of one server are shown: folded into every profile (see filters.ts). */
export interface ToolFilter {
  /** Exact tool names; when given, only these. */
  include?: string[];
  /** Tool names or `*` patterns; wins over include. */
  exclude?: string[];
}

export interface ServerConfig {
  name: string;
  spec: UpstreamSpec;
  description?: string;
  /** The server's own tool filter, as written (already applied through the profiles). */
  tools?: ToolFilter;
  /** Per-request timeout for this server, in ms. */
  timeoutMs: number;
  session: SessionSettings;
  /** Tokens a result of this server's tools may take before it is cut (see DEFAULTS). */
  resultBudget: number;
  /** `file://` URIs the server gets as roots outside a call, or when the caller's client has none. */
  roots?: string[];
  /** "lazy": not started until a request needs it, closed after `session.idleTimeoutMs` unused. */
  start?: "lazy";
  /**
   * Pinned definitions (src/registry/trust.ts): the entry's `trust`, else the top-level one
   * (`hold` in an untrusted config), else `warn`. Absent (configs built in code): `warn`.
   */
  trust?: TrustMode;
  /** "direct": its tools with an MCP Apps UI are also listed in tools/list (registry/apps.ts). */
  apps?: "direct";
}

/** What a changed, new or suspicious tool or prompt definition gets: see src/registry/trust.ts. */
export type TrustMode = "off" | "warn" | "hold";

/** What one caller may see and call (see src/registry/profiles.ts for the matching rules). */
export interface Profile {
  name: string;
  /** Server names and `*` patterns. */
  servers: string[];
  /** `server.tool` patterns with `*`; no `allow` means every tool of the profile's servers. */
  tools: { allow?: string[]; deny: string[] };
  /** Only tools annotated `readOnlyHint: true`. */
  readOnly: boolean;
  /** "direct": app tools of every server of the profile are also listed in tools/list. */
  apps?: "direct";
  /**
   * True: an HTTP caller's roots reach upstreams as its client gives them, as a stdio client's
   * do. Absent: they are held within each server's configured `roots` (upstream/roots.ts).
   */
  clientRoots?: true;
  /**
   * Calls a person must allow first: `server.tool` patterns with `*`, and `"destructive"` for
   * every tool annotated `destructiveHint: true`. Absent: none.
   */
  confirm?: string[];
  /** Pins for this profile's callers: the stricter of this and the server's mode applies. */
  trust?: TrustMode;
  /** `server.prompt` patterns with `*`, as `tools`; absent: every prompt of the profile's servers. */
  prompts?: { allow?: string[]; deny: string[] };

  /**
   * Code mode (`call({ script })`): `false` turns it off; an object holds limits for the
   * profile's scripts (each missing one takes the sandbox's default, src/sandbox/limits.ts).
   * Absent: on with every default, except in an untrusted config, where it is always `false`.
   */
  codeMode?: false | CodeModeLimits;
}

/** Limits of one profile's scripts, named as the sandbox names them (see src/sandbox/limits.ts). */
export interface CodeModeLimits {
  timeMs?: number;
  memoryBytes?: number;
  stackBytes?: number;
  calls?: number;
  resultBytes?: number;
  logBytes?: number;
}

/** Bearer tokens accepted over HTTP, each fixing its caller. */
export interface AuthConfig {
  /** token → caller. Tokens are secrets: they are in `Config.secrets` too. */
  tokens: ReadonlyMap<string, string>;
  /** OAuth access tokens (JWT) of one authorization server, beside the static tokens. */
  oauth?: OAuthResourceConfig;
}

/** mcpx as an OAuth protected resource (src/auth/oauth.ts). */
export interface OAuthResourceConfig {
  /** The issuer URL, as tokens' `iss` has it. */
  issuer: string;
  /** This server's /mcp URL: the resource clients ask tokens for, and the `aud` they carry. */
  audience: string;
  /** Scopes every token must carry (may be empty). */
  scopes: string[];
  /** The claim naming the caller ("sub" by default). */
  callerClaim: string;
  /** Least ms between two JWKS fetches for an unknown `kid` (jose's cooldown; default 30 s). */
  jwksCooldownMs?: number;
  /** RFC 7662 introspection of opaque tokens; the secret is in `Config.secrets` too. */
  introspection?: { endpoint?: string; clientId: string; clientSecret: string };
}

/** The profile every unknown caller gets, and the only one when the config declares none. */
export const DEFAULT_PROFILE = "default";

/**
 * How JSON text in tool results is re-encoded: "auto" picks the cheapest of compact JSON, TOON
 * and sparse tables (see src/compression/sparse.ts), "toon" and "json" force one, "off" passes
 * results through untouched.
 */
export type ResultCompression = "auto" | "toon" | "json" | "off";
export type SchemaCompression = "typescript" | "json";

export interface HealthSettings {
  intervalMs: number;
  timeoutMs: number;
  failureThreshold: number;
  retryInitialMs: number;
  retryMaxMs: number;
}

export interface LogFileSettings {
  file: string;
  maxBytes: number;
  maxFiles: number;
}

export interface Config {
  /** Absolute path of the file the config came from (for messages). */
  file: string;
  servers: ServerConfig[];
  discoveryTimeoutMs: number;
  /** How long tools/list and describe wait for servers still starting before answering. */
  startupWaitMs: number;
  compression: { results: ResultCompression; schemas: SchemaCompression };
  health: HealthSettings;
  /** Optional log file with size-based rotation. */
  log?: LogFileSettings;
  /** ms in-flight calls get to finish at shutdown. */
  shutdownGraceMs: number;
  /** ms after which a still-running call answers with a handle (0: never; executor/tasks.ts). */
  taskAfterMs: number;
  /** The top-level result budget (servers may set their own); a script's value is held to it. */
  resultBudget: number;
  /** Non-fatal findings (foreign keys ignored, disabled servers), each said once at startup. */
  warnings: string[];
  /** Values that must never be logged: env values, header values, auth tokens. */
  secrets: string[];
  /** Profiles by name; always holds `default`. */
  profiles: Record<string, Profile>;
  /** caller → profile name. Callers not listed get `default`. */
  callers: Record<string, string>;
  /** Present when HTTP clients must present a bearer token. */
  auth?: AuthConfig;
  /**
   * "untrusted" when the file may not be the user's (`--untrusted`, or `"trust": "untrusted"`):
   * remote servers are checked with `assertPublicServers` at load, and each connection to them
   * goes through the public-only fetch (src/upstream/public-fetch.ts), which checks its DNS answer.
   */
  trust?: "untrusted";
  /** The format the file was read as, when it was another client's (see formats/). */
  format?: "mcpx" | "claude-code" | "claude-desktop" | "cursor" | "vscode" | "gemini" | "codex";
  /** Items per page of the aggregated prompt and resource lists. */
  pageSize: number;
  /**
   * The persistent catalog cache: false when turned off, an absolute folder when the config moves
   * it, undefined for the default (`$XDG_CACHE_HOME/mcpx`, resolved by the command that serves).
   */
  catalogCache?: false | string;
  /** Traces: the OTLP/HTTP traces URL the config names (the OTEL_* variables also turn them on). */
  tracing?: { otlp?: string };
  /**
   * Signs 2025-era HTTP session ids so any replica can serve them (a secret). Absent: a key
   * derived from the config's content.
   */
  sessionSecret?: string;
  /** ms a 2025-era HTTP session may go unseen before it ends (`sessionIdle`); absent: 30 min. */
  sessionIdleMs?: number;
  /** Redis URL (expanded; a secret when it holds a password): shared state of every replica. */
  redis?: string;
  /**
   * `redis.encryptionKey`, expanded (a secret): sign-ins and trust pins live in Redis, sealed
   * with it (src/shared/sealed.ts). Absent: they stay in the state folder.
   */
  redisKey?: string;
}

export const DEFAULTS = {
  discoveryTimeoutMs: 15_000,
  startupWaitMs: 5_000,
  callTimeoutMs: 60_000,
  maxSessions: 8,
  idleTimeoutMs: 5 * 60_000,
  health: {
    intervalMs: 30_000,
    timeoutMs: 5_000,
    failureThreshold: 3,
    retryInitialMs: 1_000,
    retryMaxMs: 5 * 60_000,
  },
  log: { maxBytes: 10 * 1024 * 1024, maxFiles: 3 },
  shutdownGraceMs: 10_000,
  /** Most clients' request timeout is 60 s, reset by progress (which mcpx sends meanwhile). */
  taskAfterMs: 60_000,
  pageSize: 200,
  /**
   * Result budget in o200k tokens. Claude Code warns above 10,000 tokens of tool output and cuts
   * at 25,000; Claude's tokenizer counts more tokens than o200k for the same text, so 8,000 keeps
   * a result under the warning with room for the estimate's error, and is 4 % of a 200k context.
   */
  resultBudget: 8_000,
} as const;

/** A config that cannot be used. `problems` each name a key path, what is wrong and the fix. */
export class ConfigError extends ProxyError {
  constructor(
    readonly file: string,
    readonly problems: string[],
    /** The secrets found before the problems stopped the load (commands redact output with them). */
    readonly secrets: readonly string[] = [],
  ) {
    super(
      "CONFIG_INVALID",
      `invalid config ${file}:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  }
}

/** The environment `${VAR}` references expand from (process.env, or a test's own). */
export type Env = Readonly<Record<string, string | undefined>>;
