/**
 * How a call may run as a task upstream (upstream/tasks.ts). 2025-11-25: a tool that declares
 * `execution.taskSupport` "optional" or "required" (the session then checks that the upstream
 * declared tasks for tools/call). 2026-07-28: any call to an upstream that declares the tasks
 * extension, which decides per request. A call inside mcpx's own MCP Task mirrors the upstream
 * task's statuses into it; any other call (a handle after `taskAfter`, or a plain wait) just gets
 * the result, each upstream request short. With traces on, each follow-up request (tasks/get,
 * tasks/result, tasks/update, tasks/cancel) gets a span under the call's upstream span.
 */
import type { ToolDef } from "../types.js";
import type { UpstreamTaskWish } from "../upstream/types.js";
import type { CallContext, CallSpan, CallTracer } from "./context.js";
import { spanAttributes } from "./trace.js";

export function runsAsTask(tool: ToolDef): boolean {
  const execution = tool.execution;
  if (typeof execution !== "object" || execution === null) return false;
  const support = (execution as { taskSupport?: unknown }).taskSupport;
  return support === "optional" || support === "required";
}

/** Where a call's follow-up spans go: its upstream span, on `tracer`. */
export interface TaskTrace {
  tracer: CallTracer;
  /** The call's upstream span (tools/call <server>.<tool>). */
  span: CallSpan;
  server: string;
}

export function upstreamTask(
  ctx: CallContext,
  tool: ToolDef,
  trace: TaskTrace | undefined,
): UpstreamTaskWish {
  const task = ctx.task;
  const onStatus = task?.onStatus;
  return {
    toolRunsTasks: runsAsTask(tool),
    ...(task?.ttlMs !== undefined && { ttlMs: task.ttlMs }),
    ...(onStatus && {
      // Only `working` (and its message) shows: mcpx answers an upstream's input_required itself
      // (tasks/result carries the questions, relayed as in a plain call or refused in a task),
      // so its client is never the one asked.
      onStatus: (status, message) => {
        if (status === "working") onStatus(status, message);
      },
    }),
    ...(trace && {
      trace: (method) => {
        const { tracer, span, server } = trace;
        const child = tracer.start(`${method} ${server}`, "client", span.traceparent);
        return {
          traceparent: child.traceparent,
          end: (outcome) =>
            child.end({
              ...spanAttributes(ctx, outcome, { server, tool: tool.name }, undefined),
              method,
            }),
        };
      },
    }),
  };
}
