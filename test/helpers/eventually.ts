/**
 * The one polling helper of the tests: for state nothing announces (a process exit, a status only
 * /healthz or an upstream reports). Bounded, never a sleep standing in for an event: where there
 * is an event or a promise to await, await that instead.
 */

/** Ask `check` every `every` ms until it says yes; throws naming `what` once `ms` pass. A throw
 * from `check` ends the wait at once (a process that exited will not start answering). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = "condition",
  every = 25,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * `promise`, or a throw naming `what` once `ms` pass: for an awaited event (a progress, a
 * notification) that a lost message would otherwise leave pending until the test's own timeout,
 * which names nothing.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
