/**
 * A tool call run as a task on an upstream that runs tasks, in either era:
 *
 * - 2025-11-25 (the `tasks` capability with `requests.tools.call`, and the tool's
 *   `execution.taskSupport`): mcpx sends the task-augmented tools/call, follows the task
 *   (tasks/get every poll interval, sooner when the upstream's notifications/tasks/status
 *   arrives), takes its result with tasks/result once it ends or waits for input (the upstream's
 *   questions come over that request).
 * - 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks` in the upstream's discover
 *   capabilities): mcpx declares the extension in the call's own capabilities and the upstream
 *   decides whether to answer with a task (`resultType: "task"`, caught before the SDK's decoder
 *   by wire.ts). mcpx follows it with tasks/get, which inlines the result or error once the task
 *   ends; a task waiting for input lists its questions there (`inputRequests`), which the call's
 *   client answers (or they are refused), sent back by tasks/update.
 *
 * Both cancel upstream (tasks/cancel) when the caller gives up, also when it gives up while the
 * task's creation is on its way back: the request that may create a task is cancelled only
 * `TASK_ANSWER_LINGER_MS` after the caller left (see `lingering`), so a task answered meanwhile is
 * cancelled, not left running with nobody to cancel it (`notifications/cancelled` never cancels a
 * task; over 2026-07-28 HTTP the cancelled request's stream closes, and its answer with it). That
 * tasks/cancel outlives its caller too: the session's close waits a while for it (`Leftovers`).
 * Each request is short, so a long task is bounded by its ttl, not by the server's request
 * timeout; each has a span of its own under the call's upstream span when traces are on
 * (`UpstreamTaskWish.trace`).
 *
 * The upstream's task id never leaves this file: the caller sees the call's result, and
 * statuses through `onStatus` (mcpx's own task, or the handle, carries them to the client).
 */
import { settledWithin, systemClock, type Clock } from "../clock.js";
import { isRecord } from "../json.js";
import type { Era } from "../types.js";
import type { RequestOptions, UpstreamTaskStatus, UpstreamTaskWish } from "./types.js";
import { CAUGHT_TASK, withTrace } from "./wire.js";

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/**
 * How long a request that may create a task stays open after its caller left: a server answers
 * with its task at once, so this bounds only what a plain answer keeps running upstream.
 */
export const TASK_ANSWER_LINGER_MS = 2_000;

/**
 * Options for a request that may create a task: its signal aborts `lingerMs` after `o.signal`
 * does (at once when it already has). If the task's creation arrives meanwhile, following it with
 * the aborted `o.signal` cancels it upstream (followTask). `done()` when the request settled.
 */
