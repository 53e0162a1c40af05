/**
 * The `shared` session policy: one long-lived session multiplexes every call. When it ends (the
 * upstream exited, or a reset dropped it) the next call opens another, and each client that used
 * an earlier one is told once, on its next lease (`Lease.restarted`).
 */
import type { UpstreamSession } from "../upstream/types.js";
import { LOST } from "./lease.js";

/** Clients whose use of a shared session is remembered (older ones are forgotten). */
const SHARED_SEEN_KEPT = 1024;

export class SharedSession {
  private current: Promise<UpstreamSession> | undefined;
  /** Which session the shared one is (counting replacements), and why the last ended. */
  private generation = 0;
  private lost: string | undefined;
  /** The generation each client last used, so each is told of a replacement once. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly open: () => Promise<UpstreamSession>) {}

  /**
   * The shared session for a call of `client`, and, when the client used an earlier one, why
   * that one was replaced.
   */
  async acquire(client: string): Promise<{ session: UpstreamSession; restarted?: string }> {
    const session = await this.session();
    const seen = this.seen.get(client);
    this.seen.delete(client);
    this.seen.set(client, this.generation);
    if (this.seen.size > SHARED_SEEN_KEPT) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    const restarted =
      seen !== undefined && seen < this.generation ? (this.lost ?? LOST.exited) : undefined;
    return { session, ...(restarted !== undefined && { restarted }) };
  }

  /** The client left: nothing is owed to it any more. */
  forget(client: string): void {
    this.seen.delete(client);
  }

  /** The shared session, opened again when the last one ended. */
  session(): Promise<UpstreamSession> {
    const current = this.current;
    if (current) {
      return current.then((s) => {
        if (!s.closed) return s;
        if (this.current === current) this.lost = LOST.exited;
        return this.reopen(current);
      });
    }
    return this.reopen(undefined);
  }

  /**
   * Forget the shared session (the caller closes it): the next call opens another. `lost`, when
   * given, is what clients of the dropped one are told.
   */
  drop(lost?: string): Promise<UpstreamSession> | undefined {
    const current = this.current;
    this.current = undefined;
    if (current && lost !== undefined) this.lost = lost;
    return current;
  }

  private reopen(stale: Promise<UpstreamSession> | undefined): Promise<UpstreamSession> {
    // Concurrent callers that all saw the dead session share one reopen.
    if (this.current !== stale && this.current) return this.session();
    const next = this.open();
    this.current = next;
    // Sessions before this one may have held clients' state: they are told on their next call.
    next.then(
      () => {
        if (this.current === next) this.generation += 1;
      },
      () => {
        /* failed to open: the catch below forgets it */
      },
    );
    next.catch(() => {
      if (this.current === next) this.current = undefined;
    });
    return next;
  }
}
