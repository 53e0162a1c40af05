/**
 * The limits every script runs under, their defaults, and the message a script past one gets.
 * Each limit is settable per profile; the integration passes the profile's values to `run()`.
 */

/** What one script may use. Every field has a default in {@link DEFAULT_LIMITS}. */
export interface SandboxLimits {
  /** Wall time from the script's start to its answer, inner calls included (ms). */
  timeMs: number;
  /** Memory of the script's QuickJS runtime: its objects, strings and bytecode (bytes). */
  memoryBytes: number;
  /**
   * QuickJS stack (bytes). Deep recursion past it throws `InternalError: stack overflow`,
   * which the script may catch; uncaught, the script stops with this limit named.
   */
  stackBytes: number;
  /** Inner calls (`servers.<server>.<tool>(args)`) one script may make. */
  calls: number;
  /** The returned value, encoded as JSON (UTF-8 bytes). */
  resultBytes: number;
  /** Everything the script logs through `console`, summed over lines (UTF-8 bytes). */
  logBytes: number;
}

/** The name of one limit: `"timeMs"`, `"memoryBytes"`, … */
export type LimitName = keyof SandboxLimits;

/**
 * Defaults, chosen so a script that filters a few tool results fits easily while a runaway
 * one is stopped before it costs the proxy anything noticeable:
 * - `timeMs` 30 s, `memoryBytes` 64 MiB, `calls` 50: the values issue 18 asks for.
 * - `stackBytes` 512 KiB: about 3,000 frames of plain recursion; the worker thread's own stack
 *   is sized (see pool.ts) so QuickJS's check, not V8's, fires first.
 * - `resultBytes` 256 KiB: about 64k tokens, already more than a model should read in one
 *   answer; a script exists to return less than the raw results.
 * - `logBytes` 64 KiB: logs are for debugging the script, not a second result channel.
 */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  timeMs: 30_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 512 * 1024,
  calls: 50,
  resultBytes: 256 * 1024,
  logBytes: 64 * 1024,
});

/**
 * What the inner calls of one script may carry to the host, host-wide (not per profile): each
 * call's arguments as JSON (mcpx passes the limit of a meta-tool's arguments, LIMITS.argumentBytes)
 * and the arguments of the calls still out, summed. Both are checked in the worker before the
 * text leaves the script's memory, and the first again on the main thread before it is parsed,
 * so a script cannot make the host hold or parse more than this per call or at once.
 */
export interface CallBytes {
  /** One inner call's arguments, as JSON (UTF-8 bytes). */
  argument: number;
  /** The arguments of all the script's calls still running, summed (UTF-8 bytes). */
  inFlight: number;
}

/** 1 MiB a call (as a meta-tool's arguments), 8 MiB at once per script. */
export const DEFAULT_CALL_BYTES: Readonly<CallBytes> = Object.freeze({
  argument: 1024 * 1024,
  inFlight: 8 * 1024 * 1024,
});

/** Lower bounds below which a limit would break the sandbox itself rather than bound a script. */
const MINIMUM: Readonly<SandboxLimits> = Object.freeze({
  timeMs: 1,
  memoryBytes: 1024 * 1024,
  stackBytes: 64 * 1024,
  calls: 0,
  resultBytes: 1,
  logBytes: 0,
});

/**
 * Upper bounds. QuickJS's stack lives in a 5 MiB region of its WebAssembly memory: a budget past
 * it would let a deep recursion write over the engine's own data before QuickJS noticed.
 */
const MAXIMUM: Partial<Readonly<SandboxLimits>> = Object.freeze({
  stackBytes: 4 * 1024 * 1024,
});

const WHAT: Record<LimitName, (value: number) => string> = {
  timeMs: (v) => `ran longer than its wall-time limit of ${v} ms`,
  memoryBytes: (v) => `ran out of memory: its limit is ${formatBytes(v)}`,
  stackBytes: (v) => `overflowed its stack: its limit is ${formatBytes(v)}`,
  calls: (v) => `made more than ${v} inner calls`,
  resultBytes: (v) => `returned a value larger than ${formatBytes(v)} as JSON`,
  logBytes: (v) => `logged more than ${formatBytes(v)}`,
};

const ADVICE: Record<LimitName, string> = {
  timeMs: "Do less work per script (fewer or faster calls, no busy loops)",
  memoryBytes: "Keep less data alive at once (filter results as they arrive)",
  stackBytes: "Replace deep recursion with a loop",
  calls: "Make fewer calls per script, or split the work over several scripts",
  resultBytes: "Return only the fields the answer needs",
  logBytes: "Log less (summaries, not whole results)",
};

/**
 * The message of a script stopped at a limit: what happened, the limit's setting by name and how
 * to go on. `setting` is where the limit is configured (e.g. `profiles.ci.sandbox.timeMs`).
 */
export function limitMessage(limit: LimitName, value: number, setting: string): string {
  return `Script stopped: it ${WHAT[limit](value)} (${setting}). ${ADVICE[limit]}, or raise ${setting}.`;
}

/**
 * `DEFAULT_LIMITS` with `overrides` applied, each checked: a non-integer or a value below the
 * limit's minimum throws a `RangeError` naming the limit, since a bad limit is a config bug.
 */
export function resolveLimits(overrides: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS };
  for (const name of Object.keys(overrides) as LimitName[]) {
    const value = overrides[name];
    if (value === undefined) continue;
    if (!(name in DEFAULT_LIMITS)) {
      throw new RangeError(
        `Unknown sandbox limit "${String(name)}"; the limits are ${Object.keys(DEFAULT_LIMITS).join(", ")}.`,
      );
    }
    const max = MAXIMUM[name] ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isSafeInteger(value) || value < MINIMUM[name] || value > max) {
      const range = MAXIMUM[name]
        ? `from ${MINIMUM[name]} to ${max}`
        : `of at least ${MINIMUM[name]}`;
      throw new RangeError(
        `Sandbox limit ${name} must be an integer ${range}; got ${String(value)}.`,
      );
    }
    limits[name] = value;
  }
  return limits;
}

/** `512 KiB`, `1 MiB`, `1000 bytes`: a limit as its messages name it. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** A measured size, rounded: `31.5 MiB`, `12 KiB`, `800 bytes`. */
export function approxBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Number((n / (1024 * 1024)).toFixed(1))} MiB`;
  if (n >= 1024) return `${Number((n / 1024).toFixed(1))} KiB`;
  return `${n} bytes`;
}
