/**
 * The timeout of one upstream call that may ask its client something: it restarts whenever the
 * upstream reports progress, and it stops while a request of the upstream waits for the client
 * (a person reading an elicitation is not the upstream being slow). That wait has its own bound
 * (the same timeout, see SessionAsker); when the client has answered, the clock starts afresh.
 */
export class IdleDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private held = 0;
  private done = false;
  private unfollow?: () => void;

  /**
   * `reason()` is what the signal aborts with when `ms` pass without progress. With `parent`,
   * the signal also aborts when it does, with its reason (what `AbortSignal.any` would do,
   * without the combined signal and weak references it makes per call).
   */
  constructor(
    private readonly ms: number,
    private readonly reason: () => unknown,
    parent?: AbortSignal,
  ) {
    if (parent?.aborted) {
      this.controller.abort(parent.reason);
      return;
    }
    if (parent) {
      const abort = () => {
        clearTimeout(this.timer);
        this.controller.abort(parent.reason);
      };
      parent.addEventListener("abort", abort, { once: true });
      this.unfollow = () => parent.removeEventListener("abort", abort);
    }
    this.arm();
  }

  /** Aborts when the deadline passes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The upstream made progress: the full timeout starts again (unless the clock is held). */
  touch(): void {
    if (this.held === 0) this.arm();
  }

  /** Stop the clock while `pending` runs; it restarts from zero once nothing holds it. */
  readonly hold = async <T>(pending: Promise<T>): Promise<T> => {
    this.held += 1;
    clearTimeout(this.timer);
    try {
      return await pending;
    } finally {
      this.held -= 1;
      if (this.held === 0) this.arm();
    }
  };

  /** The call ended: no more timer. */
  dispose(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.unfollow?.();
    this.unfollow = undefined;
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.done || this.controller.signal.aborted) return;
    this.timer = setTimeout(() => this.controller.abort(this.reason()), this.ms);
  }
}
