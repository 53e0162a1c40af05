/**
 * The access step of parseConfig: `profiles`, `callers` and `auth`. Each profile is strict, and
 * every name it uses is checked against `mcpServers` (disabled servers count as known, so
 * disabling one does not break its profiles).
 */
import { expandVars, MissingVariableError } from "./expand.js";
import { check, type Findings } from "./issues.js";
import {
  authSchema,
  callersSchema,
  codeModeLimitsSchema,
  profileSchema,
  profilesSchema,
} from "./schema.js";
import { suggest } from "./suggest.js";
import { DEFAULT_PROFILE, type Config, type Env, type Profile } from "./types.js";
import { isRecord } from "../json.js";

/** The access sections as written in the file, not yet checked. */
export interface RawAccess {
  profiles?: unknown;
  callers?: unknown;
  auth?: unknown;
}

/** Profiles, callers and auth, cross-checked against the names in `mcpServers`. */
export function parseAccess(
  raw: RawAccess,
  serverNames: readonly string[],
  env: Env,
  found: Findings,
  untrusted = false,
): Pick<Config, "profiles" | "callers" | "auth"> {
  const profiles = parseProfiles(raw.profiles, serverNames, found, untrusted);
  // A caller mapped to a profile with problems is not reported twice: every declared name counts.
  // When `profiles` itself is broken, which names exist is unknown: callers are not cross-checked.
  const profileNames =
    raw.profiles === undefined
      ? Object.keys(profiles)
      : isRecord(raw.profiles)
        ? Object.keys(raw.profiles)
        : undefined;
  const callers = parseCallers(raw.callers, profileNames, found);
  const auth = parseAuth(raw.auth, env, found, (caller) => {
    if (raw.profiles !== undefined && !(caller in callers) && caller !== DEFAULT_PROFILE)
      return `caller "${caller}" is not listed in "callers"; it gets the "${DEFAULT_PROFILE}" profile.`;
    return undefined;
  });
  return { profiles, callers, ...(auth && { auth }) };
}

function parseProfiles(
  raw: unknown,
  serverNames: readonly string[],
  found: Findings,
  untrusted: boolean,
): Record<string, Profile> {
  if (raw === undefined) {
    return {
      [DEFAULT_PROFILE]: {
        name: DEFAULT_PROFILE,
        servers: ["*"],
        tools: { deny: [] },
        readOnly: false,
        ...(untrusted && { codeMode: false as const }),
      },
    };
  }
  const entries = check(profilesSchema, raw, ["profiles"], found.problems);
  if (!entries) return {};
  const profiles: Record<string, Profile> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const profile = parseProfile(name, entry, serverNames, found, untrusted);
    if (profile) profiles[name] = profile;
  }
  if (!(DEFAULT_PROFILE in entries)) {
    found.problems.push(
      `profiles.${DEFAULT_PROFILE}: missing. Unknown callers get this profile: add "${DEFAULT_PROFILE}": { "servers": ["*"] }, or { "servers": [] } to show them nothing.`,
    );
  }
  return profiles;
}

