/**
 * The sandbox: a bounded pool of engine worker threads, each running one script at a time in a
 * fresh QuickJS instance. The main thread only routes messages and inner calls, so a script that
 * spins, allocates or recurses never delays anyone else's calls; a worker that stops answering
 * is terminated from here and replaced.
 */
import os from "node:os";
import type { Worker } from "node:worker_threads";
import { FairQueue } from "../fair-queue.js";
import type { Logger } from "../logger.js";
import { MissedStarts, startWorker, WORKER_START_MS, workerEntry } from "../worker-entry.js";
import { DEFAULT_CALL_BYTES, resolveLimits, type CallBytes } from "./limits.js";
import { busyError, internalError, notStartedError } from "./messages.js";
import type { FromWorker, ToWorker, WorkerInit } from "./protocol.js";
import { ScriptRun } from "./run.js";
import type { RunOptions, ScriptError, ScriptOutcome } from "./types.js";

/** How the pool is sized and how it treats its workers. */
export interface SandboxOptions {
  /**
   * Scripts running at once; more wait in line, round robin over callers (see `perCaller`).
   * Default: the cores, from 2 to 4.
   */
  maxWorkers?: number;
  /**
   * What one caller (RunOptions.caller) may hold: scripts `running` (default: maxWorkers - 1,
   * at least 1, so one caller's loops never take every worker) and `queued` waiting for a
   * worker (default 16; the next one is refused at once, kind "busy"). Scripts without a caller
   * are each their own caller.
   */
  perCaller?: { running?: number; queued?: number };
  /** A worker idle this long ends (one is kept warm). Default: 30,000 ms. */
  idleMs?: number;
  /**
   * How long a stopped script's worker has to confirm it let go, before it is terminated (and a
   * script past its wall time to report it, before the host answers for it). Default: 1,000 ms.
   */
  graceMs?: number;
  /**
   * How long a new worker has to load its engine and say it is ready (ms). One that has not is
   * terminated and another started; after two such misses in a row (no worker ready in between,
   * whichever scripts they were for) the script waiting fails saying so, instead of waiting for
   * ever, and so does the next one's first miss until a worker starts. Default: 15,000 ms.
   */
  startMs?: number;
  /** Where the workers' own stdout/stderr lines go (WebAssembly aborts print there). */
  logger?: Logger;
  /** What inner calls may carry. Default: DEFAULT_CALL_BYTES (1 MiB a call, 8 MiB at once). */
  callBytes?: Partial<CallBytes>;
}

/** Runs scripts. One per proxy, made by the composition root and closed at shutdown. */
export interface Sandbox {
  /**
   * Runs `script` (JavaScript, or TypeScript whose types are stripped) as the body of an async
   * function whose scope holds `servers` (see RunOptions.servers) and `console`. Never rejects:
   * every failure is an outcome with `ok: false`. Options that are bugs of the caller (a bad
   * limit) throw a RangeError synchronously.
   */
  run(script: string, options: RunOptions): Promise<ScriptOutcome>;
  /** Cancels every script (answering `cancelled`), ends every worker and waits for them to exit. */
  close(): Promise<void>;
  /** Workers alive, scripts running, scripts waiting for a worker. */
  stats(): { workers: number; busy: number; queued: number };
}

/**
 * The worker thread's stack (address space; only pages in use take memory). QuickJS counts its
 * stack in WebAssembly memory, but its frames also take V8 stack: in the parser up to ~32 bytes
 * for every byte QuickJS counts. 40 × the largest `stackBytes` (4 MiB) keeps QuickJS's own check,
 * a catchable `stack overflow` error, first; should V8's stack still run out, the worker
 * catches that and reports the same limit.
 */
const THREAD_STACK_MB = 160;
/** The worker's own V8 heap: messages, logs, the result's text. Script data lives in WebAssembly. */
const THREAD_HEAP_MB = 256;

interface EngineWorker {
  worker: Worker;
  stop: Int32Array;
  ready: boolean;
  run: ScriptRun | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  graceTimer: NodeJS.Timeout | undefined;
  /** Until it is ready: ends a worker that takes longer than startMs to load. */
  startTimer: NodeJS.Timeout | undefined;
  exited: Promise<void>;
}

