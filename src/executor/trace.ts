/**
 * The executor's side of traces: which span a call opens and what its end records. Spans exist
 * only while a tracer is set (src/telemetry/tracing.ts); attributes never hold arguments or
 * result values.
 */
import type { CompressionTally } from "../compression/result.js";
import type { CallContext, CallOutcome, CallSpan, CallTracer, SpanAttributes } from "./context.js";

/**
 * The span of a downstream request (a call or a script), unless the call already runs under
 * one (a script's inner call: its upstream request is the script span's child).
 */
export function downstreamSpan(
  tracer: CallTracer | undefined,
  name: string,
  ctx: CallContext,
): CallSpan | undefined {
  if (!tracer || ctx.span) return undefined;
  return tracer.start(name, "server", ctx.trace?.traceparent);
}

/** The span of the upstream request a call makes, under the call's (or its script's) span. */
export function upstreamSpan(
  tracer: CallTracer | undefined,
  server: string,
  tool: string,
  ctx: CallContext,
): CallSpan | undefined {
  if (!tracer || !ctx.span) return undefined;
  return tracer.start(`tools/call ${server}.${tool}`, "client", ctx.span.traceparent);
}

/**
 * The span of an upstream request other than tools/call (`resources/read <server>`) made under
 * the call's span (the `resources` meta-tool's read).
 */
export function upstreamRequestSpan(
  tracer: CallTracer | undefined,
  method: string,
  server: string,
  ctx: CallContext,
): CallSpan | undefined {
  if (!tracer || !ctx.span) return undefined;
  return tracer.start(`${method} ${server}`, "client", ctx.span.traceparent);
}

/**
 * The spans of a relayed request (prompts/get, resources/read, completion/complete): the
 * downstream request's (kind server) and, under it, the upstream request it causes (kind client).
 */
export function relaySpans(
  tracer: CallTracer | undefined,
  what: string,
  server: string,
  ctx: CallContext,
): { request: CallSpan; upstream: CallSpan } | undefined {
  const request = downstreamSpan(tracer, what, ctx);
  if (!tracer || !request) return undefined;
  const method = what.split(" ")[0] ?? what;
  return { request, upstream: tracer.start(`${method} ${server}`, "client", request.traceparent) };
}

/** What a span's end records of a call. */
export function spanAttributes(
  ctx: CallContext,
  outcome: CallOutcome,
  target: { server?: string; tool?: string } | undefined,
  compression: CompressionTally | undefined,
): SpanAttributes {
  return {
    outcome,
    ...(target?.server !== undefined && { server: target.server }),
    ...(target?.tool !== undefined && { tool: target.tool }),
    ...(ctx.caller !== undefined && { caller: ctx.caller }),
    ...(ctx.trace?.profile !== undefined && { profile: ctx.trace.profile }),
    ...(ctx.trace?.era !== undefined && { era: ctx.trace.era }),
    ...(compression &&
      compression.blocks > 0 && {
        resultTokens: compression.sentTokens,
        savedTokens: Math.max(0, compression.jsonTokens - compression.sentTokens),
      }),
  };
}
