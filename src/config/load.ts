/**
 * The config module's entry: file → JSON → validate (zod, entry by entry) → `${VAR}` expansion →
 * `Config`. The other modules import the config types from here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseAccess } from "./access.js";
import { check, isObject, type Findings } from "./issues.js";
import { settingsSchema, type Settings } from "./schema.js";
import { parseServers } from "./servers.js";
import { ConfigError, DEFAULTS, type Config, type Env } from "./types.js";

export { ConfigError, DEFAULT_PROFILE, DEFAULTS } from "./types.js";
export type {
  AuthConfig,
  Config,
  Env,
  HealthSettings,
  LogFileSettings,
  Profile,
  ResultCompression,
  SchemaCompression,
  ServerConfig,
  SessionPolicy,
  SessionSettings,
  UpstreamSpec,
} from "./types.js";

/** Read, parse, validate and expand a config file. Throws ConfigError. */
export function loadConfig(file: string, env: Env = process.env): Config {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(abs, [
      code === "ENOENT"
        ? 'file not found. Pass the path of a JSON file with an "mcpServers" object (e.g. examples/npx.json, shipped with mcpx).'
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

/**
 * Validate an already-parsed config object. Throws ConfigError listing every problem found: the
 * top-level settings, each server entry and the access sections are checked independently, so a
 * problem in one hides none in another.
 */
export function parseConfig(raw: unknown, file: string, env: Env = process.env): Config {
  if (!isObject(raw)) {
    throw new ConfigError(file, [
      '(root): must be a JSON object like { "mcpServers": { "name": { "command": "..." } } }.',
    ]);
  }
  const found: Findings = { problems: [], warnings: [], secrets: [] };
  const settings = check(settingsSchema, raw, [], found.problems);
  const entries = raw.mcpServers;
  // Without a server object there is nothing to check the rest against.
  if (!isObject(entries)) throw new ConfigError(file, found.problems);
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
      resultBudget: settings?.resultBudget ?? DEFAULTS.resultBudget,
    },
    env,
    found,
  );
  const access = parseAccess(raw, Object.keys(entries), env, found);

  if (!settings || found.problems.length > 0) throw new ConfigError(file, found.problems);
  if (servers.length === 0) {
    throw new ConfigError(file, [
      "mcpServers: every server is disabled. Enable at least one; a proxy with no servers has nothing to offer.",
    ]);
  }
  return {
    ...fromSettings(settings, file),
    file,
    servers,
    warnings: found.warnings,
    secrets: [...new Set(found.secrets)],
    ...access,
  };
}

/** The top-level settings with their defaults. */
function fromSettings(
  s: Settings,
  file: string,
): Pick<Config, "discoveryTimeoutMs" | "compression" | "health" | "log" | "shutdownGraceMs"> {
  return {
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
  };
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
