/**
 * The `isolated` policy's slots: every call gets a session no other call used, taken from the
 * spares when one is there, and the pool holds at most `maxSessions` sessions at once (calls,
 * sessions lent to inspect(), spares). Used sessions close after the call's answer went out.
 */
import type { UpstreamSession } from "../upstream/types.js";
import type { AcquireOptions, Lease } from "./lease.js";
import type { Leases } from "./leases.js";
import type { WaitQueue } from "./queue.js";
import type { SpareSessions, TakenSpare } from "./spares.js";

/**
 * How long inspect() may wait for a slot of an isolated pool whose every session is busy
 * (default: not at all; it fails with UPSTREAM_BUSY, which a health check reads as busy).
 */
export interface InspectWait {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface IsolatedSlotsOptions {
  maxSessions: number;
  queue: WaitQueue;
  spares: SpareSessions;
  leases: Leases;
  /**
   * Close a used session off the caller's path, already counted as closing here; the pool calls
   * `closedOne()` once its process is gone.
   */
  dispose: (session: UpstreamSession) => void;
}

export class IsolatedSlots {
  /** Sessions lent to inspect() (a health check, a listing). */
  private borrowed = 0;
  /** Sessions being closed: their processes still run; no spare is opened for them. */
  private closing = 0;

  constructor(private readonly options: IsolatedSlotsOptions) {}

  /**
   * What the pool holds now: sessions lent to calls or to inspect(), and spares (ready or
   * starting); never more than `maxSessions`. Sessions still closing are not counted for a
   * waiting call (it never waits for an upstream to exit), but a spare waits for them: past a
   * burst the processes alive are at most `maxSessions`.
   */
  private get held(): number {
    return this.options.leases.calls + this.borrowed + this.options.spares.size;
  }

  /** Sessions a spare may still be opened in now. */
  room(): number {
    return this.options.maxSessions - this.held - this.closing;
  }

  /** A session started closing (its process still counts against `maxSessions`). */
  closingOne(): void {
    this.closing += 1;
  }

  /** A session finished closing: its slot goes to a waiting call, else to a spare. */
  closedOne(): void {
    this.closing -= 1;
    this.options.queue.wake();
    this.options.spares.soon();
  }

  /**
   * A slot for one more session, taken synchronously with its spare if there is one (a waiting
   * call is let in only when a spare is there or the pool has room). `demand`: a call (it feeds
   * the spares' arrival rate), not a health check or a listing.
   */
  private claim(demand: boolean): { spare: TakenSpare | undefined } | undefined {
    const { spares, maxSessions } = this.options;
    if (spares.size === 0 && this.held >= maxSessions) return undefined;
    return { spare: spares.shift(demand) };
  }

  /** Lend a fresh session to one call, waiting in line for a slot within its timeout. */
  async acquire(options: AcquireOptions): Promise<Lease> {
    const { queue, spares, leases } = this.options;
    let claimed: { spare: TakenSpare | undefined } | undefined;
    await queue.wait(options, () => {
      claimed = this.claim(true);
      if (claimed) leases.calls += 1;
      return claimed !== undefined;
    });
    // The taken spare is replaced as soon as no call runs (its spawn would hold this call's
    // answer), or while this call still runs if it is long: see SpareSessions.soon().
    spares.soon();
    let session: UpstreamSession;
    try {
      session = await spares.settle(claimed?.spare);
    } catch (err) {
      leases.calls -= 1;
      queue.wake();
      spares.soon();
      throw err;
    }
    return leases.lend(session, () => {
      // After the result went out: the caller never waits for an upstream to exit. Its slot
      // goes to a waiting call now; a spare takes it once the process is gone (closedOne).
      this.closing += 1;
      setImmediate(() => this.options.dispose(session));
      queue.wake();
      spares.released();
    });
  }

  /** A session for inspect(), within `maxSessions`; see InspectWait. */
  async borrow(wait: InspectWait): Promise<UpstreamSession> {
    const { queue, spares, maxSessions } = this.options;
    let claimed: { spare: TakenSpare | undefined } | undefined;
    await queue.wait(
      {
        timeoutMs: wait.timeoutMs ?? 0,
        ...(wait.signal && { signal: wait.signal }),
        busy: () =>
          `every one of its ${maxSessions} sessions is running a call (maxSessions ${maxSessions})`,
      },
      () => {
        // A health check or listing is not a call: it takes a ready spare without counting as
        // demand, else a slot to open one.
        claimed = this.claim(false);
        if (claimed) this.borrowed += 1;
        return claimed !== undefined;
      },
    );
    try {
      return await spares.settle(claimed?.spare);
    } catch (err) {
      this.returned();
      throw err;
    }
  }

  /** A session lent to inspect() came back (kept as a spare or closed): its slot is free. */
  returned(): void {
    this.borrowed -= 1;
    this.options.queue.wake();
  }
}
