/**
 * `select` off the main thread. A JMESPath expression is tiny but its cost is not: 185
 * characters of `@ | [@,@] | [@,@] …` make a value whose text doubles 23 times. Evaluated on the
 * main thread, that blocked every caller for most of a minute and ended in a heap crash; here it
 * runs in a small worker thread with its own heap limit and a wall-time budget, and its value's
 * size is measured before it is encoded. Past a limit the worker is ended and replaced, and the
 * caller is told which limit and what to do.
 */
import type { Worker } from "node:worker_threads";
import { FairQueue } from "../fair-queue.js";
import { LIMITS, megabytes } from "../limits.js";
import type { Logger } from "../logger.js";
import { MissedStarts, startWorker, WORKER_START_MS, workerEntry } from "../worker-entry.js";

/** A select's outcome: its value as text (a string as itself, else JSON), or why there is none. */
export type Selection = { text: string; nothing: boolean } | { error: string };

/** One select for a worker. */
export interface ToSelectWorker {
  id: number;
  value: unknown;
  expression: string;
  /** The least a value may be as JSON (characters); the source's own size counts if larger. */
  floorChars: number;
}

/** A worker's answer: loaded, a value, an error of the expression, or a value too large. */
export type FromSelectWorker =
  | { ready: true }
  | { id: number; text: string; nothing: boolean }
  | { id: number; error: string }
  | { id: number; tooLarge: number; max: number };

export interface SelectorOptions {
  /** Wall time one select may take in its worker (ms). Default: LIMITS.selectMs. */
  timeMs?: number;
  /** The worker's V8 heap (MB). Default: 256. */
  heapMb?: number;
  /** Selects evaluated at once; more wait in line, round robin over callers. Default: 2. */
  maxWorkers?: number;
  /** An idle worker beyond the first ends after this long (ms). Default: 30,000. */
  idleMs?: number;
  /**
   * How long a new worker has to say it is ready (ms). One that has not is ended and another
   * started; after two such misses in a row (no worker ready in between) the select waiting fails
   * naming the wait, and so does the next one's first miss until a worker starts. Default: 15,000.
   */
  startMs?: number;
  /** Where a worker that missed its start is told (none: not told). */
  logger?: Logger;
}

interface Job {
  caller: string;
  message: Omit<ToSelectWorker, "id">;
  resolve(selection: Selection): void;
}

interface SelectWorker {
  worker: Worker;
  ready: boolean;
  job: { id: number; job: Job } | undefined;
  timer: NodeJS.Timeout | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** Until it is ready: ends a worker that takes longer than startMs to load. */
  startTimer: NodeJS.Timeout | undefined;
}

/** Evaluates `select` expressions in worker threads. One per executor; closed at shutdown. */
export class Selector {
  private readonly timeMs: number;
  private readonly heapMb: number;
  private readonly maxWorkers: number;
  private readonly idleMs: number;
  private readonly startMs: number;
  private readonly missed = new MissedStarts();
  private readonly logger: Logger | undefined;
  private readonly workers = new Set<SelectWorker>();
  private readonly queue = new FairQueue<Job>();
  private nextId = 1;
  private closed = false;

  constructor(options: SelectorOptions = {}) {
    this.timeMs = options.timeMs ?? LIMITS.selectMs;
    this.heapMb = options.heapMb ?? 256;
    this.maxWorkers = options.maxWorkers ?? 2;
    this.idleMs = options.idleMs ?? 30_000;
    this.startMs = options.startMs ?? WORKER_START_MS;
    this.logger = options.logger;
  }

  /** `expression` applied to `value` for `caller` (whose turn in line comes round robin). */
  apply(value: unknown, expression: string, caller = "default"): Promise<Selection> {
    if (this.closed) return Promise.resolve({ error: "mcpx is shutting down" });
    return new Promise((resolve) => {
      const message = { value, expression, floorChars: LIMITS.selectChars };
      this.queue.push(caller, { caller, message, resolve });
      this.dispatch();
    });
  }

