/**
 * Long-running calls for clients without MCP Tasks. A `call` that outlives `taskAfter` is
 * answered with a handle, `mcpx://tasks/<id>`, and keeps running; the model polls it with
 * `resources({ uri })` (or `call({ method: uri })`), which waits up to `taskAfter` more for the
 * result and answers it once there. Until the handle is sent, the client gets progress at least
 * every heartbeat (when it asked for progress), so its idle timer does not fire first.
 *
 * Handles are per caller (only the caller that started a call reads it), bounded in number, and
 * a finished result is kept `keepMs` after it landed. Timing runs on an injected clock.
 */
import { randomUUID } from "node:crypto";
import { systemClock, type Clock } from "../clock.js";
import { textResult, type ToolResult } from "../types.js";

export const TASK_URI_PREFIX = "mcpx://tasks/";

export interface TaskLimits {
  /** Handles a caller may hold at once; past it, a call just runs to its end. */
  maxPerCaller: number;
  /** How long a finished result stays readable, in ms. */
  keepMs: number;
  /** The longest gap between progress notifications while a client waits, in ms. */
  heartbeatMs: number;
}

export const DEFAULT_TASK_LIMITS: TaskLimits = {
  maxPerCaller: 32,
  keepMs: 15 * 60_000,
  heartbeatMs: 10_000,
};

/** Progress as a client is sent it. */
export type SendProgress = (p: { progress: number; total?: number; message?: string }) => void;

/** What `run` needs of one call. */
export interface TaskRun {
  caller: string;
  /** `server.tool` (or "script"), named in the handle's text. */
  source: string;
  /** Hand off after this many ms; 0: never. */
  afterMs: number;
  /** The client's request: aborting it cancels the call until the handle is sent, not after. */
  signal: AbortSignal;
  /**
   * `signal`'s controller where nothing but the client aborts it, and only before its answer
   * (server/plain-dispatch.ts `requestController`): the work runs on it, not on a controller of
   * its own forwarding the client's abort.
   */
  owner?: AbortController | undefined;
  /** The client's progress channel, when it asked for progress. */
  sendProgress?: SendProgress;
}

interface Task {
  id: string;
  source: string;
  startedAt: number;
  done: Promise<ToolResult>;
  result?: ToolResult;
  endedAt?: number;
}

export class CallTasks {
  private readonly byCaller = new Map<string, Map<string, Task>>();
  private readonly limits: TaskLimits;

  constructor(
    private readonly clock: Clock = systemClock,
    limits: Partial<TaskLimits> = {},
  ) {
    this.limits = { ...DEFAULT_TASK_LIMITS, ...limits };
  }

  /**
   * Run `work` with a signal and progress of its own: its result if it ends within `afterMs`,
   * else a handle to poll, the work going on. The signal's controller comes with it (the drain at
   * shutdown aborts through it: no second controller per call).
   */
  async run(
    task: TaskRun,
    work: (
      signal: AbortSignal,
      sendProgress: SendProgress | undefined,
      controller: AbortController,
    ) => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const owned = task.owner?.signal === task.signal ? task.owner : undefined;
    const abort = owned ?? new AbortController();
    const forward = owned ? undefined : () => abort.abort(task.signal.reason);
    if (forward) {
      if (task.signal.aborted) abort.abort(task.signal.reason);
      task.signal.addEventListener("abort", forward, { once: true });
    }
    const pacer = task.sendProgress && new Pacer(task.sendProgress, task.source, this.clock);
    const done = work(abort.signal, pacer && ((p) => pacer.forward(p)), abort);
    const room = task.afterMs > 0 && this.held(task.caller).size < this.limits.maxPerCaller;
    const waited = await this.wait(done, room ? task.afterMs : undefined, pacer, task.afterMs);
    if (waited !== undefined || !room) {
      if (forward) task.signal.removeEventListener("abort", forward);
      pacer?.stop();
      return waited ?? (await done);
    }
    // Handed off: the client's request ends here, the call does not (an owner's request is
    // answered now, and nothing aborts it after).
    if (forward) task.signal.removeEventListener("abort", forward);
    pacer?.stop();
    const id = randomUUID();
    const entry: Task = {
      id,
      source: task.source,
      startedAt: pacer?.startedAt ?? this.clock.now(),
      done,
    };
    this.held(task.caller).set(id, entry);
    void done.then((result) => {
      entry.result = result;
      entry.endedAt = this.clock.now();
      this.clock.setTimeout(() => this.held(task.caller).delete(id), this.limits.keepMs);
    });
    const uri = taskUri(id);
    return {
      content: [
        {
          type: "text",
          text: `${task.source} is still running after ${seconds(task.afterMs)}; it goes on without you waiting. Its result: resources({ uri: "${uri}" }) (waits up to ${seconds(task.afterMs)} more for it, then says it is still running).`,
        },
      ],
      _meta: { "mcpx/task": { uri, status: "working" } },
    };
  }

