/**
 * What a call waiting on an abort needs of it: an AbortSignal has it, and so has an
 * {@link IdleDeadline} without making one (an AbortSignal and its listeners cost a few µs a call).
 */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * The timeout of one upstream call that may ask its client something: it restarts whenever the
 * upstream reports progress, and it stops while a request of the upstream waits for the client
 * (a person reading an elicitation is not the upstream being slow). That wait has its own bound
 * (the same timeout, see SessionAsker); when the client has answered, the clock starts afresh.
 */
export class IdleDeadline implements AbortWatch {
  private abortedWith: { reason: unknown } | undefined;
  /** Made when somebody needs an AbortSignal (`signal`): the SDK's requests. */
  private controller: AbortController | undefined;
  private listeners: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private held = 0;
  private done = false;
  private unfollow?: () => void;

  /**
   * `timeoutReason()` is what it aborts with when `ms` pass without progress. With `parent`, it
   * also aborts when that does, with its reason (what `AbortSignal.any` would do, without the
   * combined signal and weak references it makes per call).
   */
  constructor(
    private readonly ms: number,
    private readonly timeoutReason: () => unknown,
    parent?: AbortSignal,
  ) {
    if (parent?.aborted) {
      this.abort(parent.reason);
      return;
    }
    if (parent) {
      const abort = () => {
        clearTimeout(this.timer);
        this.abort(parent.reason);
      };
      parent.addEventListener("abort", abort, { once: true });
      this.unfollow = () => parent.removeEventListener("abort", abort);
    }
    this.arm();
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** An AbortSignal that aborts with this deadline. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /**
   * `listener` runs once, when this aborts (not if it already has: read `aborted` first), as an
   * AbortSignal's listener given `{ once: true }` does.
   */
  addEventListener(_type: "abort", listener: () => void, _options?: { once?: boolean }): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i >= 0) this.listeners.splice(i, 1);
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
    if (this.done || this.aborted) return;
    this.timer = setTimeout(() => this.abort(this.timeoutReason()), this.ms);
  }

  private abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    // Each once, in order; one removed by an earlier one does not run (as on an AbortSignal).
    for (const listener of [...this.listeners]) {
      const i = this.listeners.indexOf(listener);
      if (i < 0) continue;
      this.listeners.splice(i, 1);
      listener();
    }
  }
}
