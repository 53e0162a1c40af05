/**
 * The catalog as one profile sees it. Views are derived from the registry's per-server caches
 * (identical specs are still discovered once) and cached per profile until the registry or the
 * access config changes.
 */
import type { Profile } from "../config/load.js";
import type { PromptDef, ToolDef } from "../types.js";
import { matchesUriTemplate } from "../upstream/uri-template.js";
import {
  promptList,
  resourceList,
  templateList,
  type CatalogList,
  type PromptEntry,
  type ResourceEntry,
  type TemplateEntry,
} from "./lists.js";
import {
  profileFor,
  promptVisible,
  serverVisible,
  toolVisible,
  unrestricted,
  type AccessConfig,
} from "./profiles.js";
import { appUri, splitAppUri } from "./apps.js";
import { flagged, stricter } from "./trust.js";
import type { ServerState, TrustFinding, TrustReport } from "./types.js";
import { ToolIndex, type SearchHit } from "./search.js";

/** What the meta-tools and the executor read: the registry itself, or a profile's view of it. */
export interface CatalogSource {
  /** The profile this catalog shows, when it is one profile's view (not the whole registry). */
  readonly profile?: Profile;
  /** Every server the reader may see, in config order. */
  servers(): readonly ServerState[];
  server(name: string): ServerState | undefined;
}

/** Where views come from: the registry's servers and its change events. */
interface ViewSource extends CatalogSource {
  onChange(listener: (server: string) => void): () => void;
  /** An upstream said a resource a client subscribed to changed. */
  onResourceUpdated?(listener: (server: string, uri: string) => void): () => void;
}

/** The aggregated lists of one view, built on first use. */
interface Lists {
  prompts?: CatalogList<PromptEntry> & { byName: Map<string, PromptEntry> };
  resources?: CatalogList<ResourceEntry> & { byUri: Map<string, ResourceEntry> };
  templates?: CatalogList<TemplateEntry>;
}

/**
 * One profile's catalog: only its servers, each with only its visible tools and prompts, and
 * the aggregated prompt, resource and template lists clients page through. States are read
 * from the registry on every call, so status is always current; filtered tool and prompt lists
 * are cached per upstream list (a refresh replaces the list, and so the cache entry), the
 * aggregated lists per view (a change builds new views).
 */
export class CatalogView implements CatalogSource {
  private readonly filtered = new WeakMap<readonly ToolDef[], ToolDef[]>();
  private readonly filteredPrompts = new WeakMap<readonly PromptDef[], PromptDef[]>();
  /** Per report: the lists it was made from, what this view shows of them, its findings. */
  private readonly trustedCache = new WeakMap<
    TrustReport,
    {
      from: Pick<ServerState, "tools" | "prompts">;
      shown: Pick<ServerState, "tools" | "prompts">;
      trust?: TrustReport;
    }
  >();
  private readonly all: boolean;
  private index: ToolIndex | undefined;
  private readonly lists: Lists = {};

  constructor(
    readonly profile: Profile,
    private readonly source: CatalogSource,
    /** Told about each list entry dropped for a clash (a name or URI an earlier server holds). */
    private readonly onClash: (message: string) => void = () => {},
  ) {
    this.all = unrestricted(profile);
  }

  /** The prompts this view shows, as `server__prompt`, with the name → (server, prompt) map. */
  prompts(): CatalogList<PromptEntry> {
    return this.promptLists();
  }

  /** The visible prompt listed as `name` (a `server__prompt` name), if any. */
  prompt(name: string): PromptEntry | undefined {
    return this.promptLists().byName.get(name);
  }

  /** The resources this view lists natively: a URI two servers list is the first one's. */
  resources(): CatalogList<ResourceEntry> {
    return this.resourceLists();
  }

  templates(): CatalogList<TemplateEntry> {
    if (!this.lists.templates) {
      this.lists.templates = templateList(this.servers());
      this.lists.templates.clashes.forEach((c) => this.onClash(c));
    }
    return this.lists.templates;
  }

