/**
 * The config module's entry: file → its format (mcpx's or a client's, converted) → validate (zod,
 * entry by entry) → `${VAR}` expansion → `Config`. The other modules import the config types from here.
 */
import os from "node:os";
import path from "node:path";
import { parseAccess } from "./access.js";
import { foldToolFilters } from "./filters.js";
import {
  convertSource,
  FORMATS_LINE,
  readSource,
  type FormatId,
  type ReadOptions,
} from "./formats/read.js";
import { expandVars, MissingVariableError } from "./expand.js";
import { check, type Findings } from "./issues.js";
import { settingsSchema, type Settings } from "./schema.js";
import { parseServers, type Origin } from "./servers.js";
import { ConfigError, DEFAULTS, type Config, type Env } from "./types.js";

export { ConfigError, DEFAULT_PROFILE, DEFAULTS } from "./types.js";
export type {
  AuthConfig,
  CodeModeLimits,
  Config,
  Env,
  HealthSettings,
  LogFileSettings,
  Profile,
  ResultCompression,
  SchemaCompression,
  ServerConfig,
  TrustMode,
  SessionPolicy,
  SessionSettings,
  ToolFilter,
  UpstreamSpec,
} from "./types.js";
import { isRecord } from "../json.js";
export type { FormatId } from "./formats/read.js";

/** How a config file is read: its format (detected by default) and whether it is trusted. */
export interface LoadOptions extends ReadOptions {
  /** The file may not be the user's: see trust.ts. A top-level `"trust": "untrusted"` also says so. */
  untrusted?: boolean;
}

/**
 * Read, parse, validate and expand a config file: mcpx's own, or any client's format mcpx
 * reads (see formats/). Throws ConfigError.
 */
export function loadConfig(
  file: string,
  env: Env = process.env,
  options: LoadOptions = {},
): Config {
  const source = readSource(file, options);
  const converted = convertSource(source, options);
  return parseConfig(converted.raw, source.file, env, {
    ...(converted.origin && { origin: converted.origin }),
    untrusted: options.untrusted ?? false,
    problems: converted.problems,
    warnings: converted.warnings,
    format: converted.format,
  });
}

/** What parseConfig needs to know about a file converted from another client's format. */
export interface ParseOptions {
  origin?: Origin;
  untrusted?: boolean;
  /** Found while converting; reported with the rest. */
  problems?: readonly string[];
  warnings?: readonly string[];
  format?: FormatId;
}

/**
 * Validate an already-parsed config object. Throws ConfigError listing every problem found: the
 * top-level settings, each server entry and the access sections are checked independently, so a
 * problem in one hides none in another.
 */
