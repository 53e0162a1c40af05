/**
 * The catalog as one profile sees it. Views are derived from the registry's per-server caches
 * (identical specs are still discovered once) and cached per profile until the registry or the
 * access config changes.
 */
import type { Profile } from "../config/load.js";
import type { ToolDef } from "../types.js";
import {
  profileFor,
  serverVisible,
  toolVisible,
  unrestricted,
  type AccessConfig,
} from "./profiles.js";
import type { ServerState } from "./registry.js";
import { ToolIndex, type SearchHit } from "./search.js";

/** What the meta-tools and the executor read: the registry itself, or a profile's view of it. */
export interface CatalogSource {
  /** Every server the reader may see, in config order. */
  servers(): readonly ServerState[];
  server(name: string): ServerState | undefined;
}

/** Where views come from: the registry's servers and its change events. */
interface ViewSource extends CatalogSource {
  onChange(listener: (server: string) => void): () => void;
}

/**
 * One profile's catalog: only its servers, each with only its visible tools. States are read
 * from the registry on every call, so status is always current; filtered tool lists are cached
 * per upstream list (a refresh replaces the list, and so the cache entry).
 */
export class CatalogView implements CatalogSource {
  private readonly filtered = new WeakMap<readonly ToolDef[], ToolDef[]>();
  private readonly all: boolean;
  private index: ToolIndex | undefined;

  constructor(
    readonly profile: Profile,
    private readonly source: CatalogSource,
  ) {
    this.all = unrestricted(profile);
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
    this.index ??= new ToolIndex(this.servers().filter((s) => s.status === "ready"));
    return this.index.search(query, limit);
  }

  private narrow(state: ServerState): ServerState {
    if (this.all) return state;
    let tools = this.filtered.get(state.tools);
    if (!tools) {
      tools = state.tools.filter((t) => toolVisible(this.profile, state.name, t));
      this.filtered.set(state.tools, tools);
    }
    return tools.length === state.tools.length ? state : { ...state, tools };
  }
}

/**
 * Views per profile, and the access config (profiles, callers) they are built from. The config
 * is swapped as one object, so a request sees either the old or the new profiles, never a mix.
 */
export class CatalogViews {
  private access: AccessConfig;
  private readonly views = new Map<string, CatalogView>();
  private readonly listeners = new Set<() => void>();
  private readonly callerListeners = new Set<(caller: string) => void>();

  constructor(
    private readonly source: ViewSource,
    access: AccessConfig,
  ) {
    this.access = access;
    source.onChange(() => this.invalidate());
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
      view = new CatalogView(profile, this.source);
      this.views.set(profile.name, view);
    }
    return view;
  }

  /** Called after anything a view shows may have changed: the catalog, a status, the config. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
