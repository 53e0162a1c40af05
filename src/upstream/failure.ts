/**
 * Startup errors that say why: a stdio upstream's exit and last stderr lines, an HTTP upstream's
 * URL and network cause. No SDK import: the SDK's errors arrive here as plain causes.
 */
import { errorMessage } from "../errors.js";
import type { ExitStatus } from "./transport.js";

/** How many of a failed process's last stderr lines its error carries, and how much of each. */
export const STDERR_LINES_IN_ERROR = 3;
const STDERR_LINE_IN_ERROR_CHARS = 200;

/**
 * Why a stdio upstream failed to start: its own exit (not the SDK's "Connection closed") and the
 * last lines it wrote to stderr. The original error is the cause.
 */
export function stdioFailure(err: unknown, exit: ExitStatus | undefined, stderr: string[]): Error {
  let message = errorMessage(err);
  if (exit && !exit.requested) {
    const how =
      exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal}`;
    message = `process ${how} at startup`;
  }
  const lines = stderr
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) =>
      l.length > STDERR_LINE_IN_ERROR_CHARS ? `${l.slice(0, STDERR_LINE_IN_ERROR_CHARS)}…` : l,
    );
  if (lines.length > 0) message += `; stderr: ${lines.join(" | ")}`;
  return new Error(message, { cause: err });
}

/**
 * Why an http or sse upstream failed: where (the URL without credentials, query or fragment:
 * those may hold secrets that are not registered as such) and the network cause fetch hides
 * behind "fetch failed" (ECONNREFUSED, ENOTFOUND, a TLS error).
 */
export function remoteFailure(err: unknown, url: string): Error {
  const shown = displayUrl(url);
  let message = errorMessage(err);
  const cause = causeOf(err);
  if (cause && !message.includes(cause)) message += ` (${cause})`;
  // Some messages quote the URL they were given: never the full one.
  message = message.split(url).join(shown);
  return new Error(`${shown}: ${message}`, { cause: err });
}

function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

/**
 * The network error under a fetch failure, however deep (the SDK wraps fetch's TypeError in its
 * own errors); Node wraps a refused dual-stack connect in an AggregateError.
 */
function causeOf(err: unknown): string | undefined {
  let cause = (err as { cause?: unknown } | undefined)?.cause;
  for (let depth = 0; cause instanceof Error && cause.cause instanceof Error && depth < 5; depth++)
    cause = cause.cause;
  if (!(cause instanceof Error)) return undefined;
  if (cause.message) return cause.message;
  if (cause instanceof AggregateError && cause.errors.length > 0)
    return cause.errors.map((e) => errorMessage(e)).join("; ");
  return (cause as NodeJS.ErrnoException).code;
}
