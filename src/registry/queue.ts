/**
 * The line calls wait in for a free session of a pool: in arrival order, each bounded by its
 * call's timeout and signal. A waiter's `claim` checks and takes its slot in one synchronous step,
 * so no two calls take the same one.
 */
import { ProxyError } from "../errors.js";

interface Waiter {
  /** Take this waiter's slot if it is free now; false leaves it waiting. Synchronous. */
  claim(): boolean;
  resolve(): void;
  reject(err: Error): void;
}

export class WaitQueue {
  private readonly waiters: Waiter[] = [];

  /** `maxSessions`, named in the busy error. */
  constructor(private readonly maxSessions: number) {}

  get length(): number {
    return this.waiters.length;
  }

  /**
   * Wait until `claim()` succeeds, in arrival order, bounded by `timeoutMs` and `signal`.
   * `busy` words the error of a wait that timed out (default: every session stayed busy).
   */
  wait(
    options: { timeoutMs: number; signal?: AbortSignal; busy?: (waitedMs: number) => string },
    claim: () => boolean,
  ): Promise<void> {
    if (this.waiters.length === 0 && claim()) return Promise.resolve();
    if (options.signal?.aborted) {
      return Promise.reject(new Error("cancelled while waiting for a free session"));
    }
    return new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const waiter: Waiter = {
        claim,
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (err) => {
          cleanup();
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        const waited = Date.now() - started;
        waiter.reject(
          new ProxyError(
            "UPSTREAM_BUSY",
            options.busy?.(waited) ??
              `all ${this.maxSessions} sessions stayed busy for ${waited} ms (maxSessions ${this.maxSessions})`,
          ),
        );
      }, options.timeoutMs);
      const onAbort = () => waiter.reject(new Error("cancelled while waiting for a free session"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      this.waiters.push(waiter);
    });
  }

  /** Let waiters in, in order, while their slots are free. */
  wake(): void {
    for (let first = this.waiters[0]; first?.claim(); first = this.waiters[0]) first.resolve();
  }

  /** Fail every waiter with `err` (the pool closes). */
  rejectAll(err: Error): void {
    for (const w of this.waiters.splice(0)) w.reject(err);
  }
}
