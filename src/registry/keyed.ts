/**
 * Long-lived sessions held per key, for the `caller` policy (one per caller) and the `client`
 * policy (one per downstream client). A key's session opens on its first call, closes after
 * `idleTimeoutMs` without calls (or when its client leaves), and is never lent to another key.
 * When a key's session ends for any other reason (crash, health reset, idle close, eviction)
 * and a new one replaces it, the key's next lease says why: what it held is gone.
 */
import type { UpstreamSession } from "../upstream/types.js";
import { LOST, type Lease } from "./lease.js";
import type { WaitQueue } from "./queue.js";

/** Keys whose lost session is remembered until their next call (older ones are forgotten). */
const LOST_KEPT = 1024;

/** What the keyed sessions need of their pool. */
export interface KeyedHost {
  /** Open a session for a new key (from a spare when the pool keeps them). */
  open(): Promise<UpstreamSession>;
  /** Close a session the keys no longer use, off the response path. */
  dispose(session: UpstreamSession): void;
  /** Lend `session` to one call; `onRelease` runs when the call is over. */
  lease(session: UpstreamSession, onRelease: () => void, restarted?: string): Lease;
  /** The pool's line of calls waiting for a slot. */
  readonly queue: WaitQueue;
}

export interface KeyedOptions {
  /** What a key is, in messages. */
  kind: "caller" | "client";
  maxSessions: number;
  idleTimeoutMs: number;
  /**
   * caller: a new key may close an idle key's session when every slot is taken. client: never
   * (it would drop a client's state for another's); calls wait for a client to leave or idle
   * out, then fail naming maxSessions.
   */
  evictIdle: boolean;
}

interface Entry {
  session: Promise<UpstreamSession>;
  inflight: number;
  idleTimer?: NodeJS.Timeout;
  /** Why the key's previous session ended; told on this entry's first lease. */
  notice?: string;
}

export class KeyedSessions {
  private readonly entries = new Map<string, Entry>();
  /** Keys whose session ended under them, with why, until their next call. */
  private readonly lost = new Map<string, string>();

  constructor(
    private readonly host: KeyedHost,
    private readonly options: KeyedOptions,
  ) {}

  /** Keys holding a session (open or opening). */
  get size(): number {
    return this.entries.size;
  }

  /** Lend `key`'s session, opening it on the key's first call. */
  async acquire(key: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<Lease> {
    if (!this.entries.has(key)) {
      await this.host.queue.wait(
        {
          ...options,
          busy: (waitedMs) =>
            `all ${this.options.maxSessions} ${this.options.kind} sessions stayed held by other ${this.options.kind}s for ${waitedMs} ms ` +
            `(maxSessions ${this.options.maxSessions}); one frees when its ${this.options.kind} leaves or makes no call for "idleTimeout"`,
        },
        () => {
          if (this.entries.has(key)) return true;
          if (
            this.entries.size >= this.options.maxSessions &&
            !(this.options.evictIdle && this.evictIdle())
          )
            return false;
          this.start(key);
          return true;
        },
      );
    }
    const current = this.entries.get(key);
    // The session failed to open and was dropped in between: open another.
    if (!current) return this.acquire(key, options);
    current.inflight += 1;
    clearTimeout(current.idleTimer);
    let session: UpstreamSession;
    try {
      session = await current.session;
    } catch (err) {
      current.inflight -= 1;
      throw err;
    }
    if (session.closed) {
      // The key's session died (upstream crash): start over; its state is gone, and said so.
      current.inflight -= 1;
      this.drop(key, current.session, LOST.exited);
      return this.acquire(key, options);
    }
    const restarted = current.notice;
    current.notice = undefined;
    return this.host.lease(
      session,
      () => {
        current.inflight -= 1;
        if (current.inflight === 0 && this.entries.get(key) === current) {
          current.idleTimer = setTimeout(
            () => this.drop(key, current.session, LOST.idle(this.options.idleTimeoutMs)),
            this.options.idleTimeoutMs,
          );
          current.idleTimer.unref();
          // An idle session can now be evicted for a key that is waiting for one.
          if (this.options.evictIdle) this.host.queue.wake();
        }
      },
      restarted,
    );
  }

  /** The key's client left: close its session; nothing is owed to it any more. */
  leave(key: string): void {
    this.lost.delete(key);
    const entry = this.entries.get(key);
    if (entry) this.drop(key, entry.session, undefined);
  }

  /** Drop every idle key's session after the upstream failed; their next call is told. */
  reset(): void {
    for (const [key, entry] of [...this.entries]) {
      if (entry.inflight === 0) this.drop(key, entry.session, LOST.reset);
    }
  }

  /** Forget every key; the sessions, settled or not, for the pool to close. */
  clear(): Promise<UpstreamSession>[] {
    for (const entry of this.entries.values()) clearTimeout(entry.idleTimer);
    const sessions = [...this.entries.values()].map((e) => e.session);
    this.entries.clear();
    this.lost.clear();
    return sessions;
  }

  private start(key: string): void {
    const session = this.host.open();
    const notice = this.lost.get(key);
    this.lost.delete(key);
    this.entries.set(key, { session, inflight: 0, ...(notice !== undefined && { notice }) });
    session.then(
      // A session that dies while idle frees its slot at once; the key's next call is told.
      (s) => s.onClosed(() => this.drop(key, session, LOST.exited)),
      () => this.drop(key, session, undefined),
    );
  }

  private evictIdle(): boolean {
    for (const [key, entry] of this.entries) {
      if (entry.inflight === 0) {
        this.drop(key, entry.session, LOST.evicted(this.options.maxSessions));
        return true;
      }
    }
    return false;
  }

  /**
   * Forget `key`'s session (if it is still `session`) and close it. `why` it ended is told on
   * the key's next call; undefined when nothing was lost (its client left, it never opened).
   */
  private drop(key: string, session: Promise<UpstreamSession>, why: string | undefined): void {
    const entry = this.entries.get(key);
    if (!entry || entry.session !== session) return;
    clearTimeout(entry.idleTimer);
    this.entries.delete(key);
    if (why !== undefined) this.remember(key, entry.notice ?? why);
    // A slot opened up: the next waiting key may take it.
    queueMicrotask(() => this.host.queue.wake());
    session.then(
      (s) => this.host.dispose(s),
      () => {
        /* never opened: nothing to close */
      },
    );
  }

  private remember(key: string, why: string): void {
    this.lost.delete(key);
    this.lost.set(key, why);
    if (this.lost.size > LOST_KEPT) {
      const oldest = this.lost.keys().next().value;
      if (oldest !== undefined) this.lost.delete(oldest);
    }
  }
}
