import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ClientFactory, UpstreamSession } from "./connection.js";

/** A session lent to one call. `release` gives it back; an isolated session is then closed. */
export interface Lease {
  readonly session: UpstreamSession;
  release(): void;
}

export interface SessionPoolOptions {
  logger: Logger;
  /** Initialized spare sessions kept ready, so a call does not pay spawn + initialize. */
  prewarm?: number;
}

/**
 * Isolated sessions for one upstream: every lease is a session no other call has used. Spares
 * are opened ahead of time; a used session is closed after release, off the response path.
 * The pool tracks every session it opened, so close() leaves no process behind.
 */
export class SessionPool {
  private readonly open = new Set<UpstreamSession>();
  private readonly spares: Promise<UpstreamSession>[] = [];
  private closed = false;
  private readonly prewarm: number;

  constructor(
    private readonly factory: ClientFactory,
    private readonly options: SessionPoolOptions,
  ) {
    this.prewarm = options.prewarm ?? 0;
    this.refill();
  }

  /** Number of live sessions (spares and leased). */
  get size(): number {
    return this.open.size;
  }

  async acquire(): Promise<Lease> {
    if (this.closed) throw new Error("the session pool is closed");
    let session: UpstreamSession | undefined;
    while (!session) {
      const spare = this.spares.shift();
      this.refill();
      if (!spare) {
        session = await this.openSession();
        break;
      }
      // A spare that failed to open or died while waiting is skipped, not handed out.
      const ready = await spare.catch(() => undefined);
      if (ready && !ready.closed) session = ready;
    }
    let released = false;
    return {
      session,
      release: () => {
        if (released) return;
        released = true;
        // After the result went out: the caller never waits for an upstream to exit.
        setImmediate(() => void this.dispose(session));
      },
    };
  }

  /** Close every session this pool opened, leased or spare. */
  async close(): Promise<void> {
    this.closed = true;
    const spares = this.spares.splice(0);
    const opened = await Promise.allSettled(spares);
    for (const r of opened) if (r.status === "fulfilled") this.open.add(r.value);
    await Promise.allSettled([...this.open].map((s) => this.dispose(s)));
  }

  private refill(): void {
    while (!this.closed && this.spares.length < this.prewarm) {
      const p = this.openSession();
      // A failing spare is reported when a call takes it; here it must not be unhandled.
      p.catch((err: unknown) =>
        this.options.logger.debug(`spare session failed: ${errorMessage(err)}`),
      );
      this.spares.push(p);
    }
  }

  private async openSession(): Promise<UpstreamSession> {
    const session = await this.factory();
    if (this.closed) {
      await session.close();
      throw new Error("the session pool is closed");
    }
    this.open.add(session);
    session.onClosed(() => this.open.delete(session));
    return session;
  }

  private async dispose(session: UpstreamSession): Promise<void> {
    try {
      await session.close();
    } catch (err) {
      this.options.logger.debug(`closing a session failed: ${errorMessage(err)}`);
    } finally {
      this.open.delete(session);
    }
  }
}
