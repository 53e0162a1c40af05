/**
 * How a session's requests and answers are shaped on the wire: the SDK's request options from
 * ours, the W3C traceparent in a request's `_meta`, and an answer without the modern envelope.
 */
import {
  SERVER_INFO_META_KEY,
  type JSONRPCMessage,
  type RequestOptions as SdkRequestOptions,
  type Transport,
} from "@modelcontextprotocol/client";
import { isRecord } from "../json.js";
import type { RequestOptions } from "./types.js";

/**
 * A result without what the modern protocol adds to every answer (the upstream's serverInfo,
 * cache hints, resultType): that describes the upstream's reply, not the tool's result, and
 * mcpx answers its own clients with its own.
 */
export function withoutEnvelope(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _t, ttlMs: _ttl, cacheScope: _scope, _meta, ...rest } = result;
  if (!isRecord(_meta)) return rest;
  const { [SERVER_INFO_META_KEY]: _info, ...meta } = _meta;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/**
 * Params with the request's W3C traceparent in `_meta.traceparent` (the key MCP reserves for
 * it), kept beside any `_meta` they had.
 */
export function withTrace<P extends object>(params: P, o: RequestOptions): P {
  if (o.traceparent === undefined) return params;
  const meta = (params as { _meta?: unknown })._meta;
  return { ...params, _meta: { ...(isRecord(meta) && meta), traceparent: o.traceparent } };
}

export function sdkOptions(o: RequestOptions): SdkRequestOptions {
  return {
    timeout: o.timeoutMs,
    resetTimeoutOnProgress: true,
    ...(o.signal && { signal: o.signal }),
    ...(o.onProgress && { onprogress: o.onProgress }),
  };
}

/**
 * Where a caught 2026-07-28 CreateTaskResult (`resultType: "task"`) is kept in the result the
 * SDK client then decodes as `complete` (see catchTaskResults).
 */
export const CAUGHT_TASK = "mcpx/upstream-task";

/**
 * Catch 2026-07-28 task answers before the SDK client decodes them. The v2 client's modern codec
 * (`decodeResult` in the client's dist, `src-*.mjs`) turns any `resultType` besides `complete`
 * and `input_required` into an `UnsupportedResultType` error that keeps neither the task id nor
 * anything else of the answer, before any result schema a caller passes. So every message the
 * transport delivers passes through here first: a result with `resultType: "task"` becomes a
 * `complete` one (with the empty `content` a tools/call result needs) holding the task under
 * CAUGHT_TASK, which session.ts follows (upstream/tasks.ts). The SDK chains handlers by reading
 * `onmessage` back and wrapping it: each handler is wrapped once, and a caught answer is no
 * longer a task, so wrapping twice changes nothing.
 */
export function catchTaskResults(transport: Transport): void {
  let wrapped: Transport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => wrapped,
    set: (next: Transport["onmessage"]) => {
      wrapped = next && ((message, extra) => next(caughtTask(message), extra));
    },
  });
}

function caughtTask(message: JSONRPCMessage): JSONRPCMessage {
  if (!("result" in message) || !isRecord(message.result)) return message;
  if (message.result.resultType !== "task") return message;
  const { resultType: _task, ...task } = message.result;
  return { ...message, result: { resultType: "complete", content: [], [CAUGHT_TASK]: task } };
}
