/**
 * Workers that say "ready" only after their start timer fired: the case a pool's guard against a
 * worker ended for a missed start, and heard from later, is for (src/sandbox/pool.ts,
 * src/compression/selector.ts). Timing-free: this thread is blocked in a loop turn's last phase
 * (setImmediate) while the workers start, so the next turn runs their expired start timers
 * before it reads their messages.
 */
import { createLogger, type Logger } from "../../src/logger.js";

const BLOCK_MS = 3_000;

function blockThisThread(): void {
  const end = Date.now() + BLOCK_MS;
  while (Date.now() < end) {
    // Busy on purpose: the late "ready" needs this thread held, not waiting.
  }
}

export interface LateReadies {
  /** What the pool logged. */
  logs: string[];
  /** The pool's logger: after its first miss ("starting another") it blocks once more. */
  logger: Logger;
  /** Calls `begin` (which spawns a worker), blocking this thread after it; its result. */
  begin<T>(begin: () => T): Promise<{ value: T }>;
}

export function lateReadies(): LateReadies {
  const logs: string[] = [];
  let blocks = 0;
  const logger = createLogger({
    level: "warn",
    write: (line) => {
      logs.push(line);
      // The replacement is spawned after this line: block again before its timer fires.
      if (line.includes("starting another") && blocks++ === 0) setImmediate(blockThisThread);
    },
  });
  const begin = <T>(start: () => T) =>
    new Promise<{ value: T }>((resolve) =>
      setImmediate(() => {
        const value = start();
        blockThisThread();
        resolve({ value });
      }),
    );
  return { logs, logger, begin };
}
