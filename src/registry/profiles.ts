/**
 * Who may see what: pure functions from a caller to its profile, and from a profile to the
 * servers, tools and prompts it shows. No state; the catalog view (view.ts) caches their answers.
 */
import { DEFAULT_PROFILE, type Config, type Profile } from "../config/load.js";
import type { ToolDef } from "../types.js";

/** The part of a config that decides access; swapped as one object on reload. */
export type AccessConfig = Pick<Config, "profiles" | "callers">;

/** The profile of `caller`: its mapping in `callers`, else `default`. */
export function profileFor(config: AccessConfig, caller: string): Profile {
  const name = Object.hasOwn(config.callers, caller) ? config.callers[caller] : undefined;
  const profile = (name !== undefined && config.profiles[name]) || config.profiles[DEFAULT_PROFILE];
  // The config loader guarantees `default`; reaching this is our bug.
  if (!profile) throw new Error(`no "${DEFAULT_PROFILE}" profile in the config`);
  return profile;
}

/** A `*` pattern as a RegExp over the whole text: `*` matches any characters, dots included. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "s");
}

function matchesAny(patterns: readonly string[], text: string): boolean {
  // `*` alone (the default profile's servers) needs no RegExp: this runs on every call.
  return patterns.some((p) =>
    p === "*" ? true : p.includes("*") ? globToRegExp(p).test(text) : p === text,
  );
}

/** Whether the profile lists `server` (by name or pattern). */
export function serverVisible(profile: Profile, server: string): boolean {
  return matchesAny(profile.servers, server);
}

/**
 * Whether `server.tool` is visible to the profile: its server is listed, the ref matches `allow`
 * (when given) and no `deny`, and under `readOnly` the tool says `readOnlyHint: true`.
 */
export function toolVisible(profile: Profile, server: string, tool: ToolDef): boolean {
  if (!serverVisible(profile, server)) return false;
  const ref = `${server}.${tool.name}`;
  if (matchesAny(profile.tools.deny, ref)) return false;
  if (profile.tools.allow && !matchesAny(profile.tools.allow, ref)) return false;
  if (profile.readOnly && tool.annotations?.readOnlyHint !== true) return false;
  return true;
}

/**
 * Whether `server.prompt` is visible to the profile: its server is listed, the ref matches
 * `prompts.allow` (when given) and no `prompts.deny`. `readOnly` concerns tools only: a prompt
 * runs nothing.
 */
export function promptVisible(profile: Profile, server: string, prompt: string): boolean {
  if (!serverVisible(profile, server)) return false;
  const ref = `${server}.${prompt}`;
  const rules = profile.prompts;
  if (!rules) return true;
  if (matchesAny(rules.deny, ref)) return false;
  return rules.allow === undefined || matchesAny(rules.allow, ref);
}

/** True when the profile shows every server, tool and prompt, so views can skip filtering. */
export function unrestricted(profile: Profile): boolean {
  const prompts = profile.prompts;
  return (
    profile.servers.includes("*") &&
    profile.tools.deny.length === 0 &&
    (profile.tools.allow === undefined || profile.tools.allow.includes("*")) &&
    !profile.readOnly &&
    (prompts === undefined ||
      (prompts.deny.length === 0 && (prompts.allow === undefined || prompts.allow.includes("*"))))
  );
}
