/** The `mcpServers` step of parseConfig: each entry checked, typed, expanded and given its defaults. */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { readEnvFile } from "./envfile.js";
import { expandTracked, MissingVariableError } from "./expand.js";
import { headerSecrets, urlSecrets } from "./secrets.js";
import { check, formatPath, type Findings, type KeyPath } from "./issues.js";
import {
  ALIASED_SERVER_KEYS,
  FOREIGN_SERVER_KEYS,
  SERVER_NAME,
  serverEntrySchema,
  serverKeysSchema,
  type ServerEntry,
} from "./schema.js";
import { untrustedProblems } from "./trust.js";
import {
  DEFAULTS,
  type Env,
  type ServerConfig,
  type TrustMode,
  type UpstreamSpec,
} from "./types.js";
import { isRecord } from "../json.js";

/** Where a server entry came from, when the file is another client's (see formats/). */
export interface Origin {
  /** The entry's key path in the client's own file, for messages. */
  keyPath(server: string): KeyPath;
  /** More words for an unset variable the conversion introduced (e.g. a VS Code input). */
  hint?(variable: string): string | undefined;
}

/** What a server entry inherits from the top level of the file. */
export interface ServerDefaults {
  /** Absolute path of the config file: a relative `cwd` or `envFile` is relative to its folder. */
  file: string;
  inheritEnv: boolean;
  callTimeoutMs: number;
  /** The file may not be the user's: see trust.ts. */
  untrusted: boolean;
  origin?: Origin;
  /** Result budget in tokens for servers that set none. */
  resultBudget: number;
  /** Pins for servers that set no `trust` of their own. */
  trust: TrustMode;
}

/**
 * Every enabled entry of `mcpServers`. Each entry is checked on its own, so one bad entry hides
 * no other entry's problems.
 */
export function parseServers(
  entries: Record<string, unknown>,
  defaults: ServerDefaults,
  env: Env,
  found: Findings,
): ServerConfig[] {
  const servers: ServerConfig[] = [];
  for (const [name, raw] of Object.entries(entries)) {
    const server = parseServer(name, raw, defaults, env, found);
    if (server) servers.push(server);
  }
  return servers;
}

function parseServer(
  name: string,
  raw: unknown,
  defaults: ServerDefaults,
  env: Env,
  found: Findings,
): ServerConfig | undefined {
  const keyPath = defaults.origin?.keyPath(name) ?? ["mcpServers", name];
  const at = formatPath(keyPath);
  if (!SERVER_NAME.test(name)) {
    found.problems.push(
      `${at}: server names may use only letters, digits, "_" and "-" (they prefix tool refs like "${name.replace(/[^A-Za-z0-9_-]/g, "_")}.tool"). Rename the server.`,
    );
    return undefined;
  }
  if (!isRecord(raw)) {
    found.problems.push(`${at}: must be an object with "command" (stdio) or "url" (http/sse).`);
    return undefined;
  }
  const ours = withAliases(withoutForeignKeys(raw, at, found), at, found);
  const keys = check(serverKeysSchema, ours, keyPath, found.problems);
  if (!keys) return undefined;
  const type = transportType(keys, at, found);
  if (!type) return undefined;
  const entry = check(serverEntrySchema, { ...keys, type }, keyPath, found.problems);
  if (!entry) return undefined;
  if (entry.disabled) {
    found.warnings.push(`${at}: disabled; skipped.`);
    return undefined;
  }
  if (defaults.untrusted) {
    const refused = untrustedProblems(entry, at);
    if (refused.length > 0) {
      found.problems.push(...refused);
      return undefined;
    }
  }
  const spec = upstreamSpec(entry, at, defaults, env, found);
  if (!spec) return undefined;
  return {
    name,
    spec,
    timeoutMs: entry.timeout ?? defaults.callTimeoutMs,
    session: {
      // One session per client keeps what stateful servers hold between a client's calls
      // (browser pages, search sessions, thought history): see "Sessions" in docs/operations.md.
      policy: entry.session ?? "client",
      // A spare costs a process for stdio but only a connection for http: warm stdio by default.
      prewarm: entry.prewarm ?? (spec.transport === "stdio" ? 1 : 0),
      maxSessions: entry.maxSessions ?? DEFAULTS.maxSessions,
      idleTimeoutMs: entry.idleTimeout ?? DEFAULTS.idleTimeoutMs,
    },
    resultBudget: entry.resultBudget ?? defaults.resultBudget,
    trust: entry.trust ?? defaults.trust,
    ...(entry.start === "lazy" && { start: "lazy" as const }),
    ...(entry.apps === "direct" && { apps: "direct" as const }),
    ...(entry.description !== undefined && { description: entry.description }),
    ...(entry.tools && (entry.tools.include || entry.tools.exclude) && { tools: entry.tools }),
    ...(entry.roots && { roots: rootUris(entry.roots, defaults.file, at, found) }),
  };
}

/** `roots` as file:// URIs: a path is relative to the config file's folder. */
function rootUris(roots: string[], file: string, at: string, found: Findings): string[] {
  return roots.flatMap((root, i) => {
    if (!/^[a-z][a-z0-9+.-]*:/i.test(root) || /^[a-z]:[\\/]/i.test(root))
      return [pathToFileURL(path.resolve(path.dirname(file), root)).href];
    if (root.startsWith("file://")) return [root];
    found.problems.push(
      `${at}.roots[${i}]: "${root}" is not a folder. Give a path (relative to the config file) or a file:// URI.`,
    );
    return [];
  });
}

