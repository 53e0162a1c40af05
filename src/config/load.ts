import { readFileSync } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { ProxyError } from "../errors.js";
import { expandVars, MissingVariableError } from "./expand.js";
import {
  AUTH_KEYS,
  FOREIGN_SERVER_KEYS,
  NESTED_KEYS,
  PROFILE_KEYS,
  PROFILE_TOOLS_KEYS,
  profileSchema,
  SERVER_KEYS,
  SERVER_NAME,
  SERVER_TYPES,
  serverEntrySchema,
  settingsSchema,
  TOP_KEYS,
} from "./schema.js";
import { suggest } from "./suggest.js";

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
  | { transport: "http" | "sse"; url: string; headers: Record<string, string> };

export type SessionPolicy = "isolated" | "shared" | "caller";

/** How calls to a server map onto upstream sessions (see src/registry/pool.ts). */
export interface SessionSettings {
  policy: SessionPolicy;
  prewarm: number;
  maxSessions: number;
  idleTimeoutMs: number;
}

export interface ServerConfig {
  name: string;
  spec: UpstreamSpec;
  description?: string;
  /** Per-request timeout for this server, in ms. */
  timeoutMs: number;
  session: SessionSettings;
}

/** What one caller may see and call (see src/registry/profiles.ts for the matching rules). */
export interface Profile {
  name: string;
  /** Server names and `*` patterns. */
  servers: string[];
  /** `server.tool` patterns with `*`; no `allow` means every tool of the profile's servers. */
  tools: { allow?: string[]; deny: string[] };
  /** Only tools annotated `readOnlyHint: true`. */
  readOnly: boolean;
}

/** Bearer tokens accepted over HTTP, each fixing its caller. */
export interface AuthConfig {
  /** token → caller. Tokens are secrets: they are in `Config.secrets` too. */
  tokens: ReadonlyMap<string, string>;
}

/** The profile every unknown caller gets, and the only one when the config declares none. */
export const DEFAULT_PROFILE = "default";

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
  compression: { results: ResultCompression; schemas: SchemaCompression };
  health: HealthSettings;
  /** Optional log file with size-based rotation. */
  log?: LogFileSettings;
  /** ms in-flight calls get to finish at shutdown. */
  shutdownGraceMs: number;
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
}

export const DEFAULTS = {
  discoveryTimeoutMs: 15_000,
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
} as const;

