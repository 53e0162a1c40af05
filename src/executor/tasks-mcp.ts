/**
 * MCP Tasks that mcpx runs for a task-capable client (2025-11-25 `tasks/*`, and the 2026-07-28
 * tasks extension): a `call` the client asked to run as a task (or, under the extension, one that
 * outlived `taskAfter`) goes on after its request is answered, and the client reads it with
 * tasks/get, tasks/result, tasks/list and tasks/cancel. The protocol's wire shapes are the
 * server's (src/server/tasks.ts); this is the store behind them.
 *
 * Every task belongs to one owner (the client: its stdio connection or 2025-era session, else its
 * caller), and only that owner reaches it: another owner's id is answered as unknown. Ids are
 * random UUIDs, so one guessed across owners would not land either. Bounded per owner; a task is
 * dropped `ttl` after its creation, its work cancelled if still running. Timing runs on an
 * injected clock.
 */
import { randomUUID } from "node:crypto";
import { systemClock, type Clock } from "../clock.js";
import { isRecord } from "../json.js";
import type { ToolResult } from "../types.js";

export type McpTaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A task's state as both eras report it (the server renames `ttl`/`pollInterval` per era). */
export interface McpTask {
  taskId: string;
  status: McpTaskStatus;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt: string;
  /** How long after creation the task is kept, in ms. */
  ttlMs: number;
  pollIntervalMs: number;
  statusMessage?: string;
}

/** What a finished task answers: the call's result, or why there is none. */
export interface McpTaskOutcome {
  task: McpTask;
  result?: ToolResult;
  /** A JSON-RPC error message (the work itself threw: our bug, or the task was cancelled). */
  error?: string;
}

export interface McpTaskLimits {
  /** Tasks one owner may hold at once (running and kept). */
  maxPerOwner: number;
  /** The ttl of a task whose client named none, in ms. */
  defaultTtlMs: number;
  /** The longest ttl a client may ask for, in ms. */
  maxTtlMs: number;
  /** The polling interval suggested to clients, in ms. */
  pollIntervalMs: number;
}

export const DEFAULT_MCP_TASK_LIMITS: McpTaskLimits = {
  maxPerOwner: 32,
  defaultTtlMs: 15 * 60_000,
  maxTtlMs: 60 * 60_000,
  pollIntervalMs: 1_000,
};

