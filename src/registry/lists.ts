/**
 * The aggregated prompt, resource and template lists of a view: what mcpx answers prompts/list,
 * resources/list and resources/templates/list with. Each list keeps, next to the items clients
 * see, whose item each one is (data, never recovered from a name), and a version that changes
 * whenever an item does (pages of one walk must come from one version).
 */
import { createHash } from "node:crypto";
import type { PromptDef, ResourceDef, ResourceTemplateDef } from "../types.js";
import { appResource, appUri } from "./apps.js";
import type { ServerState } from "./types.js";

/** One prompt as clients see it (`server__prompt`), and whose prompt it is. */
export interface PromptEntry {
  name: string;
  server: string;
  prompt: PromptDef;
}

export interface ResourceEntry {
  server: string;
  resource: ResourceDef;
}

export interface TemplateEntry {
  server: string;
  template: ResourceTemplateDef;
}

/** One aggregated list: entries in server order, the items as sent, and their version. */
export interface CatalogList<E> {
  readonly entries: readonly E[];
  /** What goes on the wire, entry by entry. */
  readonly items: readonly Record<string, unknown>[];
  /** A digest of `items`: equal versions list equal items. */
  readonly version: string;
  /** Items dropped because an earlier server holds the same key, each said as a log line. */
  readonly clashes: readonly string[];
}

/** The name a prompt is listed under. */
export function promptName(server: string, prompt: string): string {
  return `${server}__${prompt}`;
}

/** Every visible prompt as `server__prompt`; `visible` filters by profile. */
export function promptList(
  servers: readonly ServerState[],
  visible: (server: string, prompt: PromptDef) => boolean,
): CatalogList<PromptEntry> {
  return aggregate(
    servers.flatMap((s) =>
      s.prompts
        .filter((p) => visible(s.name, p))
        .map((prompt) => ({ name: promptName(s.name, prompt.name), server: s.name, prompt })),
    ),
    (e) => e.name,
    (e) => ({ ...e.prompt, name: e.name }),
    (e, first) =>
      `prompt name ${e.name} of ${e.server} clashes with ${first.server}'s; listed once, as ${first.server}'s`,
  );
}

/**
 * Every resource of the view with its URI as the upstream gave it, but `ui://` ones (MCP Apps)
 * under their server's name (apps.ts); the first server keeps a URI. Entries keep the upstream's.
 */
export function resourceList(servers: readonly ServerState[]): CatalogList<ResourceEntry> {
  return aggregate(
    servers.flatMap((s) => s.resources.map((resource) => ({ server: s.name, resource }))),
    (e) => appUri(e.server, e.resource.uri),
    (e) => appResource(e.server, e.resource),
    (e, first) =>
      `resource ${e.resource.uri} is listed by ${first.server} and ${e.server}; the native list shows ${first.server}'s (the resources tool reaches both with "server")`,
  );
}

/** Every resource template of the view; the first server keeps a template. */
export function templateList(servers: readonly ServerState[]): CatalogList<TemplateEntry> {
  return aggregate(
    servers.flatMap((s) => s.resourceTemplates.map((template) => ({ server: s.name, template }))),
    (e) => e.template.uriTemplate,
    (e) => e.template,
    (e, first) =>
      `resource template ${e.template.uriTemplate} is listed by ${first.server} and ${e.server}; the native list shows ${first.server}'s`,
  );
}

function aggregate<E extends { server: string }>(
  all: readonly E[],
  key: (entry: E) => string,
  item: (entry: E) => Record<string, unknown>,
  clash: (entry: E, first: E) => string,
): CatalogList<E> {
  const firsts = new Map<string, E>();
  const entries: E[] = [];
  const clashes: string[] = [];
  for (const entry of all) {
    const first = firsts.get(key(entry));
    if (first) {
      clashes.push(clash(entry, first));
      continue;
    }
    firsts.set(key(entry), entry);
    entries.push(entry);
  }
  const items = entries.map(item);
  return { entries, items, version: digest(items), clashes };
}

/** A short digest of JSON-able data. */
export function digest(data: unknown): string {
  return createHash("sha256").update(JSON.stringify(data)).digest("base64url").slice(0, 22);
}
