/**
 * A server's own tool filter (`tools: { include, exclude }`, Gemini's includeTools/excludeTools,
 * Codex's enabled_tools/disabled_tools) applied through the profiles every request is already
 * filtered by: each profile gets the allow and deny patterns that show exactly the tools both
 * the profile and the server filter let through. Profiles keep their meaning (registry/profiles.ts:
 * deny wins, `allow` when given must match, `*` matches any characters).
 */
import type { Profile, ToolFilter } from "./types.js";

/** Every profile with the servers' filters folded in; profiles come back unchanged when no server has one. */
export function foldToolFilters(
  profiles: Record<string, Profile>,
  filters: ReadonlyMap<string, ToolFilter>,
  servers: readonly string[],
): Record<string, Profile> {
  if (filters.size === 0) return profiles;
  return Object.fromEntries(
    Object.entries(profiles).map(([name, p]) => [name, foldProfile(p, filters, servers)]),
  );
}

function foldProfile(
  profile: Profile,
  filters: ReadonlyMap<string, ToolFilter>,
  servers: readonly string[],
): Profile {
  // `s.` is a literal prefix and server names have no dots, so "s.<pattern>" matches only s's tools.
  const deny = [
    ...profile.tools.deny,
    ...[...filters].flatMap(([s, f]) => (f.exclude ?? []).map((t) => `${s}.${t}`)),
  ];
  const including = [...filters].filter(([, f]) => f.include !== undefined);
  if (including.length === 0) return { ...profile, tools: { ...profile.tools, deny } };
  const allow = servers.flatMap((s) => {
    const own = allowFor(profile.tools.allow, s);
    const include = filters.get(s)?.include;
    if (include === undefined) return own;
    // Exact names: keep those the profile's own allow (if any) lets through.
    return include
      .map((t) => `${s}.${t}`)
      .filter((ref) => profile.tools.allow === undefined || own.some((p) => matches(p, ref)));
  });
  return { ...profile, tools: { allow, deny } };
}

/** The part of `allow` that concerns server `s`, as patterns that match only `s`'s tools. */
function allowFor(allow: readonly string[] | undefined, s: string): string[] {
  if (allow === undefined) return [`${s}.*`];
  return [...new Set(allow.flatMap((p) => restrict(p, `${s}.`)))];
}

/**
 * The patterns that match exactly the texts starting with `prefix` that `pattern` matches, each
 * written as `prefix` + the rest of the pattern: walk the glob over the prefix's characters, where
 * a `*` may absorb any of them, and keep every place in the pattern that can be reached.
 */
export function restrict(pattern: string, prefix: string): string[] {
  let states = closure(new Set([0]), pattern);
  for (const ch of prefix) {
    const next = new Set<number>();
    for (const k of states) {
      if (pattern[k] === "*") next.add(k);
      else if (pattern[k] === ch) next.add(k + 1);
    }
    states = closure(next, pattern);
    if (states.size === 0) return [];
  }
  return [...states].map((k) => prefix + pattern.slice(k));
}

/** A `*` may also match nothing: every place reachable by skipping stars. */
function closure(states: Set<number>, pattern: string): Set<number> {
  const out = new Set(states);
  for (const k of states) {
    let i = k;
    while (pattern[i] === "*") out.add(++i);
  }
  return out;
}

function matches(pattern: string, text: string): boolean {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "s").test(text);
}
