/**
 * How a session's requests and answers are shaped on the wire: the SDK's request options from
 * ours, the W3C traceparent in a request's `_meta`, and an answer without the modern envelope.
 */
import {
  SERVER_INFO_META_KEY,
  type RequestOptions as SdkRequestOptions,
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
