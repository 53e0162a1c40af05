/**
 * A tool call run as a task on an upstream that supports MCP Tasks (2025-11-25: the `tasks`
 * capability with `requests.tools.call`, and the tool's `execution.taskSupport`). mcpx sends
 * the task-augmented tools/call, follows the task (tasks/get every poll interval, sooner when
 * the upstream's notifications/tasks/status arrives), takes its result with tasks/result once it
 * ends or waits for input (the upstream's questions come over that request), and cancels it
 * upstream (tasks/cancel) when the caller gives up. Each request is short, so a long task is
 * bounded by its ttl, not by the server's request timeout.
 *
 * The upstream's task id never leaves this file: the caller sees the call's result, and
 * statuses through `onStatus` (mcpx's own task, or the handle, carries them to the client).
 */
import { isRecord } from "../json.js";
import type { RequestOptions, UpstreamTaskStatus } from "./types.js";
import { withTrace } from "./wire.js";

const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** Poll bounds, whatever interval the upstream suggests. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5_000;
const DEFAULT_POLL_MS = 1_000;

/** What callAsTask needs of a session's SDK client. */
export interface TaskWire {
  request(
    method: string,
    params: Record<string, unknown>,
    o: RequestOptions,
  ): Promise<Record<string, unknown>>;
  /** Hear the upstream's notifications/tasks/status for `taskId` until the returned function. */
  onStatus(taskId: string, fn: (task: Record<string, unknown>) => void): () => void;
}

/** Whether an upstream's declared capabilities let tools/call run as a task (2025-11-25). */
export function runsToolTasks(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks;
  const requests = isRecord(tasks) ? tasks.requests : undefined;
  const tools = isRecord(requests) ? requests.tools : undefined;
  return isRecord(tools) && isRecord(tools.call);
}

/** A task-augmented tools/call followed to its end; the call's result, as a plain call's. */
export async function callAsTask(
  wire: TaskWire,
  params: Record<string, unknown>,
  o: RequestOptions,
): Promise<Record<string, unknown>> {
  const wish = o.task ?? {};
  const created = await wire.request(
    "tools/call",
    { ...params, task: wish.ttlMs !== undefined ? { ttl: wish.ttlMs } : {} },
    o,
  );
  const task = created.task;
  // A server may answer a task-augmented request at once, as a plain call.
  if (!isRecord(task) || typeof task.taskId !== "string") return created;
  const taskId = task.taskId;
  // The follow-ups belong to the call's upstream span too (_meta.traceparent).
  const about = withTrace({ taskId }, o);
  const pollMs = Math.min(
    Math.max(
      typeof task.pollInterval === "number" ? task.pollInterval : DEFAULT_POLL_MS,
      MIN_POLL_MS,
    ),
    MAX_POLL_MS,
  );
  let status = statusOf(task);
  const waker: Waker = {};
  const seen = (t: Record<string, unknown>) => {
    const next = statusOf(t);
    if (next === undefined) return;
    if (next !== status || typeof t.statusMessage === "string") {
      if (!isTerminalStatus(next)) {
        wish.onStatus?.(next, typeof t.statusMessage === "string" ? t.statusMessage : undefined);
      }
    }
    status = next;
    waker.wake?.();
  };
  const off = wire.onStatus(taskId, seen);
  try {
    while (status === "working") {
      await pause(pollMs, o.signal, waker);
      if (status !== "working") break;
      seen(await wire.request("tasks/get", about, o));
    }
    // Ended, or waiting for input: tasks/result answers once it ends, the questions before.
    return withoutRelatedTask(await wire.request("tasks/result", about, o));
  } catch (err) {
    if (o.signal?.aborted && status !== undefined && !isTerminalStatus(status)) {
      // Best effort: the caller has gone; the upstream stops the task if it can.
      const { signal: _gone, ...rest } = o;
      void wire.request("tasks/cancel", about, rest).catch(() => undefined);
    }
    throw err;
  } finally {
    off();
  }
}

function statusOf(task: Record<string, unknown>): UpstreamTaskStatus | undefined {
  const s = task.status;
  return s === "working" ||
    s === "input_required" ||
    s === "completed" ||
    s === "failed" ||
    s === "cancelled"
    ? s
    : undefined;
}

function isTerminalStatus(status: UpstreamTaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** The upstream's task id stays here: mcpx's own task (if any) names itself. */
function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta;
  if (!isRecord(meta) || !(RELATED_TASK in meta)) return result;
  const { [RELATED_TASK]: _related, ...rest } = meta;
  const { _meta: _old, ...plain } = result;
  return Object.keys(rest).length > 0 ? { ...plain, _meta: rest } : plain;
}

interface Waker {
  wake?: () => void;
}

/** Wait `ms`, or less when woken (a status notification); rejects when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined, waker: Waker): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
      waker.wake = undefined;
    };
    const done = () => {
      stop();
      resolve();
    };
    const aborted = () => {
      stop();
      reject(signal?.reason instanceof Error ? signal.reason : new Error("cancelled"));
    };
    const timer = setTimeout(done, ms);
    if (signal?.aborted) return aborted();
    signal?.addEventListener("abort", aborted, { once: true });
    waker.wake = done;
  });
}
