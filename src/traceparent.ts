/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/): what a client sends
 * in the HTTP header or in a request's `params._meta.traceparent` (the key MCP reserves for it),
 * and what mcpx passes to upstreams the same two ways. Only version 00's shape is accepted; any
 * other value is ignored, never an error (a broken header must not fail a call).
 */

export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** The trace-flags byte (bit 0: sampled). */
  flags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The traceparent a value holds, or undefined when it is not one (absent, malformed, zero ids). */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== "string" || value.length !== 55) return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m) return undefined;
  const [, traceId = "", spanId = "", flags = "00"] = m;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, flags: parseInt(flags, 16) };
}

export function formatTraceparent(tp: TraceParent): string {
  return `00-${tp.traceId}-${tp.spanId}-${(tp.flags & 0xff).toString(16).padStart(2, "0")}`;
}

/**
 * The client's traceparent: the request's `_meta.traceparent` first (it travels with the
 * message, whatever the transport), else the HTTP header. Normalized, or undefined.
 */
export function clientTraceparent(
  meta: unknown,
  header: string | null | undefined,
): string | undefined {
  const fromMeta =
    meta !== null && typeof meta === "object"
      ? parseTraceparent((meta as Record<string, unknown>).traceparent)
      : undefined;
  const tp = fromMeta ?? parseTraceparent(header?.trim().toLowerCase());
  return tp && formatTraceparent(tp);
}