export function lingering(
  o: RequestOptions,
  lingerMs = TASK_ANSWER_LINGER_MS,
  clock: Clock = systemClock,
): { options: RequestOptions; done: () => void } {
  const caller = o.signal;
  if (!caller || caller.aborted) return { options: o, done: () => undefined };
  const controller = new AbortController();
  let timer: unknown;
  const left = () => {
    timer = clock.setTimeout(() => controller.abort(caller.reason), lingerMs);
  };
  caller.addEventListener("abort", left, { once: true });
  return {
    options: { ...o, signal: controller.signal },
    done: () => {
      caller.removeEventListener("abort", left);
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}

/** `request` sent with {@link lingering} options: it outlives its caller a little. */
export async function lingered<T>(
  o: RequestOptions,
  request: (options: RequestOptions) => Promise<T>,
): Promise<T> {
  const creating = lingering(o);
  try {
    return await request(creating.options);
  } finally {
    creating.done();
  }
}

/** How long closing a session waits for requests that outlived their caller. */
export const LEFTOVER_SETTLE_MS = 2_000;
/** The longest a best-effort tasks/cancel is waited for, whatever the call's timeout. */
const CANCEL_TIMEOUT_MS = 10_000;

/** A session's requests that outlived their caller (tasks/cancel), until they settle. */
export class Leftovers {
  private readonly pending = new Set<Promise<void>>();

  add(request: Promise<unknown>): void {
    const settled = request.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
  }

  /** Wait for them, at most `ms`: the session closes after. */
  async settle(ms = LEFTOVER_SETTLE_MS): Promise<void> {
    if (this.pending.size > 0) await settledWithin(Promise.all(this.pending), ms);
  }
}
/** The 2026-07-28 tasks extension's identifier. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** Poll bounds, whatever interval the upstream suggests. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5_000;
const DEFAULT_POLL_MS = 1_000;

/** What following a task needs of a session's SDK client. */
export interface TaskWire {
  era: Era;
  request(
    method: string,
    params: Record<string, unknown>,
    o: RequestOptions,
  ): Promise<Record<string, unknown>>;
  /** Hear the upstream's notifications/tasks/status for `taskId` until the returned function. */
  onStatus(taskId: string, fn: (task: Record<string, unknown>) => void): () => void;
  /** 2026-07-28: the `inputResponses` to a task's `inputRequests` (its call's client's). */
  answer(requests: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** A request sent after its caller left (tasks/cancel): the session's close waits for it. */
  outlive(request: Promise<unknown>): void;
}

/** Whether an upstream's declared capabilities let tools/call run as a task (2025-11-25). */
export function runsToolTasks(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks;
  const requests = isRecord(tasks) ? tasks.requests : undefined;
  const tools = isRecord(requests) ? requests.tools : undefined;
  return isRecord(tools) && isRecord(tools.call);
}

/** Whether a modern upstream declared the 2026-07-28 tasks extension in server/discover. */
export function declaresTaskExtension(capabilities: Record<string, unknown>): boolean {
  const extensions = capabilities.extensions;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
}

/** Client capabilities with the tasks extension declared beside any others. */
export function withTaskExtension(capabilities: Record<string, unknown>): Record<string, unknown> {
  const extensions = isRecord(capabilities.extensions) ? capabilities.extensions : {};
  return { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
}

/** The 2026-07-28 task a tools/call was answered with (caught by wire.ts), if it was. */
export function caughtTask(result: Record<string, unknown>): Record<string, unknown> | undefined {
  const task = result[CAUGHT_TASK];
  return isRecord(task) && typeof task.taskId === "string" ? task : undefined;
}

/** A task-augmented tools/call (2025-11-25) followed to its end; the call's result. */
export async function callAsTask(
  wire: TaskWire,
  params: Record<string, unknown>,
  o: RequestOptions,
): Promise<Record<string, unknown>> {
  const wish: Partial<UpstreamTaskWish> = o.task ?? {};
  const created = await lingered(o, (options) =>
    wire.request(
      "tools/call",
      { ...params, task: wish.ttlMs !== undefined ? { ttl: wish.ttlMs } : {} },
      options,
    ),
  );
  const task = created.task;
  // A server may answer a task-augmented request at once, as a plain call (dropped when its
  // caller has left meanwhile, as the SDK drops it).
  if (!isRecord(task) || typeof task.taskId !== "string") {
    o.signal?.throwIfAborted();
    return created;
  }
  return followTask(wire, task, o);
}

/**
 * Follow an upstream task (a 2025 CreateTaskResult's `task`, or a 2026 CreateTaskResult) to its
 * end: the call's result, as a plain call's; rejects with the task's error, or when `o.signal`
 * aborts (after a best-effort tasks/cancel upstream).
 */
export async function followTask(
  wire: TaskWire,
  task: Record<string, unknown>,
  o: RequestOptions,
): Promise<Record<string, unknown>> {
  const wish: Partial<UpstreamTaskWish> = o.task ?? {};
  const taskId = String(task.taskId);
  const modern = wire.era === "modern";
  /** One follow-up request, in a span of its own when traces are on. */
  const send = async (method: string, extra: Record<string, unknown>, ro: RequestOptions) => {
    const span = wish.trace?.(method);
    const traced = span ? { ...ro, traceparent: span.traceparent } : ro;
    try {
      const answer = await wire.request(method, withTrace({ taskId, ...extra }, traced), traced);
      span?.end("ok");
      return answer;
    } catch (err) {
      span?.end(ro.signal?.aborted ? "cancelled" : "failed");
      throw err;
    }
  };
  let pollMs = pollInterval(task, DEFAULT_POLL_MS);
  let status = statusOf(task);
  // 2026: the last tasks/get answer (a terminal one inlines the result or error).
  let latest: Record<string, unknown> | undefined;
  const answered = new Set<string>();
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
    pollMs = pollInterval(t, pollMs);
    waker.wake?.();
  };
  const off = wire.onStatus(taskId, seen);
  try {
    if (!modern) {
      while (status === "working") {
        await pause(pollMs, o.signal, waker);
        if (status !== "working") break;
        seen(await send("tasks/get", {}, o));
      }
      // Ended, or waiting for input: tasks/result answers once it ends, the questions before.
      return withoutRelatedTask(await send("tasks/result", {}, o));
    }
    // 2026-07-28: only a tasks/get answer carries the outcome, so even a task created ended is
    // asked once.
    for (;;) {
      if (latest === undefined || status === "working") {
        if (latest !== undefined) await pause(pollMs, o.signal, waker);
        latest = await send("tasks/get", {}, o);
        seen(latest);
        continue;
      }
      if (status === "input_required") {
        const asked = isRecord(latest.inputRequests) ? latest.inputRequests : {};
        const fresh = Object.fromEntries(Object.entries(asked).filter(([k]) => !answered.has(k)));
        if (Object.keys(fresh).length > 0) {
          const inputResponses = await wire.answer(fresh);
          await send("tasks/update", { inputResponses }, o);
          for (const key of Object.keys(fresh)) answered.add(key);
        } else {
          await pause(pollMs, o.signal, waker);
        }
        latest = await send("tasks/get", {}, o);
        seen(latest);
        continue;
      }
      return outcomeOf(latest, status);
    }
  } catch (err) {
    // A task without a status we know is not known to have ended either.
    if (status === undefined || !isTerminalStatus(status)) {
      // Best effort: the caller has gone (or the call failed here); the upstream stops the task
      // if it can.
      const { signal: _gone, ...rest } = o;
      const timeoutMs = Math.min(rest.timeoutMs, CANCEL_TIMEOUT_MS);
      wire.outlive(send("tasks/cancel", {}, { ...rest, timeoutMs }));
    }
    throw err;
  } finally {
    off();
  }
}

/** A 2026 task's end: its inlined result, else its error. */
function outcomeOf(
  latest: Record<string, unknown>,
  status: UpstreamTaskStatus | undefined,
): Record<string, unknown> {
  if (status === "completed" && isRecord(latest.result)) return withoutRelatedTask(latest.result);
  if (status === "failed") {
    const error = isRecord(latest.error) ? latest.error : {};
    const message = typeof error.message === "string" ? error.message : "no error given";
    throw new Error(`the upstream's task failed: ${message}`);
  }
  if (status === "cancelled") throw new Error("the upstream cancelled its task");
  throw new Error(`the upstream's task ended (${String(status)}) without a result`);
}

function pollInterval(task: Record<string, unknown>, fallback: number): number {
  // 2025-11-25 names it pollInterval, the 2026-07-28 extension pollIntervalMs.
  const asked = typeof task.pollIntervalMs === "number" ? task.pollIntervalMs : task.pollInterval;
  return Math.min(Math.max(typeof asked === "number" ? asked : fallback, MIN_POLL_MS), MAX_POLL_MS);
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
