/** What a call answers when it never reached a tool, or the upstream failed it. */
import type { CallOutcome, NoSession } from "./context.js";
import type { ToolResult } from "../types.js";
import { classifyFailure } from "../upstream/sdk-errors.js";
import type { ServerState } from "../registry/registry.js";
import { errorMessage, ProxyError } from "../errors.js";

export const SHUTTING_DOWN =
  "mcpx is shutting down; the call was not completed. Retry once mcpx is back";

/**
 * Why `what` (a call or a read) got no session of `server`: cancelled while waiting, every session
 * busy, a pool retired by a reload, shutdown, or the upstream failing to start.
 */
export function noSession(
  server: ServerState,
  what: string,
  err: unknown,
  signal: AbortSignal | undefined,
  redact: (text: string) => string,
): NoSession {
  if (signal?.aborted)
    return { text: `${what} cancelled before it started.`, outcome: "cancelled" };
  const code = err instanceof ProxyError ? err.code : undefined;
  switch (code) {
    case "UPSTREAM_BUSY":
      return {
        text: `Server "${server.name}" is busy: ${errorMessage(err)}. ${what} was not run; try again shortly, or raise "maxSessions" for "${server.name}" in the mcpx config.`,
        outcome: "busy",
      };
    case "POOL_RETIRED":
      return {
        text: `Server "${server.name}" was reconfigured by a config reload while ${what} waited; it was not run. Call it again.`,
        outcome: "failed",
      };
    case "SHUTTING_DOWN":
      return { text: SHUTTING_DOWN, outcome: "cancelled" };
    default: {
      const error = redact(errorMessage(err));
      return {
        text:
          `Server "${server.name}" could not be started for ${what}: ${error}. ` +
          `Other servers are unaffected; try again later or use describe() to see server status.`,
        outcome: "failed",
        error,
      };
    }
  }
}

/**
 * The one line that opens the first answer a client gets from `server` after the session that
 * held its state was replaced (`why` it ended, from the pool): a model reads it, so a blank page
 * or an empty history is never taken for the server's real state.
 */
export function restartedNotice(server: string, why: string): string {
  return (
    `Note from mcpx: server "${server}" restarted since your last call (${why}). ` +
    `Whatever it held for you (open pages, searches, sessions, history) is gone; redo the earlier steps this call relies on.`
  );
}

/** `result` with `line` as its first text block (structured content, if any, is unchanged). */
export function prependText(result: ToolResult, line: string): ToolResult {
  return { ...result, content: [{ type: "text", text: line }, ...result.content] };
}

/** A call the upstream did not complete: timeout, closed connection, or its own error. */
export function upstreamFailure(
  server: string,
  tool: string,
  err: unknown,
  timeoutMs: number,
  redact: (text: string) => string,
): string {
  const { kind } = classifyFailure(err);
  if (kind === "timeout") {
    return `Server "${server}" did not answer ${tool} within ${timeoutMs} ms; the call was abandoned. Try again, with smaller input, or raise "timeout" for "${server}" in the mcpx config.`;
  }
  if (kind === "closed") {
    return `Server "${server}" closed the connection during ${tool} (it may have crashed). The call did not complete; it is safe to retry if the tool is idempotent.`;
  }
  return `Server "${server}" failed to run ${tool}: ${redact(errorMessage(err))}`;
}

/** A relayed request (prompts/get, completion/complete, resources/read) that did not complete. */
export interface RelayFailure {
  message: string;
  outcome: CallOutcome;
  /** The JSON-RPC error the upstream answered with, relayed as it is. */
  rpc?: { code: number; data?: unknown };
}

/** What a relayed request that the upstream failed answers, naming the server and next step. */
export function relayFailure(
  server: string,
  what: string,
  err: unknown,
  timeoutMs: number,
  redact: (text: string) => string,
): RelayFailure {
  const failure = classifyFailure(err);
  if (failure.rpc) {
    // The upstream's own answer: its code and message, as a direct client would get them.
    return { message: redact(failure.message), outcome: "failed", rpc: failure.rpc };
  }
  return { message: upstreamFailure(server, what, err, timeoutMs, redact), outcome: "failed" };
}
