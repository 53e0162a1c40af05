/**
 * What an SDK or transport error means: a failed request classified without SDK error codes
 * leaking out (classifyFailure), and startup errors that say why: a stdio upstream's exit and
 * last stderr lines, an HTTP upstream's URL and network cause. Not to be confused with
 * src/executor/failures.ts, which turns these into the answers a client gets.
 */
import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { errorMessage } from "../errors.js";
import type { ExitStatus } from "./transport.js";
import type { UpstreamFailure } from "./types.js";

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

/**
 * Classify an error from an UpstreamSession request. The SDK reports its own timeouts (and
 * aborts) and closed connections as SdkError codes; a request on a closed client is a plain
 * "Not connected"; an HTTP upstream that went away is fetch's TypeError("fetch failed").
 */
export function classifyFailure(err: unknown): UpstreamFailure {
  const rpc =
    err instanceof ProtocolError
      ? { code: err.code, ...(err.data !== undefined && { data: err.data }) }
      : undefined;
  return { kind: failureKind(err), message: errorMessage(err), ...(rpc && { rpc }) };
}

function failureKind(err: unknown): UpstreamFailure["kind"] {
  switch (sdkCode(err)) {
    case SdkErrorCode.RequestTimeout:
      return "timeout";
    case SdkErrorCode.ConnectionClosed:
    case SdkErrorCode.NotConnected:
    case SdkErrorCode.SendFailed:
      return "closed";
    default:
      break;
  }
  if (!(err instanceof Error)) return "other";
  if (err.message === "Not connected") return "closed";
  if (err instanceof TypeError && err.message === "fetch failed") return "closed";
  return "other";
}

/** The SdkError code of `err` or of an error it wraps (our startup errors keep the SDK's as cause). */
function sdkCode(err: unknown): SdkErrorCode | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SdkError) return e.code;
  }
  return undefined;
}
