/**
 * What ONE replica knows of 2025-era sessions, all of it optional to the others: when each was
 * last active here (idle expiry), its logging level, its last tool list, the GET stream and
 * the calls it has open here, and the sessions ended here (DELETE, idle). Bounded: past
 * `maxSessions` the longest-unseen idle session is forgotten (not ended: any replica still
 * serves it until its id expires).
 */
import type { SessionMemory } from "./context.js";

/** A session's state on this replica. */
export interface SessionState extends SessionMemory {
  /** When the session last saw a request or a stream close here (ms since epoch). */
  lastSeen: number;
  /** Its responses still open here (the GET stream, streamed POST answers). */
  open: number;
  /** When its id expires (ms since epoch). */
  exp: number;
  /** Ends the GET stream this replica holds for it. */
  endStream?: () => void;
  /** Its calls running here, by JSON-RPC request id: each ends its exchange. */
  calls: Map<string | number, () => void>;
  /** What this replica tracks of its state shared with the others (legacy-shared.ts). */
  shared?: SharedSessionBits;
}

/** A session's bookkeeping for the state replicas share through Redis (legacy-shared.ts). */
export interface SharedSessionBits {
  /** When this replica last wrote the session's last-seen time to Redis (ms since epoch). */
  touchedAt: number;
  /** Its subscriptions were read from Redis (once, on first sight here). */
  loaded?: Promise<void>;
  /** Sequence of the notifications this replica relayed for it to the replica with its stream. */
  seq: number;
  /** The last sequence heard per relaying replica (to drop repeats). */
  heard: Map<string, number>;
  /** The GET stream is held here: deliver a resources/updated another replica relayed. */
  update?: (server: string, uri: string) => void;
}

export interface SessionTableOptions {
  idleMs: number;
  maxSessions: number;
  now: () => number;
  /** A session ended (DELETE, idle, its id expired): its client is gone. */
  onEnd?: (sid: string) => void;
}

export class LegacySessionTable {
  /** Live sessions, least recently active first (re-inserted on activity). */
  private readonly live = new Map<string, SessionState>();
  /** Sessions ended here, until their ids expire. */
  private readonly ended = new Map<string, number>();

  constructor(private readonly options: SessionTableOptions) {}

  get size(): number {
    return this.live.size;
  }

  /** True when the session was ended on this replica (DELETE, idle). */
  isEnded(sid: string): boolean {
    return this.ended.has(sid);
  }

  /** The session's state here, if any; not activity (a message from another replica). */
  peek(sid: string): SessionState | undefined {
    return this.live.get(sid);
  }

  /** The session's state here, created on first sight; counts as activity. */
  state(sid: string, exp: number): SessionState {
    let state = this.live.get(sid);
    if (state) this.live.delete(sid);
    else {
      state = { lastSeen: 0, open: 0, exp, calls: new Map() };
      this.makeRoom();
    }
    state.lastSeen = this.options.now();
    this.live.set(sid, state);
    return state;
  }

  /** Count a response of the session as open until `closed` is called. */
  opened(state: SessionState): () => void {
    state.open += 1;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      state.open -= 1;
      state.lastSeen = this.options.now();
    };
  }

  /** End a session here: its stream and calls stop, and its id is refused until it expires. */
  end(sid: string, exp: number): void {
    const state = this.live.get(sid);
    this.live.delete(sid);
    this.remember(sid, exp);
    this.options.onEnd?.(sid);
    if (!state) return;
    state.subscriptions?.clear();
    state.endStream?.();
    for (const end of [...state.calls.values()]) end();
  }

  /** Live sessions here (the replica relays their resource updates). */
  entries(): IterableIterator<[string, SessionState]> {
    return this.live.entries();
  }

  /** Sessions idle here past `idleMs` with nothing open (another replica may have seen them). */
  idle(): [string, SessionState][] {
    const now = this.options.now();
    return [...this.live].filter(
      ([, state]) =>
        state.exp > now && state.open === 0 && now - state.lastSeen > this.options.idleMs,
    );
  }

  /**
   * End sessions idle past `idleMs` with nothing open (unless `endIdle` is false: the caller
   * asks the other replicas first, see idle()); drop expired records.
   */
  sweep(endIdle = true): number {
    const now = this.options.now();
    let closed = 0;
    for (const [sid, state] of this.live) {
      if (state.exp <= now) {
        this.live.delete(sid);
        state.subscriptions?.clear();
        this.options.onEnd?.(sid);
      } else if (endIdle && state.open === 0 && now - state.lastSeen > this.options.idleMs) {
        this.end(sid, state.exp);
        closed += 1;
      }
    }
    for (const [sid, exp] of this.ended) if (exp <= now) this.ended.delete(sid);
    return closed;
  }

  /** End every session's streams and calls (shutdown). */
  closeAll(): void {
    for (const [sid, state] of [...this.live]) this.end(sid, state.exp);
  }

  private remember(sid: string, exp: number): void {
    this.ended.set(sid, exp);
    // Past the bound, the session ended longest ago is forgotten (a refused id may work again).
    if (this.ended.size > this.options.maxSessions) {
      const oldest = this.ended.keys().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }

  private makeRoom(): void {
    if (this.live.size < this.options.maxSessions) return;
    for (const [sid, state] of this.live) {
      if (state.open === 0) {
        this.live.delete(sid);
        // Forgotten here: nothing could deliver its updates any more.
        state.subscriptions?.clear();
        return;
      }
    }
  }
}
