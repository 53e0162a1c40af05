/** The public shapes of the sandbox: what `run()` takes and what it answers. */
import type { LimitName, SandboxLimits } from "./limits.js";

/**
 * The host's answer to one inner call, already decoded: `value` is what the script's
 * `await servers.x.y(args)` resolves to; `error` is the text its rejection's `message` carries.
 * The integration maps a tool result to `value` (structured content, else the JSON text parsed,
 * else `{ text, content }`) and an `isError` result to `error`.
 */
export type InnerCallResult = { value: unknown } | { error: string };

/**
 * Runs one inner call for a script. `args` is plain JSON data (parsed on the host from the
 * script's JSON, never a sandbox object). `signal` aborts when the script ends for any reason
 * (done, failed, past a limit, cancelled), so a call still running is cancelled. A rejection is
 * answered to the script like `{ error: message }`.
 */
export type InnerCall = (
  server: string,
  tool: string,
  args: unknown,
  signal: AbortSignal,
) => Promise<InnerCallResult>;

/** What one script may see and use. */
export interface RunOptions {
  /**
   * The servers and tools the script's `servers` object offers, by name only: the caller's view.
   * A name not here is `undefined` in the script and is refused on the host as well.
   */
  servers: Readonly<Record<string, readonly string[]>>;
  /** How an inner call reaches a tool. */
  call: InnerCall;
  /**
   * Who runs the script. Scripts wait for a worker round robin over callers, and a caller has at
   * most SandboxOptions.perCaller scripts running and waiting; without one, the script is its
   * own caller.
   */
  caller?: string;
  /** Limits for this script (the caller's profile); missing ones take `DEFAULT_LIMITS`. */
  limits?: Partial<SandboxLimits>;
  /** Cancels the script (and its in-flight inner calls); it answers `kind: "cancelled"`. */
  signal?: AbortSignal;
  /**
   * Where the limits are configured, named in limit messages as `${limitSetting}.${limit}`
   * (e.g. `profiles.ci.sandbox`). Default `sandbox.limits`.
   */
  limitSetting?: string;
}

/** Why a script failed. `message` is complete and fit to show a model: what, where, what next. */
export interface ScriptError {
  /**
   * `syntax`: the script does not parse (as JavaScript, nor as TypeScript);
   * `runtime`: it threw (or returned a value JSON cannot encode, or awaited what never settles);
   * `limit`: it went past `limit`; `cancelled`: its signal aborted or the sandbox closed;
   * `internal`: the sandbox itself failed (a worker died): a bug of ours, not of the script;
   * `busy`: not run, its caller already has as many scripts waiting as it may.
   */
  kind: "syntax" | "runtime" | "limit" | "cancelled" | "internal" | "busy";
  message: string;
  /** 1-based line in the script as given (the wrapper mcpx adds is accounted for). */
  line?: number;
  /** 1-based column in that line. */
  column?: number;
  /** The limit a `limit` error went past. */
  limit?: LimitName;
  /** The inner call whose failure the script did not catch. */
  call?: { server: string; tool: string };
}

/** A script's answer. `calls` counts the inner calls it started; `logs` holds its console lines. */
export type ScriptOutcome =
  | { ok: true; value: unknown; logs: string[]; calls: number }
  | { ok: false; error: ScriptError; logs: string[]; calls: number };
