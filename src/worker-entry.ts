import { createRequire } from "node:module";
import type * as WorkerThreads from "node:worker_threads";
import type { Worker, WorkerOptions } from "node:worker_threads";

const requireBuiltin = createRequire(import.meta.url);

/**
 * A worker thread. node's worker_threads loads with the first one, not with mcpx (an mcpx that
 * runs no script and no `select` never needs it; loading it costs ~0.4 MB of RSS).
 */
export function startWorker(filename: string | URL, options: WorkerOptions): Worker {
  const threads = requireBuiltin("node:worker_threads") as typeof WorkerThreads;
  return new threads.Worker(filename, options);
}

/**
 * Where a worker thread of mcpx starts: the built `.js` file beside the caller's module, or, run
 * from source (tests, bench), an eval'd entry that first registers tsx, the TypeScript loader the
 * dev tooling already uses.
 */
export function workerEntry(self: string, name: string): { filename: string | URL; eval: boolean } {
  if (!self.endsWith(".ts")) return { filename: new URL(`./${name}.js`, self), eval: false };
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const entry = JSON.stringify(new URL(`./${name}.ts`, self).href);
  return {
    filename: `import(${tsx}).then((m) => { m.register(); return import(${entry}); })`,
    eval: true,
  };
}

/** How long a new worker thread has to say it is ready, by default (ms). */
export const WORKER_START_MS = 15_000;

/**
 * Workers of one pool that missed their start in a row: a miss is retried (another worker
 * started) until the second in a row, which fails the work waiting; a worker that starts resets it.
 */
export class MissedStarts {
  private inARow = 0;

  /** Count a miss; true while another worker should be tried for the waiting work. */
  miss(): boolean {
    this.inARow += 1;
    return this.inARow < 2;
  }

  started(): void {
    this.inARow = 0;
  }
}