  /**
   * The server a URI belongs to: the one whose entry the native list shows, else the first
   * whose template matches it.
   */
  resourceOwner(uri: string): ServerState | undefined {
    const listed = this.resourceLists().byUri.get(uri);
    if (listed) return this.server(listed.server);
    return this.servers().find((s) =>
      s.resourceTemplates.some((t) => matchesUriTemplate(t.uriTemplate, uri)),
    );
  }

  /**
   * Where a URI a client sent is read: its owner and the URI as that server knows it. A
   * `ui://<server>/<rest>` (MCP Apps, see apps.ts) is `ui://<rest>` of that server of the view,
   * listed or not (a tool's UI need not be in resources/list).
   */
  resourceTarget(uri: string): { server: ServerState; uri: string } | undefined {
    const app = splitAppUri(uri);
    const appServer = app && this.server(app.server);
    if (app && appServer) return { server: appServer, uri: app.uri };
    const owner = this.resourceOwner(uri);
    return owner && { server: owner, uri };
  }

  /** The server whose template list holds `uriTemplate` exactly (the first, as listed). */
  templateOwner(uriTemplate: string): ServerState | undefined {
    const entry = this.templates().entries.find((e) => e.template.uriTemplate === uriTemplate);
    return entry && this.server(entry.server);
  }

  private promptLists() {
    if (!this.lists.prompts) {
      const list = promptList(this.servers(), () => true);
      list.clashes.forEach((c) => this.onClash(c));
      this.lists.prompts = { ...list, byName: new Map(list.entries.map((e) => [e.name, e])) };
    }
    return this.lists.prompts;
  }

  private resourceLists() {
    if (!this.lists.resources) {
      const list = resourceList(this.servers());
      list.clashes.forEach((c) => this.onClash(c));
      this.lists.resources = {
        ...list,
        byUri: new Map(list.entries.map((e) => [appUri(e.server, e.resource.uri), e])),
      };
    }
    return this.lists.resources;
  }

  servers(): readonly ServerState[] {
    return this.source
      .servers()
      .filter((s) => serverVisible(this.profile, s.name))
      .map((s) => this.narrow(s));
  }

  server(name: string): ServerState | undefined {
    const state = this.source.server(name);
    return state && serverVisible(this.profile, name) ? this.narrow(state) : undefined;
  }

  /** Ranked search over this view's tools only (built on first use). */
  search(query: string, limit?: number): SearchHit[] {
    this.index ??= new ToolIndex(
      this.servers().filter((s) => s.status === "ready" || s.catalogFrom === "cache"),
    );
    return this.index.search(query, limit);
  }

  private narrow(state: ServerState): ServerState {
    const pinned = this.trusted(state);
    if (this.all) return pinned;
    return this.restrict(pinned);
  }

  /**
   * `state` as this profile's trust mode shows it: under `hold` (the server's mode, or the
   * profile's when stricter) flagged tools and prompts are out; findings on definitions the
   * profile may not see are dropped, so a hidden tool stays unmentioned.
   */
  private trusted(state: ServerState): ServerState {
    const report = state.trust;
    if (!report) return state;
    let seen = this.trustedCache.get(report);
    if (seen?.from.tools !== state.tools || seen.from.prompts !== state.prompts) {
      const held = stricter(state.config.trust ?? "warn", this.profile.trust) === "hold";
      const findings = report.findings.filter((f) => this.findingVisible(state, f));
      seen = {
        from: { tools: state.tools, prompts: state.prompts },
        shown: held ? heldOut(state, findings) : { tools: state.tools, prompts: state.prompts },
        ...(findings.length > 0 && { trust: { ...report, findings, held } }),
      };
      this.trustedCache.set(report, seen);
    }
    // A fresh object each time: status and health are read live from the registry's state.
    const { trust: _old, ...rest } = state;
    return { ...rest, ...seen.shown, ...(seen.trust && { trust: seen.trust }) };
  }