/** A config that cannot be used. `problems` each name a key path, what is wrong and the fix. */
export class ConfigError extends ProxyError {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(
      "CONFIG_INVALID",
      `invalid config ${file}:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  }
}

/** Read, parse, validate and expand a config file. Throws ConfigError. */
export function loadConfig(
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Config {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(abs, [
      code === "ENOENT"
        ? 'file not found. Pass the path of a JSON file with an "mcpServers" object (see config.example.json).'
        : `cannot read the file (${code ?? "unknown error"}). Check its permissions.`,
    ]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(abs, [
      `not valid JSON${jsonErrorPlace(text, err)}. Fix the syntax (comments and trailing commas are not allowed).`,
    ]);
  }
  return parseConfig(raw, abs, env);
}

/** Validate an already-parsed config object. Throws ConfigError listing every problem found. */
export function parseConfig(
  raw: unknown,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Config {
  const problems: string[] = [];
  const warnings: string[] = [];
  const secrets: string[] = [];

  if (!isObject(raw)) {
    throw new ConfigError(file, [
      '(root): must be a JSON object like { "mcpServers": { "name": { "command": "..." } } }.',
    ]);
  }
  for (const key of Object.keys(raw)) {
    if (!TOP_KEYS.includes(key)) problems.push(unknownKey(key, key, TOP_KEYS));
  }
  for (const [section, keys] of Object.entries(NESTED_KEYS)) {
    const value = raw[section];
    if (!isObject(value)) continue;
    for (const key of Object.keys(value)) {
      if (!keys.includes(key)) problems.push(unknownKey(`${section}.${key}`, key, keys));
    }
  }
  if (!("mcpServers" in raw)) {
    problems.push(
      'mcpServers: missing. Add an object of servers, e.g. "mcpServers": { "memory": { "command": "npx", "args": ["@modelcontextprotocol/server-memory"] } }.',
    );
    throw new ConfigError(file, problems);
  }

  // Unknown keys were reported above with suggestions; keep zod from reporting them again.
  const known = Object.fromEntries(Object.entries(raw).filter(([k]) => TOP_KEYS.includes(k)));
  for (const [section, keys] of Object.entries(NESTED_KEYS)) {
    const value = known[section];
    if (isObject(value))
      known[section] = Object.fromEntries(Object.entries(value).filter(([k]) => keys.includes(k)));
  }
  const settings = settingsSchema.safeParse(known);
  if (!settings.success) {
    problems.push(...settings.error.issues.map((i) => zodProblem(i, [])));
    throw new ConfigError(file, problems);
  }
  const s = settings.data;
  const entries = Object.entries(s.mcpServers);
  if (entries.length === 0) {
    problems.push(
      "mcpServers: is empty. Add at least one server; a proxy with no servers has nothing to offer.",
    );
  }
  const callTimeoutMs = s.callTimeout ?? DEFAULTS.callTimeoutMs;

  const servers: ServerConfig[] = [];
  for (const [name, entry] of entries) {
    const at = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name)) {
      problems.push(
        `${at}: server names may use only letters, digits, "_" and "-" (they prefix tool refs like "${name.replace(/[^A-Za-z0-9_-]/g, "_")}.tool"). Rename the server.`,
      );
      continue;
    }
    if (!isObject(entry)) {
      problems.push(`${at}: must be an object with "command" (stdio) or "url" (http/sse).`);
      continue;
    }
    const ours: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(entry)) {
      if ((SERVER_KEYS as readonly string[]).includes(key)) ours[key] = value;
      else if (key in FOREIGN_SERVER_KEYS)
        warnings.push(
          `${at}.${key}: ${FOREIGN_SERVER_KEYS[key]}'s key, not supported by mcpx; ignored.`,
        );
      else problems.push(unknownKey(`${at}.${key}`, key, SERVER_KEYS));
    }
    if (ours.type === undefined) {
      if ("command" in ours && "url" in ours) {
        problems.push(
          `${at}: has both "command" and "url". Keep "command" for a stdio server or "url" for an http/sse server.`,
        );
        continue;
      }
      if ("command" in ours) ours.type = "stdio";
      else if ("url" in ours) ours.type = "http";
      else {
        problems.push(`${at}: needs "command" (a stdio server) or "url" (an http/sse server).`);
        continue;
      }
    } else if (!(SERVER_TYPES as readonly unknown[]).includes(ours.type)) {
      problems.push(`${at}.type: must be one of ${SERVER_TYPES.map((t) => `"${t}"`).join(", ")}.`);
      continue;
    }
    const parsed = serverEntrySchema.safeParse(ours);
    if (!parsed.success) {
      problems.push(...parsed.error.issues.map((i) => zodProblem(i, ["mcpServers", name])));
      continue;
    }
    const e = parsed.data;
    if (e.disabled) {
      warnings.push(`${at}: disabled; skipped.`);
      continue;
    }
    const expand = (value: string, key: string): string => {
      try {
        // A value that came from the environment (a token in args or a URL) is treated as secret.
        for (const m of value.matchAll(/\$\{([^}:]+)/g)) {
          const v = m[1] === undefined ? undefined : env[m[1]];
          if (v) secrets.push(v);
        }
        return expandVars(value, env);
      } catch (err) {
        if (!(err instanceof MissingVariableError)) throw err;
        problems.push(
          `${at}.${key}: environment variable ${err.variable} is not set. Set it, or give a default with \${${err.variable}:-default}.`,
        );
        return value;
      }
    };
    const expandMap = (map: Record<string, string> | undefined, key: string) =>
      Object.fromEntries(
        Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, `${key}.${k}`)] as const),
      );

    let spec: UpstreamSpec;
    if (e.type === "stdio") {
      spec = {
        transport: "stdio",
        command: expand(e.command, "command"),
        args: (e.args ?? []).map((a, i) => expand(a, `args[${i}]`)),
        env: expandMap(e.env, "env"),
        inheritEnv: e.inheritEnv ?? s.inheritEnv ?? false,
        ...(e.cwd !== undefined && { cwd: path.resolve(path.dirname(file), e.cwd) }),
      };
      secrets.push(...Object.values(spec.env));
    } else {
      const url = parseUrl(expand(e.url, "url"));
      if (!url) {
        problems.push(`${at}.url: must be an http:// or https:// URL.`);
        continue;
      }
      spec = {
        // "streamable-http" is what Cursor and others write for Claude Code's "http".
        transport: e.type === "sse" ? "sse" : "http",
        url: url.href,
        headers: expandMap(e.headers, "headers"),
      };
      secrets.push(...Object.values(spec.headers));
      if (url.password) secrets.push(url.password);
    }
    servers.push({
      name,
      spec,
      timeoutMs: e.timeout ?? callTimeoutMs,
      session: {
        policy: e.session ?? "isolated",
        // A spare costs a process for stdio but only a connection for http: warm stdio by default.
        prewarm: e.prewarm ?? (spec.transport === "stdio" ? 1 : 0),
        maxSessions: e.maxSessions ?? DEFAULTS.maxSessions,
        idleTimeoutMs: e.idleTimeout ?? DEFAULTS.idleTimeoutMs,
      },
      ...(e.description !== undefined && { description: e.description }),
    });
  }

  const access = parseAccess(s, Object.keys(s.mcpServers), env, problems, warnings, secrets);

  if (problems.length > 0) throw new ConfigError(file, problems);
  if (servers.length === 0) {
    throw new ConfigError(file, [
      "mcpServers: every server is disabled. Enable at least one; a proxy with no servers has nothing to offer.",
    ]);
  }
  return {
    file,
    servers,
    discoveryTimeoutMs: s.discoveryTimeout ?? DEFAULTS.discoveryTimeoutMs,
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
    warnings,
    secrets: [...new Set(secrets)],
    ...access,
  };
}

