/** The `mcpServers` step of parseConfig: each entry checked, typed, expanded and given its defaults. */
import path from "node:path";
import { expandTracked, MissingVariableError } from "./expand.js";
import { check, isObject, type Findings } from "./issues.js";
import {
  FOREIGN_SERVER_KEYS,
  SERVER_NAME,
  serverEntrySchema,
  serverKeysSchema,
  type ServerEntry,
} from "./schema.js";
import { DEFAULTS, type Env, type ServerConfig, type UpstreamSpec } from "./types.js";

/** What a server entry inherits from the top level of the file. */
export interface ServerDefaults {
  /** Absolute path of the config file: a relative `cwd` is relative to its folder. */
  file: string;
  inheritEnv: boolean;
  callTimeoutMs: number;
  /** Result budget in tokens for servers that set none. */
  resultBudget: number;
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
  const at = `mcpServers.${name}`;
  if (!SERVER_NAME.test(name)) {
    found.problems.push(
      `${at}: server names may use only letters, digits, "_" and "-" (they prefix tool refs like "${name.replace(/[^A-Za-z0-9_-]/g, "_")}.tool"). Rename the server.`,
    );
    return undefined;
  }
  if (!isObject(raw)) {
    found.problems.push(`${at}: must be an object with "command" (stdio) or "url" (http/sse).`);
    return undefined;
  }
  const keyPath = ["mcpServers", name];
  const keys = check(serverKeysSchema, withoutForeignKeys(raw, at, found), keyPath, found.problems);
  if (!keys) return undefined;
  const type = transportType(keys, at, found);
  if (!type) return undefined;
  const entry = check(serverEntrySchema, { ...keys, type }, keyPath, found.problems);
  if (!entry) return undefined;
  if (entry.disabled) {
    found.warnings.push(`${at}: disabled; skipped.`);
    return undefined;
  }
  const spec = upstreamSpec(entry, at, defaults, env, found);
  if (!spec) return undefined;
  return {
    name,
    spec,
    timeoutMs: entry.timeout ?? defaults.callTimeoutMs,
    session: {
      policy: entry.session ?? "isolated",
      // A spare costs a process for stdio but only a connection for http: warm stdio by default.
      prewarm: entry.prewarm ?? (spec.transport === "stdio" ? 1 : 0),
      maxSessions: entry.maxSessions ?? DEFAULTS.maxSessions,
      idleTimeoutMs: entry.idleTimeout ?? DEFAULTS.idleTimeoutMs,
    },
    resultBudget: entry.resultBudget ?? defaults.resultBudget,
    ...(entry.description !== undefined && { description: entry.description }),
  };
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
    if (client === undefined) ours[key] = value;
    else found.warnings.push(`${at}.${key}: ${client}'s key, not supported by mcpx; ignored.`);
  }
  return ours;
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
      found.problems.push(
        `${at}.${key}: environment variable ${err.variable} is not set. Set it, or give a default with \${${err.variable}:-default}.`,
      );
      return value;
    }
  };
  const expandMap = (map: Record<string, string> | undefined, key: string) =>
    Object.fromEntries(
      Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, `${key}.${k}`)] as const),
    );

  switch (entry.type) {
    case "stdio": {
      const spec: UpstreamSpec = {
        transport: "stdio",
        command: expand(entry.command, "command"),
        args: (entry.args ?? []).map((a, i) => expand(a, `args[${i}]`)),
        env: expandMap(entry.env, "env"),
        inheritEnv: entry.inheritEnv ?? defaults.inheritEnv,
        ...(entry.cwd !== undefined && {
          cwd: path.resolve(path.dirname(defaults.file), entry.cwd),
        }),
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
      found.secrets.push(...Object.values(headers));
      if (url.password) found.secrets.push(url.password);
      // "streamable-http" is what Cursor and others write for Claude Code's "http".
      return { transport: entry.type === "sse" ? "sse" : "http", url: url.href, headers };
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