export function parseConfig(
  raw: unknown,
  file: string,
  env: Env = process.env,
  options: ParseOptions = {},
): Config {
  if (!isRecord(raw)) {
    throw new ConfigError(file, [
      '(root): must be a JSON object like { "mcpServers": { "name": { "command": "..." } } }.',
    ]);
  }
  const found: Findings = {
    problems: [...(options.problems ?? [])],
    warnings: [...(options.warnings ?? [])],
    secrets: [],
  };
  const settings = check(settingsSchema, raw, [], found.problems);
  const untrusted = options.untrusted === true || raw.trust === "untrusted";
  const entries = raw.mcpServers;
  // Without a server object there is nothing to check the rest against.
  if (!isRecord(entries)) {
    if (entries === undefined && !("servers" in raw) && !("mcp_servers" in raw)) {
      found.problems.push(`(root): not a config mcpx knows. mcpx reads: ${FORMATS_LINE}.`);
    }
    throw new ConfigError(file, found.problems);
  }
  if (Object.keys(entries).length === 0) {
    found.problems.push(
      "mcpServers: is empty. Add at least one server; a proxy with no servers has nothing to offer.",
    );
  }
  const servers = parseServers(
    entries,
    {
      file,
      inheritEnv: settings?.inheritEnv ?? false,
      callTimeoutMs: settings?.callTimeout ?? DEFAULTS.callTimeoutMs,
      untrusted,
      ...(options.origin && { origin: options.origin }),
      resultBudget: settings?.resultBudget ?? DEFAULTS.resultBudget,
      // An untrusted file's servers may change under it: hold what changes until the user looks.
      trust: untrusted || settings?.trust === "untrusted" ? "hold" : (settings?.trust ?? "warn"),
    },
    env,
    found,
  );
  const access = parseAccess(raw, Object.keys(entries), env, found, untrusted);
  if (untrusted && settings?.log) {
    found.problems.push(
      "log: refused: an untrusted config may not choose files mcpx writes. Remove it, or run without --untrusted.",
    );
  }
  if (untrusted && typeof settings?.catalogCache === "string") {
    found.problems.push(
      "catalogCache: refused: an untrusted config may not choose folders mcpx writes. Remove it, or run without --untrusted.",
    );
  }
  if (untrusted && settings?.tracing) {
    found.problems.push(
      "tracing: refused: an untrusted config may not choose where mcpx sends traces. Remove it, or run without --untrusted.",
    );
  }
  const sessionSecret = parseSessionSecret(settings?.sessionSecret, env, found);
  const rawRedis = settings?.redis;
  const redis = parseRedis(typeof rawRedis === "object" ? rawRedis.url : rawRedis, env, found);
  const redisKey =
    typeof rawRedis === "object" ? parseRedisKey(rawRedis.encryptionKey, env, found) : undefined;

  if (!settings || found.problems.length > 0) {
    throw new ConfigError(file, found.problems, found.secrets);
  }
  if (servers.length === 0) {
    throw new ConfigError(
      file,
      [
        "mcpServers: every server is disabled. Enable at least one; a proxy with no servers has nothing to offer.",
      ],
      found.secrets,
    );
  }
  const filters = new Map(servers.flatMap((s) => (s.tools ? [[s.name, s.tools] as const] : [])));
  return {
    ...fromSettings(settings, file),
    file,
    servers,
    warnings: found.warnings,
    secrets: [...new Set(found.secrets)],
    ...access,
    profiles: foldToolFilters(access.profiles, filters, Object.keys(entries)),
    ...(untrusted && { trust: "untrusted" as const }),
    ...(options.format && { format: options.format }),
    ...(sessionSecret !== undefined && { sessionSecret }),
    ...(redis !== undefined && { redis }),
    ...(settings.sessionIdle !== undefined && { sessionIdleMs: settings.sessionIdle }),
    ...(redisKey !== undefined && { redisKey }),
    ...(settings.tracing?.otlp !== undefined && { tracing: { otlp: settings.tracing.otlp } }),
    ...(settings.catalogCache === false && { catalogCache: false as const }),
    ...(typeof settings.catalogCache === "string" && {
      catalogCache: path.resolve(path.dirname(file), expandHome(settings.catalogCache)),
    }),
  };
}

/** `~/x` → the home folder's x, as a shell would read it. */
function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p;
}

/** Shortest `sessionSecret` accepted: it is an HMAC key, not a password. */
const MIN_SECRET_LENGTH = 16;

/** `sessionSecret`, expanded; a secret, so problems never quote it. */
function parseSessionSecret(raw: string | undefined, env: Env, found: Findings) {
  if (raw === undefined) return undefined;
  let secret: string;
  try {
    secret = expandVars(raw, env);
  } catch (err) {
    if (!(err instanceof MissingVariableError)) throw err;
    found.problems.push(
      `sessionSecret: environment variable ${err.variable} is not set. Set it to the same long random value on every replica (e.g. the output of "openssl rand -hex 32").`,
    );
    return undefined;
  }
  if (secret.length < MIN_SECRET_LENGTH) {
    found.problems.push(
      `sessionSecret: too short (${secret.length} characters). Use at least ${MIN_SECRET_LENGTH} random characters, e.g. "\${MCPX_SESSION_SECRET}" set to the output of "openssl rand -hex 32".`,
    );
    return undefined;
  }
  found.secrets.push(secret);
  return secret;
}

