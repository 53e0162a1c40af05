/**
 * Every error a script can get, as a `ScriptError` whose message says what happened, where in
 * the script (its own line and column), and what to do next.
 */
import {
  approxBytes,
  formatBytes,
  limitMessage,
  type LimitName,
  type SandboxLimits,
} from "./limits.js";
import { positionInStack, type Position } from "./source.js";
import type { ScriptError } from "./types.js";

/** What the prelude's `describe` reads from a thrown value. */
export interface DescribedError {
  name?: string;
  message?: string;
  stack?: string;
  server?: string;
  tool?: string;
  /** Set instead of the rest when the script threw something that is not an Error. */
  thrown?: string;
}

/** What error messages need to know about the run. */
export interface ErrorContext {
  limits: SandboxLimits;
  /** Prefix of the limits' setting names, e.g. `sandbox.limits`. */
  setting: string;
  /** Lines in the script (positions past them are the wrapper's). */
  lines: number;
}

/** `servers.github.get_me`, or `servers.github["get-me"]` where a name is no identifier. */
export function toolRef(server: string, tool: string): string {
  const part = (name: string) =>
    /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
  return `servers${part(server)}${part(tool)}`;
}

/** `text` ending in one full stop. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function at(position: Position | undefined): string {
  return position ? ` at line ${position.line}, column ${position.column}` : "";
}

function withPosition(error: ScriptError, position: Position | undefined): ScriptError {
  return position ? { ...error, line: position.line, column: position.column } : error;
}

const SYNTAX_HINT =
  "The script runs as the body of an async function, in JavaScript or in TypeScript whose types are stripped.";
const TS_UNSUPPORTED =
  "Only TypeScript whose types can simply be removed runs here: no enum, namespace or parameter properties (use plain objects and functions).";

/** The script does not parse; `unsupported`: it is TypeScript the stripper cannot remove. */
export function syntaxError(
  message: string,
  position?: Position,
  unsupported = false,
): ScriptError {
  const hint = unsupported ? TS_UNSUPPORTED : SYNTAX_HINT;
  return withPosition(
    { kind: "syntax", message: `SyntaxError${at(position)}: ${sentence(message)} ${hint}` },
    position,
  );
}

/** QuickJS's own SyntaxError, read by the prelude. */
export function syntaxFrom(e: DescribedError, lines: number): ScriptError {
  return syntaxError(e.message ?? "invalid syntax", positionInStack(e.stack, lines));
}

/** The script went past `limit`; `position` is where it was stopped, when known. */
export function limitError(limit: LimitName, ctx: ErrorContext, position?: Position): ScriptError {
  const where = position
    ? ` It was stopped at line ${position.line}, column ${position.column}.`
    : "";
  const message = limitMessage(limit, ctx.limits[limit], `${ctx.setting}.${limit}`) + where;
  return withPosition({ kind: "limit", message, limit }, position);
}

/**
 * QuickJS reports its own limits as these errors (catchable by the script, fatal if not); its
 * parser reports a stack overflow as a SyntaxError.
 */
export function engineLimit(e: DescribedError): LimitName | undefined {
  if (e.name !== "InternalError" && e.name !== "RangeError" && e.name !== "SyntaxError") {
    return undefined;
  }
  if (e.message === "out of memory") return "memoryBytes";
  if (e.message === "stack overflow") return "stackBytes";
  return undefined;
}

