/**
 * Notes: the optional requests a server failed without being down (issue #22). Discovery notes
 * its lists; relayed extras (completion/complete, resources/subscribe and unsubscribe) note
 * themselves when the upstream fails them, and clear when they work again. Each is shown in
 * describe("server"), /healthz and the dashboard, and logged once per server and method.
 */
import type { Logger } from "../logger.js";

/** The optional lists discovery asks for: a failure is an empty list. */
export type OptionalList = "resources/list" | "resources/templates/list" | "prompts/list";

/**
 * Requests a client relays to one server that it may fail without being down: a failed
 * completion is an empty one, a failed subscription an error for that request only.
 */
export type RelayedOptional =
  "completion/complete" | "resources/subscribe" | "resources/unsubscribe";

/**
 * Requests a server may fail without being down. A failure is noted on the server (describe,
 * /healthz, dashboard), never "down".
 */
export type OptionalMethod = OptionalList | RelayedOptional;

export type Notes = Partial<Record<OptionalMethod, string>>;

const RELAYED: ReadonlySet<string> = new Set<RelayedOptional>([
  "completion/complete",
  "resources/subscribe",
  "resources/unsubscribe",
]);

/** What a failed `method` is taken as, in the log and in describe. */
export function treatedAs(method: string): string {
  return method === "resources/subscribe" || method === "resources/unsubscribe"
    ? "treated as unsupported"
    : "treated as empty";
}

/**
 * The notes after a discovery: the lists' notes it found, plus the relayed requests' notes it
 * cannot know of (a fresh catalog says nothing about completion or subscriptions).
 */
export function afterDiscovery(
  before: Notes | undefined,
  found: Notes | undefined,
): Notes | undefined {
  const kept = Object.entries(before ?? {}).filter(([m]) => RELAYED.has(m));
  const next: Notes = { ...Object.fromEntries(kept), ...found };
  return Object.keys(next).length > 0 ? next : undefined;
}

/** `notes` with `method` set to `why`, or removed when `why` is undefined. */
export function withNote(
  notes: Notes | undefined,
  method: OptionalMethod,
  why: string | undefined,
): Notes | undefined {
  const next: Notes = { ...notes };
  if (why === undefined) delete next[method];
  else next[method] = why;
  return Object.keys(next).length > 0 ? next : undefined;
}

/** Say once each optional request that newly failed, or works again, for `name`. */
export function logNotes(
  log: Logger,
  name: string,
  before: Notes | undefined,
  after: Notes | undefined,
): void {
  for (const [method, why] of Object.entries(after ?? {})) {
    if (before?.[method as OptionalMethod] === why) continue;
    log.warn(`${name}: ${method} failed (${why}); ${treatedAs(method)}, the server stays up`);
  }
  for (const method of Object.keys(before ?? {})) {
    if (after?.[method as OptionalMethod] === undefined) log.info(`${name}: ${method} works again`);
  }
}