function parseProfile(
  name: string,
  raw: unknown,
  serverNames: readonly string[],
  found: Findings,
  untrusted: boolean,
): Profile | undefined {
  const at = `profiles.${name}`;
  const p = check(profileSchema, raw, ["profiles", name], found.problems);
  if (!p) return undefined;
  const knownServer = (refAt: string, server: string) => {
    if (server.includes("*") || serverNames.includes(server)) return;
    const guess = suggest(server, serverNames);
    found.problems.push(
      `${refAt}: no server "${server}" in mcpServers.${guess ? ` Did you mean "${guess}"?` : ""} Use a name from mcpServers (${serverNames.join(", ")}) or a pattern with "*".`,
    );
  };
  p.servers.forEach((server, i) => knownServer(`${at}.servers[${i}]`, server));
  for (const [key, kind] of [
    ["tools", "tool"],
    ["prompts", "prompt"],
  ] as const) {
    for (const list of ["allow", "deny"] as const) {
      (p[key]?.[list] ?? []).forEach((ref, i) => {
        const refAt = `${at}.${key}.${list}[${i}]`;
        const dot = ref.indexOf(".");
        if (dot > 0) knownServer(refAt, ref.slice(0, dot));
        else if (!ref.includes("*")) {
          found.problems.push(
            `${refAt}: "${ref}" is not a ${kind} ref. Write "server.${kind}"; "*" matches any characters, e.g. "*.${ref}" or "${ref}.*".`,
          );
        }
      });
    }
  }
  (p.confirm ?? []).forEach((ref, i) => {
    if (ref === "destructive") return;
    const dot = ref.indexOf(".");
    if (dot > 0) knownServer(`${at}.confirm[${i}]`, ref.slice(0, dot));
    else if (!ref.includes("*")) {
      found.problems.push(
        `${at}.confirm[${i}]: "${ref}" is not a tool ref. Write "server.tool" ("*" matches any characters), or "destructive" for every tool annotated destructiveHint.`,
      );
    }
  });
  const codeMode = parseCodeMode(p.codeMode, name, found, untrusted);
  return {
    name,
    servers: p.servers,
    tools: { ...(p.tools?.allow && { allow: p.tools.allow }), deny: p.tools?.deny ?? [] },
    readOnly: p.readOnly ?? false,
    ...(p.clientRoots === true && { clientRoots: true as const }),
    ...(p.trust !== undefined && { trust: p.trust }),
    ...(p.apps === "direct" && { apps: "direct" as const }),
    ...(p.confirm && p.confirm.length > 0 && { confirm: p.confirm }),
    ...(p.prompts && {
      prompts: { ...(p.prompts.allow && { allow: p.prompts.allow }), deny: p.prompts.deny ?? [] },
    }),
    ...(codeMode !== undefined && { codeMode }),
  };
}

/**
 * `codeMode`: true (the default), false, or an object of limits. Scripts run inside mcpx, so a
 * config that may not be the user's cannot turn them on: its profiles get `false`.
 */
function parseCodeMode(
  raw: unknown,
  profile: string,
  found: Findings,
  untrusted: boolean,
): Profile["codeMode"] {
  const at = `profiles.${profile}.codeMode`;
  if (untrusted) {
    if (raw !== undefined && raw !== false) {
      found.problems.push(
        `${at}: refused: an untrusted config may not enable code mode (scripts run inside mcpx). Remove it, or run without --untrusted.`,
      );
    }
    return false;
  }
  if (raw === undefined || raw === true) return undefined;
  if (raw === false) return false;
  if (!isRecord(raw)) {
    found.problems.push(
      `${at}: must be true, false, or an object of limits like { "timeMs": 10000, "calls": 20 }.`,
    );
    return undefined;
  }
  return check(codeModeLimitsSchema, raw, ["profiles", profile, "codeMode"], found.problems);
}

function parseCallers(
  raw: unknown,
  profileNames: readonly string[] | undefined,
  found: Findings,
): Record<string, string> {
  const callers: Record<string, string> = {};
  if (raw === undefined) return callers;
  for (const [caller, profile] of Object.entries(
    check(callersSchema, raw, ["callers"], found.problems) ?? {},
  )) {
    if (profileNames === undefined || profileNames.includes(profile)) {
      callers[caller] = profile;
      continue;
    }
    const guess = suggest(profile, profileNames);
    found.problems.push(
      `callers.${caller}: no profile "${profile}".${guess ? ` Did you mean "${guess}"?` : ""} Profiles: ${profileNames.join(", ")}.`,
    );
  }
  return callers;
}

/** Tokens shorter than this draw a startup warning (16 characters: 64+ bits even as hex). */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Bearer tokens → callers. Token keys take `${VAR}`; tokens are secrets, so problems name an
 * entry by position, never by key (a key may be a literal token). `note` says why a valid
 * token's caller deserves a warning.
 */
