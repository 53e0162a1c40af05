/**
 * MCP Tasks downstream, both eras, answered from mcpx's own task store (executor/tasks-mcp.ts):
 *
 * - 2025-11-25: the `tasks` capability (list, cancel, task-augmented tools/call), the `call`
 *   meta-tool listed with `execution.taskSupport: "optional"`; a tools/call of `call` with
 *   `params.task` is answered at once with a `CreateTaskResult`, the call going on as a task;
 *   tasks/get, tasks/result (waits for the end; the call's result, with related-task `_meta`),
 *   tasks/list and tasks/cancel; `notifications/tasks/status` on each change of status (over
 *   HTTP on the session's GET stream, legacy-task-status.ts; best effort: the spec has clients
 *   poll anyway).
 * - 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`): declared in server/discover;
 *   for a client that declares it in its request's capabilities, a `call` still running after
 *   `taskAfter` is answered `resultType: "task"` (instead of the `mcpx://tasks/` handle others
 *   get); tasks/get (the result or error inlined once terminal), tasks/cancel, tasks/update.
 *
 * A task belongs to the client that started it (its connection or 2025-era session, else its
 * caller); any other client asking for its id is told there is no such task.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";
import { isTerminal, type McpTask, type McpTaskProgress } from "../executor/tasks-mcp.js";
import type { Era, ToolResult } from "../types.js";
import type { ProxyContext } from "./context.js";

/** The 2026-07-28 tasks extension's identifier. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** The task statuses' wire form of one era. */
function wireTask(task: McpTask, era: Era): Record<string, unknown> {
  const { ttlMs, pollIntervalMs, ...rest } = task;
  return era === "legacy"
    ? { ...rest, ttl: ttlMs, pollInterval: pollIntervalMs }
    : { ...rest, ttlMs, pollIntervalMs };
}

export interface TaskEnv {
  ctx: ProxyContext;
  era: Era;
  /** Whose tasks a request reaches: its client's key (see mcp-server.ts). */
  ownerOf(req: ServerContext): string;
}

const TaskIdParams = z.looseObject({ taskId: z.string() });
const ListParams = z.looseObject({ cursor: z.string().optional() });