/** The terminal statuses: a task in one never changes again. */
export function isTerminal(status: McpTaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

interface Entry {
  task: McpTask;
  abort: AbortController;
  ended: Promise<void>;
  result?: ToolResult;
  error?: string;
  expiry: unknown;
}

/** What a task's work may tell its task while it runs (an upstream task's statuses). */
export interface McpTaskProgress {
  /** The task's ttl, in ms (an upstream task asked for the same). */
  ttlMs: number;
  /** A status before the end: the task shows it (and its client hears it) until the next. */
  update: (status: "working" | "input_required", message?: string) => void;
}

/** Started work: a task's first state, or why none was made. */
export type McpTaskStart = { task: McpTask } | { refused: string };

export class McpTasks {
  private readonly byOwner = new Map<string, Map<string, Entry>>();
  private readonly limits: McpTaskLimits;

  constructor(
    private readonly clock: Clock = systemClock,
    limits: Partial<McpTaskLimits> = {},
  ) {
    this.limits = { ...DEFAULT_MCP_TASK_LIMITS, ...limits };
  }

  /**
   * Start `work` as a task of `owner`, kept `ttlMs` (the client's wish, held within the
   * limits). `onStatus` hears every change of status after the first.
   */
  start(
    owner: string,
    work: (signal: AbortSignal, progress: McpTaskProgress) => Promise<ToolResult>,
    options: {
      ttlMs?: number;
      /** A result with `isError` fails the task (2025-11-25); else it completes it (2026-07-28). */
      isErrorFails?: boolean;
      onStatus?: (task: McpTask) => void;
    } = {},
  ): McpTaskStart {
    const held = this.held(owner);
    if (held.size >= this.limits.maxPerOwner) {
      return {
        refused: `mcpx holds ${this.limits.maxPerOwner} tasks of this client already: read or cancel some (tasks/list), or call without a task.`,
      };
    }
    const ttlMs = Math.min(
      Math.max(options.ttlMs ?? this.limits.defaultTtlMs, 1_000),
      this.limits.maxTtlMs,
    );
    const now = this.iso();
    const task: McpTask = {
      taskId: randomUUID(),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: this.limits.pollIntervalMs,
    };
    const abort = new AbortController();
    const entry: Entry = { task, abort, ended: Promise.resolve(), expiry: undefined };
    const settle = (status: McpTaskStatus, patch: Partial<Entry>, message?: string) => {
      // Cancelled stays cancelled, whatever the work did after (the spec's rule).
      if (isTerminal(entry.task.status)) return;
      Object.assign(entry, patch);
      // A message of a status before (an upstream task's) does not describe the end.
      const { statusMessage: _before, ...was } = entry.task;
      entry.task = {
        ...was,
        status,
        lastUpdatedAt: this.iso(),
        ...(message !== undefined && { statusMessage: message }),
      };
      options.onStatus?.(entry.task);
    };
    const update = (status: "working" | "input_required", message?: string) => {
      const was = entry.task;
      if (isTerminal(was.status)) return;
      if (was.status === status && was.statusMessage === message) return;
      const { statusMessage: _old, ...rest } = was;
      entry.task = {
        ...rest,
        status,
        lastUpdatedAt: this.iso(),
        // An upstream's words: bounded as a failure's text is.
        ...(message !== undefined && { statusMessage: message.slice(0, 500) }),
      };
      options.onStatus?.(entry.task);
    };
    entry.ended = work(abort.signal, { ttlMs, update }).then(
      (result) => {
        const failed = result.isError === true && options.isErrorFails === true;
        settle(failed ? "failed" : "completed", { result }, failed ? firstText(result) : undefined);
      },
      (err: unknown) => settle("failed", { error: String(err) }, "The call failed unexpectedly."),
    );
    entry.expiry = this.clock.setTimeout(() => {
      abort.abort(new Error("task expired"));
      held.delete(task.taskId);
    }, ttlMs);
    held.set(task.taskId, entry);
    // Cancellation settles the entry itself (see cancel); the work's end is then ignored.
    abort.signal.addEventListener("abort", () => settle("cancelled", {}, "Cancelled."), {
      once: true,
    });
    return { task };
  }

  /** The task's state, if `owner` holds it. */
  get(owner: string, taskId: string): McpTask | undefined {
    return this.byOwner.get(owner)?.get(taskId)?.task;
  }

  /** The tasks `owner` holds, oldest first. */
  list(owner: string): McpTask[] {
    return [...(this.byOwner.get(owner)?.values() ?? [])].map((e) => e.task);
  }

  /**
   * The outcome once the task is terminal (waiting for it, or until `signal` aborts); undefined
   * when `owner` holds no such task.
   */
  async outcome(
    owner: string,
    taskId: string,
    signal?: AbortSignal,
  ): Promise<McpTaskOutcome | undefined> {
    const entry = this.byOwner.get(owner)?.get(taskId);
    if (!entry) return undefined;
    if (!isTerminal(entry.task.status)) {
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        signal?.addEventListener("abort", done, { once: true });
        // Cancellation ends the wait too: it settles the entry before the work notices.
        entry.abort.signal.addEventListener("abort", done, { once: true });
        void entry.ended.then(() => {
          signal?.removeEventListener("abort", done);
          done();
        });
      });
    }
    return {
      task: entry.task,
      ...(entry.result && { result: entry.result }),
      ...(entry.error !== undefined && { error: entry.error }),
      ...(entry.task.status === "cancelled" && { error: "The task was cancelled." }),
    };
  }

  /** The outcome if the task ends within `ms`, else undefined (it goes on). */
  async within(owner: string, taskId: string, ms: number): Promise<McpTaskOutcome | undefined> {
    const waited = new AbortController();
    const timer = this.clock.setTimeout(() => waited.abort(), ms);
    try {
      const outcome = await this.outcome(owner, taskId, waited.signal);
      return outcome && isTerminal(outcome.task.status) ? outcome : undefined;
    } finally {
      this.clock.clearTimeout(timer);
    }
  }

  /** Forget a task of `owner` (one answered before it was shown to its client). */
  forget(owner: string, taskId: string): void {
    const held = this.byOwner.get(owner);
    const entry = held?.get(taskId);
    if (!entry) return;
    this.clock.clearTimeout(entry.expiry);
    held?.delete(taskId);
  }

  /** Cancel a running task of `owner`: its state after, "terminal" if it had ended, or undefined. */
  cancel(owner: string, taskId: string): McpTask | "terminal" | undefined {
    const entry = this.byOwner.get(owner)?.get(taskId);
    if (!entry) return undefined;
    if (isTerminal(entry.task.status)) return "terminal";
    entry.abort.abort(new Error("task cancelled"));
    return entry.task;
  }

  /** Cancel every task and forget them (shutdown). */
  close(): void {
    for (const held of this.byOwner.values()) {
      for (const entry of held.values()) {
        this.clock.clearTimeout(entry.expiry);
        entry.abort.abort(new Error("mcpx is shutting down"));
      }
    }
    this.byOwner.clear();
  }

  private held(owner: string): Map<string, Entry> {
    let held = this.byOwner.get(owner);
    if (!held) this.byOwner.set(owner, (held = new Map<string, Entry>()));
    return held;
  }

  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

function firstText(result: ToolResult): string | undefined {
  const first: unknown = result.content[0];
  return isRecord(first) && typeof first.text === "string" ? first.text.slice(0, 500) : undefined;
}
