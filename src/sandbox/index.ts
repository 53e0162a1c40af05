/**
 * Code mode's sandbox: runs a short script against the caller's servers, in QuickJS compiled to
 * WebAssembly, on worker threads, and answers only its final value and its console lines.
 *
 * ## Interface (for the `call({ script })` integration)
 *
 * ```ts
 * const sandbox = createSandbox({ maxWorkers, idleMs, graceMs, logger }); // once, in createProxy
 * const outcome = await sandbox.run(script, {
 *   servers: { github: ["get_me", "list-issues"] },  // the caller's view, names only
 *   call: async (server, tool, args, signal) => …,    // → { value } | { error: isError text }
 *   limits: profile.sandbox,                           // Partial<SandboxLimits>, see DEFAULT_LIMITS
 *   limitSetting: "profiles.<name>.sandbox",           // named in limit messages
 *   signal: req.signal,
 * });
 * // outcome: { ok: true, value, logs, calls } | { ok: false, error: ScriptError, logs, calls }
 * await sandbox.close(); // at shutdown, after draining calls
 * ```
 *
 * - Inside the script: `servers.<server>.<tool>(args)` and `servers.<server>["tool-name"](args)`
 *   return a promise of the tool's value (`value` of `call`, crossed as JSON); a failed call
 *   (`{ error }`, or `call` rejecting) rejects with a `ToolCallError` whose `message` is the
 *   error text and whose `server`/`tool` name the call. `console.log/info/debug/warn/error`
 *   collect lines. Nothing else: no require, import, process, fetch, timers or host object.
 * - `call` is the integration's hook for everything about an inner call (validation, policy,
 *   logging, metrics): mapping a tool result to `{ value }` is its job — structured content,
 *   else the JSON text parsed, else `{ text, content }`; an `isError` result becomes `{ error }`.
 *   `signal` aborts when the script ends, so calls still out are cancelled.
 * - `value` is `undefined` when the script returns nothing; otherwise plain JSON data, parsed on
 *   the main thread from the script's JSON text (so never a sandbox object).
 * - The script is tried as JavaScript first; only if it does not parse are its TypeScript types
 *   stripped (@swc/wasm-typescript, strip-only: positions unchanged; no enum or namespace). A script valid in
 *   both reads as JavaScript: `f<T>(x)` is then two comparisons, so scripts should not pass
 *   type arguments.
 * - What crosses is bounded: a call's arguments (`callBytes.argument`) and those of the calls still
 *   out (`callBytes.inFlight`) are refused in the worker before they leave the script's memory (the
 *   call's promise rejects, naming the limit); results larger than the script's memory are
 *   refused on the host; the script's value is held to `resultBytes` on both sides.
 * - Isolation: each script gets a fresh QuickJS runtime and context in a worker thread that has
 *   no environment variables; the worker renews its WebAssembly instance after a script that
 *   broke it or exhausted memory or stack. Limits are enforced inside (interrupt handler, QuickJS
 *   memory and stack limits, call/result/log counts) and from the main thread (a deadline timer,
 *   the call count, a shared stop flag, and `worker.terminate()` when a stop goes unanswered).
 * - `ScriptError.kind`: `syntax` | `runtime` | `limit` (with `limit`) | `cancelled` | `internal`;
 *   `message` is complete (what, the script's own line and column, the inner call that failed,
 *   what to do next); `line`/`column`/`call` carry the same facts for the integration.
 *
 * See `limits.ts` for the limits, their defaults and their messages.
 */
export { createSandbox, type Sandbox, type SandboxOptions } from "./pool.js";
export {
  DEFAULT_CALL_BYTES,
  DEFAULT_LIMITS,
  limitMessage,
  resolveLimits,
  type CallBytes,
  type LimitName,
  type SandboxLimits,
} from "./limits.js";
export type {
  InnerCall,
  InnerCallResult,
  RunOptions,
  ScriptError,
  ScriptOutcome,
} from "./types.js";