/**
 * `redis`, expanded: a redis:// or rediss:// URL. Its password (and so the whole URL) is a
 * secret: problems name the key, never the value.
 */
function parseRedis(raw: string | undefined, env: Env, found: Findings): string | undefined {
  if (raw === undefined) return undefined;
  let url: string;
  try {
    url = expandVars(raw, env);
  } catch (err) {
    if (!(err instanceof MissingVariableError)) throw err;
    found.problems.push(
      `redis: environment variable ${err.variable} is not set. Set it, or remove "redis" to keep state in this process.`,
    );
    return undefined;
  }
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (
    !parsed ||
    (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") ||
    !parsed.hostname
  ) {
    found.problems.push(
      'redis: not a Redis URL. Write "redis://host:6379/0", or "rediss://…" for TLS (a password as "redis://:${REDIS_PASSWORD}@host:6379/0").',
    );
    return undefined;
  }
  if (!/^\/?\d*$/.test(parsed.pathname)) {
    found.problems.push('redis: the path must be a database number, e.g. "redis://host:6379/0".');
    return undefined;
  }
  if (parsed.password)
    found.secrets.push(url, parsed.password, decodeURIComponent(parsed.password));
  return url;
}

/** `redis.encryptionKey`, expanded; a secret, so problems never quote it. */
function parseRedisKey(raw: string | undefined, env: Env, found: Findings) {
  if (raw === undefined) return undefined;
  let key: string;
  try {
    key = expandVars(raw, env);
  } catch (err) {
    if (!(err instanceof MissingVariableError)) throw err;
    found.problems.push(
      `redis.encryptionKey: environment variable ${err.variable} is not set. Set it to the same long random value on every replica (e.g. the output of "openssl rand -hex 32"), or remove encryptionKey to keep sign-ins and trust pins in each machine's state folder.`,
    );
    return undefined;
  }
  if (key.length < MIN_SECRET_LENGTH) {
    found.problems.push(
      `redis.encryptionKey: too short (${key.length} characters). Use at least ${MIN_SECRET_LENGTH} random characters, e.g. "\${MCPX_REDIS_KEY}" set to the output of "openssl rand -hex 32".`,
    );
    return undefined;
  }
  found.secrets.push(key);
  return key;
}

/** The top-level settings with their defaults. */
function fromSettings(
  s: Settings,
  file: string,
): Pick<
  Config,
  | "discoveryTimeoutMs"
  | "startupWaitMs"
  | "compression"
  | "health"
  | "log"
  | "shutdownGraceMs"
  | "taskAfterMs"
  | "pageSize"
  | "resultBudget"
> {
  return {
    discoveryTimeoutMs: s.discoveryTimeout ?? DEFAULTS.discoveryTimeoutMs,
    startupWaitMs: s.startupWait ?? DEFAULTS.startupWaitMs,
    compression: {
      results: s.compression?.results ?? "auto",
      schemas: s.compression?.schemas ?? "typescript",
    },
    health: {
      intervalMs: s.health?.interval ?? DEFAULTS.health.intervalMs,
      timeoutMs: s.health?.timeout ?? DEFAULTS.health.timeoutMs,
      failureThreshold: s.health?.failureThreshold ?? DEFAULTS.health.failureThreshold,
      retryInitialMs: s.health?.retryInitial ?? DEFAULTS.health.retryInitialMs,
      retryMaxMs: s.health?.retryMax ?? DEFAULTS.health.retryMaxMs,
    },
    ...(s.log && {
      log: {
        file: path.resolve(path.dirname(file), s.log.file),
        maxBytes: s.log.maxBytes ?? DEFAULTS.log.maxBytes,
        maxFiles: s.log.maxFiles ?? DEFAULTS.log.maxFiles,
      },
    }),
    shutdownGraceMs: s.shutdownGrace ?? DEFAULTS.shutdownGraceMs,
    taskAfterMs: s.taskAfter ?? DEFAULTS.taskAfterMs,
    pageSize: s.pageSize ?? DEFAULTS.pageSize,
    resultBudget: s.resultBudget ?? DEFAULTS.resultBudget,
  };
}
