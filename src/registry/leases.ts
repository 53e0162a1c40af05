/**
 * The leases of one pool: how many calls hold a session, how many leases each session has, and
 * the sessions reset() dropped while calls held them (closed as their last lease ends).
 */
import type { UpstreamSession } from "../upstream/types.js";
import type { Lease } from "./lease.js";

export interface LeasesOptions {
  /** Close a session off the caller's path (a detached one, once its last lease ends). */
  dispose: (session: UpstreamSession) => void;
  /** Called when the last call holding a session ends (lazy servers start their idle timer). */
  onIdle?: () => void;
}

export class Leases {
  /**
   * Calls holding a session, counted from the moment they claimed it (isolated: a slot whose
   * session may still be starting) until they release it.
   */
  calls = 0;
  /** Leases per session. */
  private readonly perSession = new Map<UpstreamSession, number>();
  /** Sessions dropped while calls held them; closed as their last lease ends. */
  private readonly detached = new Set<UpstreamSession>();
  /** Called whenever a lease ends (retire() waits on it). */
  private onEnd: (() => void) | undefined;

  constructor(private readonly options: LeasesOptions) {}

  /** Whether calls hold `session` now. */
  busy(session: UpstreamSession): boolean {
    return !session.closed && (this.perSession.get(session) ?? 0) > 0;
  }

  /** Lend `session` to one more call (counted in `calls` here). */
  take(session: UpstreamSession, onRelease: () => void, restarted?: string): Lease {
    this.calls += 1;
    return this.lend(session, onRelease, restarted);
  }

  /**
   * Lend `session` to a call already counted in `calls`. Releasing it (once; later calls are
   * ignored) uncounts the call, closes a detached session whose last lease this was, then runs
   * `onRelease`.
   */
  lend(session: UpstreamSession, onRelease: () => void, restarted?: string): Lease {
    let released = false;
    this.perSession.set(session, (this.perSession.get(session) ?? 0) + 1);
    return {
      session,
      ...(restarted !== undefined && { restarted }),
      release: () => {
        if (released) return;
        released = true;
        this.calls -= 1;
        const left = (this.perSession.get(session) ?? 1) - 1;
        if (left > 0) this.perSession.set(session, left);
        else {
          this.perSession.delete(session);
          // reset() dropped it while this call ran: it closes now that nothing uses it.
          if (this.detached.delete(session)) this.options.dispose(session);
        }
        onRelease();
        this.onEnd?.();
        if (this.calls === 0) this.options.onIdle?.();
      },
    };
  }

  /** A session reset() drops: when calls hold it, it closes as the last one ends (true). */
  detach(session: UpstreamSession): boolean {
    if (!this.busy(session)) return false;
    this.detached.add(session);
    return true;
  }

  /** A session closed: nothing is owed to it any more. */
  forget(session: UpstreamSession): void {
    this.perSession.delete(session);
    this.detached.delete(session);
  }

  /** Resolves once no call holds a session, or after `graceMs`. */
  async idle(graceMs: number): Promise<void> {
    if (this.calls === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      timer.unref();
      this.onEnd = () => {
        if (this.calls > 0) return;
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