  private findingVisible(state: ServerState, f: TrustFinding): boolean {
    if (this.all) return true;
    if (f.kind === "prompt") return promptVisible(this.profile, state.name, f.name);
    const def = f.def as ToolDef | undefined;
    // A removed tool: whether the profile could see it is judged by name only.
    return toolVisible(this.profile, state.name, def ?? { name: f.name, inputSchema: {} });
  }

  private restrict(state: ServerState): ServerState {
    let tools = this.filtered.get(state.tools);
    if (!tools) {
      tools = state.tools.filter((t) => toolVisible(this.profile, state.name, t));
      this.filtered.set(state.tools, tools);
    }
    let prompts = this.filteredPrompts.get(state.prompts);
    if (!prompts) {
      prompts = state.prompts.filter((p) => promptVisible(this.profile, state.name, p.name));
      this.filteredPrompts.set(state.prompts, prompts);
    }
    if (tools.length === state.tools.length && prompts.length === state.prompts.length)
      return state;
    return { ...state, tools, prompts };
  }
}

/** `state`'s tools and prompts without the flagged (held) ones. */
function heldOut(
  state: ServerState,
  findings: readonly TrustFinding[],
): Pick<ServerState, "tools" | "prompts"> {
  const held = { tool: new Set<string>(), prompt: new Set<string>() };
  for (const f of findings) if (flagged(f)) held[f.kind].add(f.name);
  return {
    tools: held.tool.size ? state.tools.filter((t) => !held.tool.has(t.name)) : state.tools,
    prompts: held.prompt.size
      ? state.prompts.filter((p) => !held.prompt.has(p.name))
      : state.prompts,
  };
}

/**
 * Views per profile, and the access config (profiles, callers) they are built from. The config
 * is swapped as one object, so a request sees either the old or the new profiles, never a mix.
 */
export class CatalogViews {
  private access: AccessConfig;
  private readonly views = new Map<string, CatalogView>();
  private readonly listeners = new Set<() => void>();
  /** Clashes already logged: each is said once, not once per view rebuilt. */
  private readonly clashes = new Set<string>();
  private readonly callerListeners = new Set<(caller: string) => void>();

  constructor(
    private readonly source: ViewSource,
    access: AccessConfig,
    private readonly options: { onClash?: (message: string) => void } = {},
  ) {
    this.access = access;
    source.onChange(() => this.invalidate());
  }

  /**
   * Called with (server, uri) when an upstream says a subscribed resource changed. Who is told
   * is the listener's choice: only clients whose view holds that server.
   */
  onResourceUpdated(listener: (server: string, uri: string) => void): () => void {
    return this.source.onResourceUpdated?.(listener) ?? (() => {});
  }

  /** Replace profiles and callers at once (config reload). */
  configure(access: AccessConfig): void {
    this.access = access;
    this.invalidate();
  }

  profileFor(caller: string): Profile {
    return profileFor(this.access, caller);
  }

  /** The view of `caller`'s profile (a request of `caller` is being answered). */
  forCaller(caller: string): CatalogView {
    for (const l of this.callerListeners) l(caller);
    const profile = this.profileFor(caller);
    let view = this.views.get(profile.name);
    if (view?.profile !== profile) {
      view = new CatalogView(profile, this.source, (message) => this.clash(message));
      this.views.set(profile.name, view);
    }
    return view;
  }

  /** Called after anything a view shows may have changed: the catalog, a status, the config. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private clash(message: string): void {
    if (this.clashes.has(message)) return;
    this.clashes.add(message);
    this.options.onClash?.(message);
  }

  /** Called with the caller of every request a view is made for (who is connected, for dashboards). */
  onCaller(listener: (caller: string) => void): () => void {
    this.callerListeners.add(listener);
    return () => this.callerListeners.delete(listener);
  }

  private invalidate(): void {
    this.views.clear();
    for (const l of this.listeners) l();
  }
}