/** The entry without the keys other clients write (one warning each): their configs load as they are. */
function withoutForeignKeys(
  entry: Record<string, unknown>,
  at: string,
  found: Findings,
): Record<string, unknown> {
  const ours: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    const client = FOREIGN_SERVER_KEYS[key];
    // Gemini CLI's `trust` is a boolean (skip its confirmations); a string is ours (pins).
    if (client === undefined || (key === "trust" && typeof value === "string")) ours[key] = value;
    else found.warnings.push(`${at}.${key}: ${client}'s key, not supported by mcpx; ignored.`);
  }
  return ours;
}

/** Other clients' names for keys mcpx has (Gemini's includeTools → tools.include). */
function withAliases(
  entry: Record<string, unknown>,
  at: string,
  found: Findings,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...entry };
  for (const [alias, [key, sub]] of Object.entries(ALIASED_SERVER_KEYS)) {
    if (!(alias in out)) continue;
    const value = out[alias];
    delete out[alias];
    const target = isRecord(out[key]) ? { ...out[key] } : {};
    if (target[sub] !== undefined) {
      found.problems.push(`${at}.${alias}: also given as ${key}.${sub}. Keep one of them.`);
      continue;
    }
    out[key] = { ...target, [sub]: value };
  }
  return out;
}

/** `type` as written, or inferred as Claude Code does: `command` means stdio, `url` http. */
function transportType(
  keys: { type?: ServerEntry["type"]; command?: string; url?: string },
  at: string,
  found: Findings,
): ServerEntry["type"] | undefined {
  if (keys.type !== undefined) return keys.type;
  if (keys.command !== undefined && keys.url !== undefined) {
    found.problems.push(
      `${at}: has both "command" and "url". Keep "command" for a stdio server or "url" for an http/sse server.`,
    );
    return undefined;
  }
  if (keys.command !== undefined) return "stdio";
  if (keys.url !== undefined) return "http";
  found.problems.push(`${at}: needs "command" (a stdio server) or "url" (an http/sse server).`);
  return undefined;
}

/** How to start or reach the server, with `${VAR}` expanded; every value taken from `env` is a secret. */
function upstreamSpec(
  entry: ServerEntry,
  at: string,
  defaults: ServerDefaults,
  env: Env,
  found: Findings,
): UpstreamSpec | undefined {
  const expand = (value: string, key: string): string => {
    try {
      const { text, values } = expandTracked(value, env);
      // A value that came from the environment (a token in args or a URL) is treated as secret.
      found.secrets.push(...values);
      return text;
    } catch (err) {
      if (!(err instanceof MissingVariableError)) throw err;
      const hint = defaults.origin?.hint?.(err.variable);
      found.problems.push(
        hint
          ? `${at}.${key}: ${hint}`
          : `${at}.${key}: environment variable ${err.variable} is not set. Set it, or give a default with \${${err.variable}:-default}.`,
      );
      return value;
    }
  };
  const expandMap = (map: Record<string, string> | undefined, key: string) =>
    Object.fromEntries(
      Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, `${key}.${k}`)] as const),
    );
  const dir = path.dirname(defaults.file);

  switch (entry.type) {
    case "stdio": {
      const fromFile =
        entry.envFile === undefined
          ? {}
          : readEnvFile(
              path.resolve(dir, expand(entry.envFile, "envFile")),
              `${at}.envFile`,
              found,
            );
      const spec: UpstreamSpec = {
        transport: "stdio",
        command: expand(entry.command, "command"),
        args: (entry.args ?? []).map((a, i) => expand(a, `args[${i}]`)),
        // The entry's own env wins over its envFile, as in VS Code.
        env: { ...fromFile, ...expandMap(entry.env, "env") },
        inheritEnv: entry.inheritEnv ?? defaults.inheritEnv,
        ...(entry.cwd !== undefined && { cwd: path.resolve(dir, entry.cwd) }),
      };
      found.secrets.push(...Object.values(spec.env));
      return spec;
    }
    case "http":
    case "streamable-http":
    case "sse": {
      const url = parseUrl(expand(entry.url, "url"));
      if (!url) {
        found.problems.push(`${at}.url: must be an http:// or https:// URL.`);
        return undefined;
      }
      const headers = expandMap(entry.headers, "headers");
      found.secrets.push(...Object.values(headers).flatMap(headerSecrets), ...urlSecrets(url));
      const oauth = entry.oauth && {
        ...entry.oauth,
        ...(entry.oauth.clientId !== undefined && {
          clientId: expand(entry.oauth.clientId, "oauth.clientId"),
        }),
        ...(entry.oauth.clientSecret !== undefined && {
          clientSecret: expand(entry.oauth.clientSecret, "oauth.clientSecret"),
        }),
      };
      if (oauth?.clientSecret) found.secrets.push(oauth.clientSecret);
      // "streamable-http" is what Cursor and others write for Claude Code's "http".
      return {
        transport: entry.type === "sse" ? "sse" : "http",
        url: url.href,
        headers,
        ...(oauth && { oauth }),
      };
    }
    default:
      return entry satisfies never;
  }
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