/** Creates a sandbox. Workers start on demand; nothing runs until the first script. */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const maxWorkers = options.maxWorkers ?? Math.min(4, Math.max(2, os.availableParallelism()));
  const idleMs = options.idleMs ?? 30_000;
  const graceMs = options.graceMs ?? 1_000;
  const startMs = options.startMs ?? WORKER_START_MS;
  const callBytes: CallBytes = { ...DEFAULT_CALL_BYTES, ...options.callBytes };
  const perRunning = options.perCaller?.running ?? Math.max(1, maxWorkers - 1);
  const perQueued = options.perCaller?.queued ?? 16;
  const workers = new Set<EngineWorker>();
  const queue = new FairQueue<ScriptRun>();
  const live = (run: ScriptRun) => !run.done;
  let nextId = 1;
  let closed = false;
  const missed = new MissedStarts();

  function spawn(): EngineWorker {
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const entry = workerEntry(import.meta.url, "worker");
    const worker = startWorker(entry.filename, {
      eval: entry.eval,
      workerData: { stop } satisfies WorkerInit,
      // The thread gets no environment (no secret can be read there) and no inherited flags.
      env: {},
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: { stackSizeMb: THREAD_STACK_MB, maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    const w: EngineWorker = {
      worker,
      stop,
      ready: false,
      run: undefined,
      idleTimer: undefined,
      graceTimer: undefined,
      startTimer: setTimeout(() => {
        if (closed) return;
        const retry = missed.miss();
        const next = retry ? "starting another" : "failing the script that waits for it";
        options.logger?.warn(`a worker thread did not start within ${startMs} ms; ${next}`);
        kill(w, notStartedError(startMs), retry);
      }, startMs).unref(),
      exited: new Promise((resolve) => worker.once("exit", () => resolve())),
    };
    for (const stream of [worker.stdout, worker.stderr]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) =>
        options.logger?.warn(`sandbox worker: ${chunk.trimEnd()}`),
      );
    }
    worker.on("message", (msg: FromWorker) => onMessage(w, msg));
    worker.on("error", (err) => lost(w, `worker error: ${err.message}`));
    worker.on("exit", (code) => lost(w, `worker exited with code ${code}`));
    workers.add(w);
    return w;
  }

  function onMessage(w: EngineWorker, msg: FromWorker): void {
    // A worker already ended (one that missed its start) may still be heard from: not counted.
    if (!workers.has(w)) return;
    if (msg.type === "ready") {
      w.ready = true;
      clearTimeout(w.startTimer);
      missed.started();
      return dispatch();
    }
    const run = w.run;
    if (!run || run.id !== msg.id) return;
    run.receive(msg);
    if (msg.type === "done") {
      release(w);
      dispatch();
    }
  }

  /**
   * The worker is gone (crashed, or terminated): its script fails, and it leaves the pool. With
   * `retry`, a worker that never started is replaced without failing the script waiting for it.
   */
  function lost(w: EngineWorker, reason: string | ScriptError, retry = false): void {
    if (!workers.delete(w)) return;
    clearTimeout(w.idleTimer);
    clearTimeout(w.graceTimer);
    clearTimeout(w.startTimer);
    const error = typeof reason === "string" ? internalError(reason) : reason;
    w.run?.fail(error);
    w.run = undefined;
    if (closed) return;
    // A worker that cannot even start fails the script that waited for it, so a broken
    // install answers every script with its reason instead of respawning forever.
    if (!w.ready && !retry) queue.shift(undefined, live)?.fail(error);
    dispatch();
  }

  function kill(
    w: EngineWorker,
    reason: string | ScriptError = "worker terminated",
    retry = false,
  ): void {
    lost(w, reason, retry);
    void w.worker.terminate();
  }

  function release(w: EngineWorker): void {
    clearTimeout(w.graceTimer);
    w.run = undefined;
    w.worker.unref();
    clearTimeout(w.idleTimer);
    w.idleTimer = setTimeout(() => {
      const idle = [...workers].filter((x) => x.ready && !x.run);
      if (!w.run && idle.length > 1) kill(w);
    }, idleMs);
    w.idleTimer.unref();
  }

  function assign(w: EngineWorker, run: ScriptRun): void {
    clearTimeout(w.idleTimer);
    w.run = run;
    w.worker.ref();
    run.start({
      flag: (value) => Atomics.store(w.stop, 0, value),
      post: (msg: ToWorker) => w.worker.postMessage(msg),
      kill: () => kill(w),
    });
    // Answered (cancelled, or past a limit the host enforces) while the worker still holds the
    // script: it gets graceMs to confirm with `done`, else it is terminated and replaced.
    void run.answer.then(() => {
      if (w.run !== run) return;
      w.graceTimer = setTimeout(() => {
        if (w.run === run) kill(w);
      }, graceMs);
    });
  }

  function running(caller: string): number {
    let n = 0;
    for (const w of workers) if (w.run?.caller === caller) n += 1;
    return n;
  }

  /** Below its running limit, a caller's next script may take a worker. */
  const mayStart = (caller: string) => running(caller) < perRunning;

  function dispatch(): void {
    for (const w of workers) {
      if (!w.ready || w.run) continue;
      // The next script of the caller served least recently, skipping callers at their limit
      // (a cancelled script leaves the line).
      const run = queue.shift(mayStart, live);
      if (!run) break;
      assign(w, run);
    }
    // Workers for the scripts that could start now, no more.
    let startable = 0;
    for (const caller of queue.keys()) {
      startable += Math.min(queue.count(caller, live), Math.max(0, perRunning - running(caller)));
    }
    const starting = [...workers].filter((w) => !w.ready).length;
    const wanted = Math.min(startable - starting, maxWorkers - workers.size);
    for (let i = 0; i < wanted; i++) spawn();
  }

  return {
    run(script, runOptions) {
      const limits = resolveLimits(runOptions.limits);
      const run = new ScriptRun(nextId++, script, runOptions, limits, graceMs, callBytes);
      if (closed) run.cancel(true);
      else if (queue.count(run.caller, live) >= perQueued) {
        run.fail(busyError(running(run.caller), queue.count(run.caller, live), perRunning));
      } else {
        queue.push(run.caller, run);
        dispatch();
      }
      return run.answer;
    },

    async close() {
      closed = true;
      for (const run of queue.drain()) run.cancel(true);
      const all = [...workers];
      for (const w of all) w.run?.cancel(true);
      await Promise.all(all.map((w) => w.worker.terminate().then(() => w.exited)));
    },

    stats() {
      const all = [...workers];
      return {
        workers: all.length,
        busy: all.filter((w) => w.run).length,
        queued: queue.count(undefined, live),
      };
    },
  };
}
