/**
 * Which calls go to their upstream as tasks (upstream/tasks.ts): those of a tool that declares
 * `execution.taskSupport` "optional" or "required" (the session then checks that the upstream
 * declared tasks for tools/call). A call inside mcpx's own MCP Task mirrors the upstream task's
 * statuses into it; any other call (a handle after `taskAfter`, or a plain wait) just gets the
 * result, each upstream request short.
 */
import type { ToolDef } from "../types.js";
import type { UpstreamTaskWish } from "../upstream/types.js";
import type { CallContext } from "./context.js";

export function runsAsTask(tool: ToolDef): boolean {
  const execution = tool.execution;
  if (typeof execution !== "object" || execution === null) return false;
  const support = (execution as { taskSupport?: unknown }).taskSupport;
  return support === "optional" || support === "required";
}

export function upstreamTask(ctx: CallContext): UpstreamTaskWish {
  const task = ctx.task;
  const onStatus = task?.onStatus;
  return {
    ...(task?.ttlMs !== undefined && { ttlMs: task.ttlMs }),
    ...(onStatus && {
      // Only `working` (and its message) shows: mcpx answers an upstream's input_required itself
      // (tasks/result carries the questions, relayed as in a plain call or refused in a task),
      // so its client is never the one asked.
      onStatus: (status, message) => {
        if (status === "working") onStatus(status, message);
      },
    }),
  };
}