  /** The result of a handle of `caller`, waiting up to `waitMs` for it; or why there is none. */
  async poll(caller: string, uri: string, waitMs: number, sendProgress?: SendProgress) {
    const id = uri.slice(TASK_URI_PREFIX.length);
    const task = this.byCaller.get(caller)?.get(id);
    if (!task) {
      return textResult(
        `No task ${uri}: handles come from calls that outlived taskAfter, only their caller reads them, and a result is kept ${Math.round(this.limits.keepMs / 60_000)} min after it landed.`,
        true,
      );
    }
    if (task.result) return withTask(task.result, uri, "completed");
    const pacer = sendProgress && new Pacer(sendProgress, task.source, this.clock);
    const result = await this.wait(task.done, waitMs, pacer, waitMs);
    pacer?.stop();
    if (result) return withTask(result, uri, "completed");
    return {
      content: [
        {
          type: "text",
          text: `${task.source} is still running (${seconds(this.clock.now() - task.startedAt)} so far). Poll again: resources({ uri: "${uri}" }).`,
        },
      ],
      _meta: { "mcpx/task": { uri, status: "working" } },
    };
  }

  private held(caller: string): Map<string, Task> {
    let tasks = this.byCaller.get(caller);
    if (!tasks) this.byCaller.set(caller, (tasks = new Map<string, Task>()));
    return tasks;
  }

  /**
   * `done`'s result if it lands within `ms` (forever when undefined), with heartbeats meanwhile:
   * every `heartbeatMs`, or thrice within a shorter `afterMs`.
   */
  private wait(
    done: Promise<ToolResult>,
    ms: number | undefined,
    pacer: Pacer | undefined,
    afterMs: number,
  ): Promise<ToolResult | undefined> {
    const every =
      afterMs > 0 ? Math.min(this.limits.heartbeatMs, afterMs / 3) : this.limits.heartbeatMs;
    return new Promise((resolve) => {
      let deadline: unknown;
      let heartbeat: unknown;
      const finish = (value: ToolResult | undefined) => {
        if (deadline !== undefined) this.clock.clearTimeout(deadline);
        if (heartbeat !== undefined) this.clock.clearTimeout(heartbeat);
        resolve(value);
      };
      if (ms !== undefined) deadline = this.clock.setTimeout(() => finish(undefined), ms);
      if (pacer) {
        const beat = () => {
          pacer.beat();
          heartbeat = this.clock.setTimeout(beat, every);
        };
        heartbeat = this.clock.setTimeout(beat, every);
      }
      void done.then(finish, () => finish(textResult("The call failed unexpectedly.", true)));
    });
  }
}

/**
 * Progress toward one client request: the upstream's as it comes (only ever increasing, as the
 * spec requires), and between them a heartbeat a little above the last value.
 */
class Pacer {
  /** The last value sent; none yet: any first value goes (0 included). */
  private last: number | undefined;
  private stopped = false;
  readonly startedAt: number;

  constructor(
    private readonly send: SendProgress,
    private readonly source: string,
    private readonly clock: Clock,
  ) {
    this.startedAt = clock.now();
  }

  forward(p: { progress: number; total?: number; message?: string }): void {
    if (this.stopped || (this.last !== undefined && !(p.progress > this.last))) return;
    this.last = p.progress;
    this.send(p);
  }

  beat(): void {
    if (this.stopped) return;
    this.last = (this.last ?? 0) + 0.001;
    this.send({
      progress: this.last,
      message: `${this.source} still running (${seconds(this.clock.now() - this.startedAt)})`,
    });
  }

  stop(): void {
    this.stopped = true;
  }
}

export function taskUri(id: string): string {
  return `${TASK_URI_PREFIX}${id}`;
}

function withTask(result: ToolResult, uri: string, status: string): ToolResult {
  return { ...result, _meta: { ...result._meta, "mcpx/task": { uri, status } } };
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