function parseAuth(
  raw: unknown,
  env: Env,
  found: Findings,
  note: (caller: string) => string | undefined,
): Config["auth"] {
  if (raw === undefined) return undefined;
  const auth = check(authSchema, raw, ["auth"], found.problems);
  if (!auth) return undefined;
  const tokens = new Map<string, string>();
  Object.entries(auth.tokens ?? {}).forEach(([key, caller], i) => {
    const at = `auth.tokens[${i}]`;
    if (typeof caller !== "string" || caller === "") {
      found.problems.push(`${at}: the value must be the caller name this token identifies.`);
      return;
    }
    const token = expandToken(key, at, env, found);
    if (token === undefined) return;
    found.secrets.push(token);
    const other = tokens.get(token);
    if (other !== undefined && other !== caller) {
      found.problems.push(
        `${at}: the same token also maps to caller "${other}". Give each caller its own token.`,
      );
      return;
    }
    if (token.length < MIN_TOKEN_LENGTH) {
      // Only a warning: a short token still works, but anyone who can reach the port can guess it.
      found.warnings.push(
        `${at}: the token for caller "${caller}" is ${token.length} character${token.length === 1 ? "" : "s"} long, easy to guess. Use at least ${MIN_TOKEN_LENGTH} random characters (e.g. "openssl rand -hex 32").`,
      );
    }
    const warning = note(caller);
    if (warning) found.warnings.push(`${at}: ${warning}`);
    tokens.set(token, caller);
  });
  if (!auth.tokens && !auth.oauth) {
    found.problems.push(
      'auth: give "tokens" (static bearer tokens → callers) or "oauth" (an authorization server\'s issuer and this server\'s audience), or remove "auth".',
    );
  }
  if (auth.oauth && isPlainRemote(auth.oauth.issuer)) {
    found.warnings.push(
      `auth.oauth.issuer: ${auth.oauth.issuer} is plain http: whoever sits on the path can swap the keys tokens are checked with. Use the issuer's https URL.`,
    );
  }
  const introspection = auth.oauth?.introspection;
  let clientSecret: string | undefined;
  if (introspection) {
    try {
      clientSecret = expandVars(introspection.clientSecret, env);
      found.secrets.push(clientSecret);
    } catch (err) {
      if (!(err instanceof MissingVariableError)) throw err;
      found.problems.push(
        `auth.oauth.introspection.clientSecret: environment variable ${err.variable} is not set. Set it to the client secret mcpx introspects with.`,
      );
    }
  }
  const oauth = auth.oauth && {
    issuer: auth.oauth.issuer,
    audience: auth.oauth.audience,
    scopes: auth.oauth.scopes ?? [],
    callerClaim: auth.oauth.callerClaim ?? "sub",
    ...(auth.oauth.jwksCooldown !== undefined && { jwksCooldownMs: auth.oauth.jwksCooldown }),
    ...(introspection && clientSecret !== undefined
      ? { introspection: { ...introspection, clientSecret } }
      : {}),
  };
  return oauth ? { tokens, oauth } : { tokens };
}

/** An http:// URL of another machine (loopback issuers are for development and tests). */
function isPlainRemote(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === "http:" && !["localhost", "127.0.0.1", "[::1]"].includes(hostname);
}

function expandToken(key: string, at: string, env: Env, found: Findings): string | undefined {
  let token: string;
  try {
    token = expandVars(key, env);
  } catch (err) {
    if (!(err instanceof MissingVariableError)) throw err;
    found.problems.push(
      `${at}: environment variable ${err.variable} is not set. Set it to the token clients will send.`,
    );
    return undefined;
  }
  if (token.trim() === "") {
    found.problems.push(
      `${at}: the token is empty. Use a long random value, e.g. "\${MCPX_TOKEN}".`,
    );
    return undefined;
  }
  return token;
}
