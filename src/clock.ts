/** Time as a dependency: the health monitor schedules through this, tests drive a fake one. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock; timers are unref'd so a pending check never keeps the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Wait for `work` to settle, at most `ms`: whether it did. The timer keeps the process alive,
 * so a shutdown waiting here is not cut short by an empty event loop.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(...SETTLED), late]);
  } finally {
    clearTimeout(timer);
  }
}

const SETTLED = [() => true as const, () => true as const] as const;