/**
 * `profiles`, `callers` and `auth`: each profile strict, every name it uses cross-checked against
 * `mcpServers` (disabled servers count as known, so disabling one does not break its profiles).
 */
function parseAccess(
  s: { profiles?: Record<string, unknown>; callers?: Record<string, string>; auth?: unknown },
  serverNames: string[],
  env: Readonly<Record<string, string | undefined>>,
  problems: string[],
  warnings: string[],
  secrets: string[],
): Pick<Config, "profiles" | "callers" | "auth"> {
  const profiles: Record<string, Profile> = {};
  const knownServer = (at: string, name: string): boolean => {
    if (name.includes("*") || serverNames.includes(name)) return true;
    const guess = suggest(name, serverNames);
    problems.push(
      `${at}: no server "${name}" in mcpServers.${guess ? ` Did you mean "${guess}"?` : ""} Use a name from mcpServers (${serverNames.join(", ")}) or a pattern with "*".`,
    );
    return false;
  };

  if (s.profiles === undefined) {
    profiles[DEFAULT_PROFILE] = {
      name: DEFAULT_PROFILE,
      servers: ["*"],
      tools: { deny: [] },
      readOnly: false,
    };
  } else {
    for (const [name, entry] of Object.entries(s.profiles)) {
      const at = `profiles.${name}`;
      if (!isObject(entry)) {
        problems.push(`${at}: must be an object like { "servers": ["*"] }.`);
        continue;
      }
      const ours: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(entry)) {
        if (PROFILE_KEYS.includes(key)) ours[key] = value;
        else problems.push(unknownKey(`${at}.${key}`, key, PROFILE_KEYS));
      }
      if (isObject(ours.tools)) {
        const tools: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(ours.tools)) {
          if (PROFILE_TOOLS_KEYS.includes(key)) tools[key] = value;
          else problems.push(unknownKey(`${at}.tools.${key}`, key, PROFILE_TOOLS_KEYS));
        }
        ours.tools = tools;
      }
      const parsed = profileSchema.safeParse(ours);
      if (!parsed.success) {
        problems.push(...parsed.error.issues.map((i) => zodProblem(i, ["profiles", name])));
        continue;
      }
      const p = parsed.data;
      p.servers.forEach((server, i) => knownServer(`${at}.servers[${i}]`, server));
      for (const list of ["allow", "deny"] as const) {
        (p.tools?.[list] ?? []).forEach((ref, i) => {
          const refAt = `${at}.tools.${list}[${i}]`;
          const dot = ref.indexOf(".");
          if (dot <= 0 && !ref.includes("*")) {
            problems.push(
              `${refAt}: "${ref}" is not a tool ref. Write "server.tool"; "*" matches any characters, e.g. "*.${ref}" or "${ref}.*".`,
            );
          } else if (dot > 0) {
            knownServer(refAt, ref.slice(0, dot));
          }
        });
      }
      profiles[name] = {
        name,
        servers: p.servers,
        tools: { ...(p.tools?.allow && { allow: p.tools.allow }), deny: p.tools?.deny ?? [] },
        readOnly: p.readOnly ?? false,
      };
    }
    if (!(DEFAULT_PROFILE in s.profiles)) {
      problems.push(
        `profiles.${DEFAULT_PROFILE}: missing. Unknown callers get this profile: add "${DEFAULT_PROFILE}": { "servers": ["*"] }, or { "servers": [] } to show them nothing.`,
      );
    }
  }

  const callers: Record<string, string> = {};
  const profileNames = Object.keys(s.profiles ?? profiles);
  for (const [caller, profile] of Object.entries(s.callers ?? {})) {
    if (!profileNames.includes(profile)) {
      const guess = suggest(profile, profileNames);
      problems.push(
        `callers.${caller}: no profile "${profile}".${guess ? ` Did you mean "${guess}"?` : ""} Profiles: ${profileNames.join(", ")}.`,
      );
      continue;
    }
    callers[caller] = profile;
  }

  if (s.auth === undefined) return { profiles, callers };
  if (!isObject(s.auth)) {
    problems.push('auth: must be an object like { "tokens": { "${MCPX_TOKEN}": "caller" } }.');
    return { profiles, callers };
  }
  const authRaw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(s.auth)) {
    if (AUTH_KEYS.includes(key)) authRaw[key] = value;
    else problems.push(unknownKey(`auth.${key}`, key, AUTH_KEYS));
  }
  if (!isObject(authRaw.tokens)) {
    problems.push(
      'auth.tokens: must be an object of token → caller, e.g. { "${MCPX_TOKEN_CI}": "ci-bot" }.',
    );
    return { profiles, callers };
  }
  const tokens = new Map<string, string>();
  // Entries are named by position, never by key: a key may be a literal token.
  Object.entries(authRaw.tokens).forEach(([raw, caller], i) => {
    const at = `auth.tokens[${i}]`;
    if (typeof caller !== "string" || caller === "") {
      problems.push(`${at}: the value must be the caller name this token identifies.`);
      return;
    }
    let token: string;
    try {
      token = expandVars(raw, env);
    } catch (err) {
      if (!(err instanceof MissingVariableError)) throw err;
      problems.push(
        `${at}: environment variable ${err.variable} is not set. Set it to the token clients will send.`,
      );
      return;
    }
    if (token.trim() === "") {
      problems.push(`${at}: the token is empty. Use a long random value, e.g. "\${MCPX_TOKEN}".`);
      return;
    }
    secrets.push(token);
    const other = tokens.get(token);
    if (other !== undefined && other !== caller) {
      problems.push(
        `${at}: the same token also maps to caller "${other}". Give each caller its own token.`,
      );
      return;
    }
    if (s.profiles !== undefined && !(caller in callers) && caller !== DEFAULT_PROFILE) {
      warnings.push(
        `${at}: caller "${caller}" is not listed in "callers"; it gets the "${DEFAULT_PROFILE}" profile.`,
      );
    }
    tokens.set(token, caller);
  });
  return { profiles, callers, auth: { tokens } };
}

