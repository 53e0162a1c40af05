/** Counting the AbortSignals this process makes: a cost on each call mcpx relays (issue 30). */

/** Counts the AbortSignals AbortControllers make (each on its first `signal`) until `restore()`. */
export function countSignals() {
  const descriptor = Object.getOwnPropertyDescriptor(AbortController.prototype, "signal")!;
  const seen = new WeakSet<AbortSignal>();
  let made = 0;
  Object.defineProperty(AbortController.prototype, "signal", {
    ...descriptor,
    get(this: AbortController) {
      const signal = descriptor.get!.call(this) as AbortSignal;
      if (!seen.has(signal)) {
        seen.add(signal);
        made++;
      }
      return signal;
    },
  });
  return {
    count: () => made,
    restore: () => Object.defineProperty(AbortController.prototype, "signal", descriptor),
  };
}
