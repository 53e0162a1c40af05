/**
 * `start: "lazy"` servers: not started until a request needs one (its pool opens a session on
 * the first call, read or prompt), and closed again after `idleTimeout` without a call. Their
 * catalog comes from the persistent cache, or from one discovery after which they are closed.
 */
import { errorMessage } from "../errors.js";
import { systemClock, type Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { SessionPool } from "./pool.js";

export interface LazyOptions {
  clock?: Clock;
  logger: Logger;
  /** The pool of a group (undefined once a reload removed it). */
  pool: (print: string) => SessionPool | undefined;
  /** A group started (a session opened) or was closed. */
  onRunning: (print: string, running: boolean) => void;
}

/** The lazy groups' running flags and idle timers. */
export class LazyServers {
  private readonly clock: Clock;
  private readonly timers = new Map<string, unknown>();
  private readonly live = new Set<string>();
  private closed = false;

  constructor(private readonly options: LazyOptions) {
    this.clock = options.clock ?? systemClock;
  }

  running(print: string): boolean {
    return this.live.has(print);
  }

  /** A session of the group opened: it runs. */
  opened(print: string): void {
    if (this.closed || this.live.has(print)) return;
    this.live.add(print);
    this.options.onRunning(print, true);
  }

  /** The group's last call ended: close it after `idleMs` unless another call comes. */
  idle(print: string, idleMs: number): void {
    if (this.closed) return;
    this.clock.clearTimeout(this.timers.get(print));
    this.timers.set(
      print,
      this.clock.setTimeout(() => {
        this.timers.delete(print);
        const stats = this.options.pool(print)?.stats();
        // A call running or waiting now re-arms the timer when it ends.
        if (stats && stats.leased + stats.waiting === 0) this.sleep(print);
      }, idleMs),
    );
  }

  /** Close every session of the group now (it starts again on the next use). */
  sleep(print: string): void {
    this.clock.clearTimeout(this.timers.get(print));
    this.timers.delete(print);
    const pool = this.options.pool(print);
    if (!pool || this.closed) return;
    void pool
      .reset({ keepEra: true })
      .catch((err: unknown) =>
        this.options.logger.debug(`closing an idle lazy server failed: ${errorMessage(err)}`),
      )
      .then(() => {
        if (this.closed || pool.stats().open > 0) return;
        if (this.live.delete(print)) this.options.onRunning(print, false);
      });
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) this.clock.clearTimeout(timer);
    this.timers.clear();
  }
}