/**
 * Where JSON.parse failed, as " at line L, column C". Only the place: V8's message may quote a
 * snippet of the file, and the file may hold a literal token.
 */
function jsonErrorPlace(text: string, err: unknown): string {
  const position = /position (\d+)/.exec((err as Error).message)?.[1];
  if (position === undefined) return "";
  const before = text.slice(0, Number(position));
  const line = before.split("\n").length;
  const column = Number(position) - before.lastIndexOf("\n");
  return ` at line ${line}, column ${column}`;
}

function parseUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    // Not a URL: the caller reports the key, never the (possibly secret) expanded text.
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unknownKey(at: string, key: string, known: readonly string[]): string {
  const guess = suggest(key, known);
  return guess
    ? `${at}: unknown key. Did you mean "${guess}"?`
    : `${at}: unknown key. Known keys here: ${known.join(", ")}.`;
}

function zodProblem(issue: z.core.$ZodIssue, prefix: (string | number)[]): string {
  const at = formatPath([
    ...prefix,
    ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
  ]);
  let message = issue.message;
  // Zod's default messages say what is wrong; add how to fix the common ones.
  if (issue.code === "invalid_type") message = `must be ${article(issue.expected)}`;
  if (issue.code === "unrecognized_keys") {
    return issue.keys
      .map((k) => `${at ? `${at}.` : ""}${k}: "${k}" is not allowed in this entry. Remove it.`)
      .join("; ");
  }
  if (issue.code === "invalid_value")
    message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  return `${at || "(root)"}: ${message}.`;
}

function article(type: string): string {
  if (type === "record" || type === "object") return "an object";
  if (type === "array") return "an array";
  if (type === "int") return "an integer";
  return `a ${type}`;
}

function formatPath(parts: (string | number)[]): string {
  return parts.reduce<string>(
    (acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p),
    "",
  );
}
