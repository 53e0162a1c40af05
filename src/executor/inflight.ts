/**
 * The calls and reads under way, each with the controller that cancels it, and the drain that
 * ends them at shutdown: stop taking new ones, give those running a grace period, cancel the rest.
 */
import { settledWithin } from "../clock.js";
import type { Logger } from "../logger.js";
import { SHUTTING_DOWN } from "./failures.js";

export class InFlight {
  /** Each piece of work under way → how to cancel it. */
  private readonly running = new Map<Promise<unknown>, (reason: unknown) => void>();
  private open = true;

  constructor(private readonly log: Logger) {}

  /** False once drain() began: new work is refused. */
  get accepting(): boolean {
    return this.open;
  }

  /**
   * Run `work` with a signal that `signal` (the client's) and drain() can both abort. When
   * `owner` is `signal`'s controller, that is `signal` itself.
   */
  async track<T>(
    signal: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
    owner?: AbortController,
  ): Promise<T> {
    if (signal && owner?.signal === signal) {
      return this.tracked(work(signal), (reason) => owner.abort(reason));
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) controller.abort(signal.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      return await this.tracked(work(controller.signal), (reason) => controller.abort(reason));
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private async tracked<T>(running: Promise<T>, cancel: (reason: unknown) => void): Promise<T> {
    this.running.set(running, cancel);
    try {
      return await running;
    } finally {
      this.running.delete(running);
    }
  }

  /**
   * Stop taking work, give what is under way `graceMs` to finish, then cancel the rest. Resolves
   * once everything has answered (cancelled work answers at once).
   */
  async drain(graceMs: number): Promise<void> {
    this.open = false;
    const pending = [...this.running.keys()];
    if (pending.length === 0) return;
    this.log.info(`waiting up to ${graceMs} ms for ${pending.length} call(s) to finish`);
    await settledWithin(Promise.allSettled(pending), graceMs);
    if (this.running.size > 0) {
      this.log.warn(`cancelling ${this.running.size} call(s) still running after ${graceMs} ms`);
      for (const cancel of this.running.values()) cancel(new Error(SHUTTING_DOWN));
      await Promise.allSettled([...this.running.keys()]);
    }
  }
}