  /** Ends every worker; selects still running or waiting answer that mcpx is shutting down. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.resolve({ error: "mcpx is shutting down" });
    const all = [...this.workers];
    for (const w of all) this.finish(w, { error: "mcpx is shutting down" });
    await Promise.all(all.map((w) => w.worker.terminate()));
  }

  private dispatch(): void {
    for (const w of this.workers) {
      if (!w.ready || w.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      this.assign(w, job);
    }
    const starting = [...this.workers].filter((w) => !w.ready).length;
    const wanted = Math.min(this.queue.count() - starting, this.maxWorkers - this.workers.size);
    for (let i = 0; i < wanted; i++) this.spawn();
  }

  private spawn(): void {
    const entry = workerEntry(import.meta.url, "select-worker");
    const worker = startWorker(entry.filename, {
      eval: entry.eval,
      env: {},
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    const w: SelectWorker = {
      worker,
      ready: false,
      job: undefined,
      timer: undefined,
      idleTimer: undefined,
      startTimer: setTimeout(() => {
        if (this.closed) return;
        const reason = `the worker evaluating it did not start within ${this.startMs} ms; running it again may work`;
        const retry = this.missed.miss();
        const next = retry ? "starting another" : "failing the select that waits for it";
        this.logger?.warn(`a select worker did not start within ${this.startMs} ms; ${next}`);
        this.lost(w, reason, retry);
        void worker.terminate();
      }, this.startMs).unref(),
    };
    worker.on("message", (msg: FromSelectWorker) => this.onMessage(w, msg));
    worker.on("error", (err: Error & { code?: string }) => {
      const memory = err.code === "ERR_WORKER_OUT_OF_MEMORY";
      this.lost(
        w,
        memory
          ? `it needed more than the ${this.heapMb} MB of memory a select may use, and was stopped. An expression that repeats its data (such as [@, @] applied again and again) grows exponentially`
          : `the worker evaluating it failed (${err.message}); running it again may work`,
      );
    });
    worker.on("exit", (code) => this.lost(w, `the worker evaluating it stopped (code ${code})`));
    this.workers.add(w);
  }

  private onMessage(w: SelectWorker, msg: FromSelectWorker): void {
    // A worker already ended (one that missed its start) may still be heard from: not counted.
    if (!this.workers.has(w)) return;
    if ("ready" in msg) {
      w.ready = true;
      clearTimeout(w.startTimer);
      this.missed.started();
      return this.dispatch();
    }
    if (w.job?.id !== msg.id) return;
    if ("text" in msg) this.finish(w, { text: msg.text, nothing: msg.nothing });
    else if ("error" in msg) this.finish(w, { error: msg.error });
    else {
      this.finish(w, {
        error: `its value would be ${size(msg.tooLarge)} as JSON, more than the ${size(msg.max)} a select may make (the larger of ${megabytes(LIMITS.selectChars)} and the result itself). An expression that repeats its data (such as [@, @]) multiplies its size`,
      });
    }
    this.idle(w);
    this.dispatch();
  }

  private assign(w: SelectWorker, job: Job): void {
    clearTimeout(w.idleTimer);
    const id = this.nextId++;
    w.job = { id, job };
    w.worker.ref();
    w.timer = setTimeout(() => {
      this.finish(w, {
        error: `it ran longer than ${this.timeMs} ms, the most mcpx gives one select, and was stopped. Select less at a time, or call without select and page through the result`,
      });
      this.lost(w, "");
      void w.worker.terminate();
    }, this.timeMs);
    try {
      w.worker.postMessage({ id, ...job.message } satisfies ToSelectWorker);
    } catch (err) {
      // A value the structured clone cannot copy: tool results are JSON, so this is our bug.
      this.finish(w, { error: `its input could not reach the select worker (${String(err)})` });
      this.idle(w);
    }
  }

  /** Answers the worker's job, if it has one. */
  private finish(w: SelectWorker, selection: Selection): void {
    clearTimeout(w.timer);
    const current = w.job;
    w.job = undefined;
    current?.job.resolve(selection);
  }

  /**
   * The worker is gone (or being ended): its job, if still out, fails with `reason`. With
   * `retry`, a worker that never started is replaced without failing the select waiting for it.
   */
  private lost(w: SelectWorker, reason: string, retry = false): void {
    if (!this.workers.delete(w)) return;
    clearTimeout(w.idleTimer);
    clearTimeout(w.startTimer);
    this.finish(w, { error: reason });
    if (this.closed) return;
    // A worker that cannot even start fails the select that waited for it, so a broken install
    // answers every select with its reason instead of respawning forever.
    if (!w.ready && !retry) this.queue.shift()?.resolve({ error: reason });
    this.dispatch();
  }

  /** Idle: the thread no longer holds the process open, and ends if another idle one remains. */
  private idle(w: SelectWorker): void {
    w.worker.unref();
    clearTimeout(w.idleTimer);
    w.idleTimer = setTimeout(() => {
      const idle = [...this.workers].filter((x) => x.ready && !x.job);
      if (!w.job && idle.length > 1) {
        this.lost(w, "");
        void w.worker.terminate();
      }
    }, this.idleMs);
    w.idleTimer.unref();
  }
}

/** A size in MB, whole above 10 MB: `472 MB`, `4 MB`, `1.5 MB`. */
function size(bytes: number): string {
  const mib = 1024 * 1024;
  return megabytes(bytes >= 10 * mib ? Math.round(bytes / mib) * mib : bytes);
}
