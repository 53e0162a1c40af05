/**
 * The catalog state: what is known of each server by name (status, health, catalog), how
 * discovery, list refreshes and health checks land on it, and the listeners told when a
 * server's part changes. The registry decides what to fetch and when; this says what it means.
 */
import type { ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { ListKind } from "../upstream/types.js";
import type { CachedCatalog } from "./catalog-cache.js";
import { applyList, type ListUpdate } from "./discovery.js";
import { lookedAt, type ToolNeeds } from "./capability-tools.js";
import { afterDiscovery, logNotes, withNote, type OptionalMethod } from "./notes.js";
import { launchKey } from "./catalog-cache.js";
import type { TrustPins } from "./trust.js";
import type { Catalog, ServerHealth, ServerState, ServerStatus } from "./types.js";

type ChangeListener = (server: string) => void;

/** Every server's state by name, in config order. */
export class ServerStates extends Map<string, ServerState> {
  private readonly listeners = new Set<ChangeListener>();
  /** server name → its discovery under way (settles, never rejects). */
  private readonly pending = new Map<string, Promise<void>>();
  /** Settles once the discoveries began (`holdUntilStart`); unset: they began, or none is due. */
  private begun: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number,
    /** Pins each catalog is checked against as it lands; none: no pins kept. */
    private readonly trust?: TrustPins,
  ) {
    super();
  }

  /** The pin file of `key` changed (an approval): check its servers again, announce changes. */
  repin(key: string): void {
    if (!this.trust) return;
    this.trust.reload(key);
    for (const state of this.values()) {
      if (state.catalogFrom === undefined || launchKey(state.config) !== key) continue;
      if (this.trust.check(state)) this.emit(state.name);
    }
  }

  /** A new server: "starting", unless it is lazy and the cache has its catalog (`cached`). */
  add(server: ServerConfig, cached: CachedCatalog | undefined): void {
    const lazy = server.start === "lazy";
    const { look, ...catalog } = cached ?? {};
    // Which tools need a client capability, as looked on these same tools: known from the start.
    const needs =
      cached && look?.of === lookedAt(cached.identity, cached.tools) ? look.needs : undefined;
    this.set(server.name, {
      name: server.name,
      config: server,
      // A lazy server with a catalog is ready: its first use starts it.
      status: lazy && cached ? "ready" : "starting",
      health: { consecutiveFailures: 0 },
      tools: [],
      resources: [],
      resourceTemplates: [],
      prompts: [],
      ...catalog,
      ...(cached && { catalogFrom: "cache" as const }),
      ...(needs && Object.keys(needs).length > 0 && { needs }),
      ...(lazy && { running: false }),
    });
    const state = this.get(server.name);
    if (cached && state) this.trust?.check(state);
  }

  /** Called with a server's name whenever its part of the catalog or its status changes. */
  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(name: string): void {
    for (const l of this.listeners) {
      try {
        l(name);
      } catch (err) {
        this.log.error(`change listener failed: ${errorMessage(err)}`);
      }
    }
  }

  /** Track the discovery of `name` (`running` never rejects) until it settles. */
  discovering(name: string, running: Promise<void>): Promise<void> {
    const tracked = running.finally(() => {
      if (this.pending.get(name) === tracked) this.pending.delete(name);
    });
    this.pending.set(name, tracked);
    return tracked;
  }

  isDiscovering(name: string): boolean {
    return this.pending.has(name);
  }

  /**
   * Resolves once `name` is no longer starting (ready or down), at once when it is not starting;
   * rejects only when `signal` aborts first.
   */
  async started(name: string, signal?: AbortSignal): Promise<void> {
    // Before the discoveries began, a server still starting has none under way yet: wait for it.
    if (this.begun && this.get(name)?.status === "starting")
      await until(this.begun.promise, signal);
    const pending = this.pending.get(name);
    if (pending) await until(pending, signal);
  }

  /**
   * The discoveries will begin later (`began`): until then, `started` waits for them rather than
   * finding none under way (a stdio client's first call can arrive before the upstreams start,
   * which waits for its initialize to be answered).
   */
  holdUntilStart(): void {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.begun = { promise, resolve };
  }

  /** Every discovery due at start is under way. */
  began(): void {
    this.begun?.resolve();
    this.begun = undefined;
  }

  /**
   * Whether a first look at `name` (tools/list, describe) should wait for it: it is starting
   * and has no catalog yet, live or cached. A server answered from a cached catalog is not.
   */
  awaitsFirstCatalog(name: string): boolean {
    const state = this.get(name);
    return state?.status === "starting" && state.catalogFrom === undefined;
  }

  /**
   * Wait until none of `names` awaits its first catalog, for at most `boundMs`, or until
   * `signal` aborts. Never rejects.
   */
  async firstLook(
    names: readonly string[],
    boundMs: number,
    clock: Clock | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    const waiting = () => names.some((n) => this.awaitsFirstCatalog(n));
    if (boundMs <= 0 || signal?.aborted || !waiting()) return;
    await new Promise<void>((resolve) => {
      let timer: unknown;
      const done = () => {
        off();
        signal?.removeEventListener("abort", done);
        if (clock) clock.clearTimeout(timer);
        else clearTimeout(timer as NodeJS.Timeout);
        resolve();
      };
      // Discovery (and a cached catalog) announce themselves through onChange.
      const off = this.onChange(() => {
        if (!waiting()) done();
      });
      signal?.addEventListener("abort", done, { once: true });
      if (clock) timer = clock.setTimeout(done, boundMs);
      else timer = setTimeout(done, boundMs).unref();
    });
  }

  /** A lazy group started (a session opened) or was closed. */
  setRunning(names: readonly string[], running: boolean): void {
    for (const name of names) {
      const state = this.get(name);
      if (state && state.running !== running) {
        state.running = running;
        this.emit(name);
      }
    }
  }

  /** Record a health result for every server of a group; emits a change when the status changes. */
  updateHealth(
    names: readonly string[],
    status: ServerStatus,
    patch: Partial<ServerHealth>,
    error?: string,
  ): void {
    for (const name of names) {
      const state = this.get(name);
      if (!state) continue;
      const changed = state.status !== status;
      state.status = status;
      Object.assign(state.health, patch);
      if (error !== undefined) state.error = this.log.redact(error);
      else if (status === "ready") delete state.error;
      if (changed) {
        this.log.warn(`${name}: ${status}${error ? `: ${error}` : ""}`);
        this.emit(name);
      }
    }
  }

  /** A discovery of `state` that started at `startedAt` landed: the server is ready. */
  discovered(state: ServerState, catalog: Catalog, startedAt: number): void {
    const notesBefore = state.notes;
    Object.assign(state, catalog, {
      status: "ready",
      updatedAt: this.now(),
      catalogFrom: "live",
    });
    // The lists' notes as found; relayed requests' notes (completion, subscriptions) are kept.
    const notes = afterDiscovery(notesBefore, catalog.notes);
    if (notes) state.notes = notes;
    else delete state.notes;
    delete state.error;
    this.trust?.check(state);
    state.health = { consecutiveFailures: 0, lastSuccessAt: this.now() };
    this.log.info(
      `${state.name}: ready, ${state.tools.length} tools, ${state.resources.length} resources in ${this.now() - startedAt} ms`,
    );
    logNotes(this.log, state.name, notesBefore, state.notes);
    this.emit(state.name);
  }

  /** A discovery of `state` failed: the server is down (a change only when it was not). */
  failed(state: ServerState, err: unknown): void {
    const wasDown = state.status === "down";
    state.status = "down";
    // Stored redacted: this text reaches clients (describe, tools/list) as well as logs.
    state.error = this.log.redact(errorMessage(err));
    state.health.downSince ??= this.now();
    // Failed starts and reconnects count, as failed health checks do.
    state.health.consecutiveFailures += 1;
    if (wasDown) {
      // Nothing changed for clients: no list_changed for another failed attempt.
      this.log.debug(`${state.name}: still down: ${state.error}`);
      return;
    }
    this.log.warn(`${state.name}: failed to start: ${state.error}`);
    this.emit(state.name);
  }

  /**
   * Note (or clear, `why` undefined) a relayed optional request's failure on every server of a
   * group: the server stays up; the note shows in describe, /healthz and the dashboard.
   */
  note(names: readonly string[], method: OptionalMethod, why: string | undefined): void {
    const redacted = why === undefined ? undefined : this.log.redact(why);
    for (const name of names) {
      const state = this.get(name);
      if (!state || state.notes?.[method] === redacted) continue;
      const before = state.notes;
      const next = withNote(before, method, redacted);
      if (next) state.notes = next;
      else delete state.notes;
      logNotes(this.log, name, before, state.notes);
      this.emit(name);
    }
  }

  /** What a look found each tool of a group needs (src/registry/capability-tools.ts). */
  needs(names: readonly string[], needs: ToolNeeds): void {
    for (const name of names) {
      const state = this.get(name);
      if (!state || JSON.stringify(state.needs ?? {}) === JSON.stringify(needs)) continue;
      if (Object.keys(needs).length > 0) state.needs = needs;
      else delete state.needs;
      this.emit(name);
    }
  }

  /** A list refreshed after list_changed: land it on every server of the group. */
  listed(names: readonly string[], list: ListUpdate, kind: ListKind): void {
    for (const name of names) {
      const state = this.get(name);
      if (!state) continue;
      const before = state.notes;
      const listChanged = applyList(state, list, this.now());
      const trustChanged = kind !== "resources" && this.trust?.check(state) === true;
      const changed = listChanged || trustChanged;
      logNotes(this.log, name, before, state.notes);
      if (!changed) {
        this.log.debug(`${name}: ${kind} list changed; nothing new`);
        continue;
      }
      this.log.info(`${name}: ${kind} list changed; catalog refreshed`);
      this.emit(name);
    }
  }
}

/** `promise`, or a rejection with `signal`'s reason once it aborts first. */
async function until(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  signal.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
