/**
 * One replica's part in the 2025-era sessions every replica shares through Redis (issue 31),
 * beside http-legacy.ts: the level a session set reaches the replica running its calls (read
 * from Redis on each POST carrying a tools/call, so no replica holds a stale one), a session is
 * ended for idleness only when no replica saw it for `idleMs`, its subscriptions follow it to
 * every replica serving it, and resource updates heard on a replica without its GET stream are
 * relayed (pub/sub, in order) to the one holding it: those of stdio servers, which each replica
 * runs for itself (a change made through one replica's process is heard there only). A remote
 * server is one server every replica subscribed to: the stream's replica hears its updates
 * itself, and a relay would deliver each twice.
 *
 * List changes are never relayed: every replica reloads the same config, and only the replica
 * holding a session's stream tells it (watchCatalog, watchClient), so a change reaches it once.
 */
import { errorMessage } from "../errors.js";
import type { SharedState } from "../shared/types.js";
import { ClientSubscriptions } from "./client-subscriptions.js";
import type { ProxyContext } from "./context.js";
import { SUBSCRIBE_KEY, type ClientSink } from "./handlers/subscriptions.js";
import type { LegacySessionTable, SessionState } from "./legacy-sessions.js";
import { LegacyShared, type RelayedUpdate } from "./legacy-shared.js";
import { isRecord } from "../json.js";

export interface SharingOptions {
  idleMs: number;
  now: () => number;
  /** End a session idle on every replica (here, and tell the others). */
  endIdle: (sid: string, exp: number) => void;
}

export class SessionSharing {
  readonly store: LegacyShared;
  private readonly unwatch: () => void;
  private sweeping = false;
  private closed = false;
  /** The caller each session's requests here resolved to (for its view). */
  private readonly callers = new WeakMap<SessionState, string>();

  constructor(
    private readonly ctx: ProxyContext,
    private readonly sessions: LegacySessionTable,
    shared: SharedState,
    private readonly options: SharingOptions,
  ) {
    this.store = new LegacyShared(shared, ctx.logger, options.idleMs, options.now);
    this.unwatch = ctx.views.onResourceUpdated((server, uri) => this.relay(server, uri));
  }

  /** This replica stops: what it ends from now on (every session here) stays shared. */
  close(): void {
    this.closed = true;
    this.unwatch();
  }

  /**
   * A request of the session reached this replica: note it seen (throttled), and on first
   * sight take the subscriptions it made through other replicas.
   */
  async seen(sid: string, state: SessionState, caller: string): Promise<void> {
    this.store.touch(sid, state);
    this.callers.set(state, caller);
    state.onSubscription ??= (uri, on) => this.subscribed(sid, state, uri, on);
    const bits = this.store.bits(state);
    // The upstream subscriptions are taken after: a request does not wait for an upstream.
    bits.loaded ??= this.store.subscriptions(sid).then((uris) => {
      for (const uri of uris) void this.adopt(state, uri);
    });
    await bits.loaded;
  }

  /** Before a POST is served: keep a setLevel in Redis; take the session's level for a call. */
  async beforePost(sid: string, state: SessionState, messages: unknown[]): Promise<void> {
    let call = false;
    for (const m of messages) {
      if (!isRecord(m)) continue;
      if (m.method === "tools/call") call = true;
      if (m.method === "logging/setLevel" && isRecord(m.params)) {
        const level = m.params.level;
        if (typeof level === "string") await this.store.setLevel(sid, level, state.exp);
      }
    }
    if (!call) return;
    const level = await this.store.level(sid);
    if (level !== undefined) state.level = level;
  }

  /** Another replica's message about a session here (already verified). */
  heard(sid: string, message: Record<string, unknown>): void {
    const state = this.sessions.peek(sid);
    if (!state) return;
    const uri = message.uri;
    if (message.kind === "sub" && typeof uri === "string") void this.adopt(state, uri);
    if (message.kind === "unsub" && typeof uri === "string")
      state.subscriptions?.remove(SUBSCRIBE_KEY, uri);
    if (
      message.kind === "update" &&
      typeof uri === "string" &&
      typeof message.server === "string"
    ) {
      const update = message as unknown as RelayedUpdate;
      if (state.shared?.update && this.store.fresh(state, update))
        state.shared.update(update.server, uri);
    }
  }

  /** The GET stream of the session opened here: relayed updates reach it. Returns the stop. */
  streaming(state: SessionState, sink: ClientSink, callerOf: () => string): () => void {
    const bits = this.store.bits(state);
    const update = (server: string, uri: string) => {
      if (this.ctx.views.forCaller(callerOf()).resourceOwner(uri)?.name !== server) return;
      void sink
        .resourceUpdated(uri)
        .catch((err: unknown) =>
          this.ctx.logger.debug(`resources/updated not sent: ${errorMessage(err)}`),
        );
    };
    bits.update = update;
    return () => {
      if (bits.update === update) delete bits.update;
    };
  }

  /**
   * End sessions idle here only when Redis says no replica saw them either (unreachable:
   * this replica's view, as with one replica). Sessions with a response open here are seen.
   */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let closed = 0;
    try {
      this.sessions.sweep(false);
      for (const [sid, state] of this.sessions.entries())
        if (state.open > 0) this.store.touch(sid, state);
      const idle = this.sessions.idle();
      // One read per idle session, all at once.
      const seen = await Promise.all(idle.map(([sid]) => this.store.lastSeen(sid)));
      const now = this.options.now();
      for (const [i, [sid, state]] of idle.entries()) {
        const at = seen[i];
        if (at !== undefined) state.lastSeen = Math.max(state.lastSeen, at);
        if (this.sessions.peek(sid) !== state || state.open > 0) continue;
        if (now - state.lastSeen <= this.options.idleMs) continue;
        this.options.endIdle(sid, state.exp);
        closed += 1;
      }
    } finally {
      this.sweeping = false;
    }
    return closed;
  }

  /** The session ended: its shared state goes. */
  ended(sid: string): void {
    if (!this.closed) this.store.forget(sid);
  }

  /** A resources/subscribe or unsubscribe answered here: kept in Redis, told to the others. */
  private async subscribed(
    sid: string,
    state: SessionState,
    uri: string,
    on: boolean,
  ): Promise<void> {
    await this.store.subscribed(sid, uri, on, state.exp);
    await this.store.publish({ kind: on ? "sub" : "unsub", sid, uri });
  }

  /** Hold a subscription the session made on another replica (upstream too, here). */
  private async adopt(state: SessionState, uri: string): Promise<void> {
    const caller = this.callers.get(state);
    if (caller === undefined) return;
    state.subscriptions ??= new ClientSubscriptions(this.ctx);
    await state.subscriptions
      .add(SUBSCRIBE_KEY, uri, this.ctx.views.forCaller(caller))
      .catch((err: unknown) =>
        this.ctx.logger.debug(`not holding a subscription to ${uri}: ${errorMessage(err)}`),
      );
  }

  /** An upstream's update heard here: relayed for sessions whose stream is elsewhere. */
  private relay(server: string, uri: string): void {
    if (this.ctx.config.servers.find((s) => s.name === server)?.spec.transport !== "stdio") return;
    for (const [sid, state] of this.sessions.entries()) {
      if (state.endStream || !state.subscriptions?.wants(server, uri)) continue;
      void this.store.publish({ ...this.store.update(sid, state, server, uri) });
    }
  }
}
