/**
 * OpenTelemetry traces: a span per downstream call or script (kind server, under the client's
 * traceparent when it sent one) and per upstream request it causes (kind client, its
 * traceparent sent upstream), exported over OTLP/HTTP. The provider is this proxy's own, never
 * registered globally; it loads only when tracing is on (index.ts imports this file then).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { CallSpan, CallTracer, SpanAttributes } from "../executor/context.js";
import { formatTraceparent, parseTraceparent } from "../traceparent.js";
import { VERSION } from "../version.js";

export interface Tracing {
  readonly tracer: CallTracer;
  /** Export the spans still queued, then stop. */
  close(): Promise<void>;
}

export interface TracingOptions {
  /** The OTLP/HTTP traces URL; undefined: the exporter reads the OTEL_EXPORTER_OTLP_* variables. */
  url?: string;
  /** Replace the exporter (tests). */
  exporter?: SpanExporter;
}

/** Outcomes a span marks as an error. */
const ERRORS = new Set(["isError", "failed", "busy"]);

export function createTracing(options: TracingOptions): Tracing {
  const exporter =
    options.exporter ??
    new OTLPTraceExporter(options.url === undefined ? {} : { url: options.url });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "mcpx", "service.version": VERSION }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("mcpx", VERSION);
  return {
    tracer: { start: (name, kind, parent) => startSpan(tracer, name, kind, parent) },
    close: () => provider.shutdown(),
  };
}

function startSpan(
  tracer: Tracer,
  name: string,
  kind: "server" | "client",
  parent: string | undefined,
): CallSpan {
  const tp = parseTraceparent(parent);
  const context = tp
    ? trace.setSpanContext(ROOT_CONTEXT, {
        traceId: tp.traceId,
        spanId: tp.spanId,
        traceFlags: tp.flags,
        isRemote: true,
      })
    : ROOT_CONTEXT;
  const span = tracer.startSpan(
    name,
    {
      kind: kind === "server" ? SpanKind.SERVER : SpanKind.CLIENT,
      attributes: { "mcp.method.name": "tools/call" },
    },
    context,
  );
  const sc = span.spanContext();
  return {
    traceparent: formatTraceparent({
      traceId: sc.traceId,
      spanId: sc.spanId,
      flags: sc.traceFlags,
    }),
    end: (attributes: SpanAttributes) => {
      span.setAttributes(spanAttributes(attributes));
      if (ERRORS.has(attributes.outcome))
        span.setStatus({ code: SpanStatusCode.ERROR, message: attributes.outcome });
      span.end();
    },
  };
}

/** Attribute names of the span (`mcpx.*`): never arguments or result values. */
function spanAttributes(a: SpanAttributes): Record<string, string | number> {
  return {
    "mcpx.outcome": a.outcome,
    ...(a.method !== undefined && { "mcp.method.name": a.method }),
    ...(a.server !== undefined && { "mcpx.server": a.server }),
    ...(a.tool !== undefined && { "mcpx.tool": a.tool, "gen_ai.tool.name": a.tool }),
    ...(a.caller !== undefined && { "mcpx.caller": a.caller }),
    ...(a.profile !== undefined && { "mcpx.profile": a.profile }),
    ...(a.era !== undefined && { "mcpx.era": a.era }),
    ...(a.resultTokens !== undefined && { "mcpx.result_tokens.sent": a.resultTokens }),
    ...(a.savedTokens !== undefined && { "mcpx.result_tokens.saved": a.savedTokens }),
  };
}