/** The script's promise rejected with `e` (uncaught throw, or a failed inner call). */
export function thrownError(e: DescribedError, ctx: ErrorContext): ScriptError {
  if (e.thrown !== undefined) {
    return {
      kind: "runtime",
      message: `The script threw ${e.thrown}, which is not an Error, so its line is unknown. Throw an Error (throw new Error("…")) to see where, or catch the value.`,
    };
  }
  const position = positionInStack(e.stack, ctx.lines);
  const limit = engineLimit(e);
  if (limit) return limitError(limit, ctx, position);
  const text = e.message ?? "";
  if (e.name === "ToolCallError" && e.server !== undefined && e.tool !== undefined) {
    const ref = toolRef(e.server, e.tool);
    return withPosition(
      {
        kind: "runtime",
        message: `${ref} failed${at(position)}: ${text}\nCheck its arguments against describe("${e.server}.${e.tool}"), or catch the failure (try/catch) to handle it in the script.`,
        call: { server: e.server, tool: e.tool },
      },
      position,
    );
  }
  return withPosition(
    {
      kind: "runtime",
      message: `${e.name ?? "Error"}${at(position)}: ${sentence(text)} Fix the script there, or catch the error with try/catch.`,
    },
    position,
  );
}

/** The script's promise can never settle: it awaits something no inner call will resolve. */
export function neverSettles(): ScriptError {
  return {
    kind: "runtime",
    message:
      "The script awaits a promise that never settles: no inner call is pending, and there are no timers or events in the sandbox, so nothing can resolve it. Await only servers.<server>.<tool>(…) calls and promises built from them.",
  };
}

/** The returned value has no JSON form (a cycle, a BigInt, …). */
export function notJson(reason: string): ScriptError {
  return {
    kind: "runtime",
    message: `The script's return value cannot be encoded as JSON (${reason}). Return plain data: objects, arrays, strings, numbers, booleans and null.`,
  };
}

/** The sandbox itself failed; the script may be fine. */
export function internalError(reason: string): ScriptError {
  return {
    kind: "internal",
    message: `The sandbox failed while running the script (${reason}). This is a bug in mcpx, not in the script; running it again may work.`,
  };
}

/** No worker thread could start for the script: it never ran. */
export function notStartedError(startMs: number): ScriptError {
  return {
    kind: "internal",
    message: `The script did not run: no sandbox worker thread started within ${startMs} ms, twice in a row (the machine may be overloaded). Running it again may work.`,
  };
}

/** The script was cancelled: its caller gave up, or mcpx is closing the sandbox. */
export function cancelledError(closing: boolean): ScriptError {
  return {
    kind: "cancelled",
    message: closing
      ? "The script was stopped because mcpx is shutting down its sandbox."
      : "The script was cancelled by its caller.",
  };
}

/**
 * Why an inner call was not made: its arguments are larger than one call may carry, or would
 * take the script's calls in flight past their sum. The call's promise rejects with this text
 * (the script may catch it); `size` is a lower bound when the text was too long to measure.
 */
export function argumentsTooLarge(
  ref: string,
  size: number,
  limit: number,
  inFlight?: number,
): string {
  if (inFlight === undefined) {
    return `${ref} was not called: its arguments are ${approxBytes(size)} or more as JSON, more than the ${formatBytes(limit)} one inner call may send. Send less per call (split the data over several calls, or pass a reference the tool can read).`;
  }
  return `${ref} was not called: the script's calls still running carry ${approxBytes(inFlight)} of arguments, and this call's ${approxBytes(size)} would pass the ${formatBytes(limit)} a script may have in flight at once. Await earlier calls before starting more.`;
}

/** An inner call's result that the host will not hand to a script: larger than its memory. */
export function resultTooLarge(ref: string, size: number, limit: number): string {
  return `${ref} answered ${approxBytes(size)} or more as JSON, more than the script's memory limit of ${formatBytes(limit)}: it was not passed to the script. Ask the tool for less (its own filters or paging).`;
}

/** Not run: the caller already has as many scripts waiting as it may (SandboxOptions.perCaller). */
export function busyError(running: number, queued: number, maxRunning: number): ScriptError {
  return {
    kind: "busy",
    message: `Script not run: this caller already has ${running} script(s) running and ${queued} waiting for the sandbox, the most mcpx holds for one caller (at most ${maxRunning} of a caller's scripts run at once, so others get their turn). Wait for those to finish, or make fewer calls at once.`,
  };
}