/** Register tasks/* for one downstream server of `env.era`. */
export function registerTaskHandlers(server: Server, env: TaskEnv): void {
  const { ctx, era } = env;
  const store = ctx.executor.mcpTasks;
  const unknown = (taskId: string) =>
    new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `No task "${taskId}" of this client: tasks are kept per client, ${era === "legacy" ? "tasks/list shows yours" : "each for its ttl"}.`,
    );

  if (era === "legacy") {
    // The SDK types no 2025-11-25 task method (wire vocabulary only): schemas of our own.
    server.setRequestHandler("tasks/get", { params: TaskIdParams }, (params, req) => {
      const task = store.get(env.ownerOf(req), params.taskId);
      if (!task) throw unknown(params.taskId);
      return wireTask(task, era);
    });
    server.setRequestHandler("tasks/list", { params: ListParams }, (_params, req) => {
      // One page: an owner holds at most maxPerOwner tasks.
      return { tasks: store.list(env.ownerOf(req)).map((t) => wireTask(t, era)) };
    });
    server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, (params, req) => {
      const cancelled = store.cancel(env.ownerOf(req), params.taskId);
      if (!cancelled) throw unknown(params.taskId);
      if (cancelled === "terminal") {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Task "${params.taskId}" has already ended: only a running task can be cancelled.`,
        );
      }
      return wireTask(cancelled, era);
    });
    server.setRequestHandler("tasks/result", { params: TaskIdParams }, async (params, req) => {
      const { taskId } = params;
      const outcome = await store.outcome(env.ownerOf(req), taskId, req.mcpReq.signal);
      if (!outcome) throw unknown(taskId);
      if (!outcome.result) {
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          outcome.error ?? "The task ended without a result.",
        );
      }
      const meta = { ...outcome.result._meta, [RELATED_TASK]: { taskId } };
      return { ...outcome.result, _meta: meta };
    });
    return;
  }

  // 2026-07-28: the extension reuses tasks/get and tasks/cancel (schemas of our own, as the SDK
  // asks of extension methods) and adds tasks/update.
  server.setRequestHandler("tasks/get", { params: TaskIdParams }, (params, req) => {
    const owner = env.ownerOf(req);
    const task = store.get(owner, params.taskId);
    if (!task) throw unknown(params.taskId);
    const wire = wireTask(task, era);
    if (!isTerminal(task.status)) return wire;
    // Terminal: its result or error inline (the store has it at once for a terminal task).
    return store.outcome(owner, params.taskId).then((outcome) => {
      if (task.status === "completed" && outcome?.result)
        return { ...wire, result: outcome.result };
      if (task.status === "failed") {
        return {
          ...wire,
          error: {
            code: ProtocolErrorCode.InternalError,
            message: outcome?.error ?? "The call failed.",
          },
        };
      }
      return wire;
    });
  });
  server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, (params, req) => {
    // Cancelling an ended task is acknowledged too: the extension's cancellation is cooperative.
    if (!store.cancel(env.ownerOf(req), params.taskId)) throw unknown(params.taskId);
    return {};
  });
  server.setRequestHandler(
    "tasks/update",
    { params: z.looseObject({ taskId: z.string(), inputResponses: z.unknown().optional() }) },
    (params, req) => {
      // mcpx's tasks never wait for input (a mid-call request reaches the client as in a plain
      // call, or is refused): nothing to take, but the task must be this client's.
      if (!store.get(env.ownerOf(req), params.taskId)) throw unknown(params.taskId);
      return {};
    },
  );
}

/** What a tools/call asks of tasks: the 2025 `task` param, or the 2026 extension. */
export type TaskWish = { era: "legacy"; ttlMs?: number } | { era: "modern" } | undefined;

/** The task a tools/call asks for, if any (and if this era's client may ask for one). */
export function taskWish(params: Record<string, unknown>, req: ServerContext, era: Era): TaskWish {
  if (era === "legacy") {
    const task = params.task;
    if (!isRecord(task)) return undefined;
    return { era, ...(typeof task.ttl === "number" && { ttlMs: task.ttl }) };
  }
  const envelope = req.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  const extensions = isRecord(caps) ? caps.extensions : undefined;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]) ? { era } : undefined;
}

/**
 * Run a `call` as a task of `owner`. 2025-11-25: answered at once with the task. 2026-07-28:
 * the call's own result when it ends within `taskAfter`, else the task (`resultType: "task"`).
 * `notify` hears a 2025 task's status changes.
 */
export async function runAsTask(
  ctx: ProxyContext,
  wish: NonNullable<TaskWish>,
  owner: string,
  work: (signal: AbortSignal, progress: McpTaskProgress) => Promise<ToolResult>,
  notify?: (task: Record<string, unknown>) => Promise<void>,
): Promise<Record<string, unknown>> {
  const store = ctx.executor.mcpTasks;
  const started = store.start(owner, work, {
    ...(wish.era === "legacy" && wish.ttlMs !== undefined && { ttlMs: wish.ttlMs }),
    isErrorFails: wish.era === "legacy",
    ...(notify && {
      onStatus: (task) =>
        void notify(wireTask(task, "legacy")).catch((err: unknown) =>
          ctx.logger.debug(`task status not sent: ${errorMessage(err)}`),
        ),
    }),
  });
  if ("refused" in started) {
    return { content: [{ type: "text", text: started.refused }], isError: true };
  }
  const { task } = started;
  if (wish.era === "legacy") {
    // The SDK server holds every tools/call answer to CallToolResult, which needs `content`:
    // a CreateTaskResult may carry more fields, so it says in text what the task is too.
    return {
      task: wireTask(task, "legacy"),
      content: [
        {
          type: "text",
          text: `Running as task ${task.taskId}: tasks/get for its status, tasks/result for its result.`,
        },
      ],
    };
  }
  const afterMs = ctx.config.taskAfterMs;
  const outcome = afterMs > 0 ? await store.within(owner, task.taskId, afterMs) : undefined;
  if (outcome?.result) {
    store.forget(owner, task.taskId);
    return outcome.result;
  }
  const now = store.get(owner, task.taskId) ?? task;
  return { resultType: "task", ...wireTask(now, "modern") };
}
