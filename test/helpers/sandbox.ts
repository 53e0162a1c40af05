/**
 * A host for sandbox tests: the `call` a script's inner calls reach, as tools that answer at
 * once, fail, hang until cancelled, or report that a script got going (so a test waits on an
 * event, never on a clock).
 */
import { readFileSync } from "node:fs";
import type { InnerCall, InnerCallResult, RunOptions } from "../../src/sandbox/index.js";

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** What the test's tools saw. */
export interface ToolHost {
  /** Options for a script of caller "alice" (servers a and its dashed tool). */
  options(extra?: Partial<RunOptions>): RunOptions;
  call: InnerCall;
  /** Every inner call that reached the host, in order. */
  calls: { server: string; tool: string; args: unknown }[];
  /** Tools whose signal aborted while they were running. */
  aborted: string[];
  /** Resolves when a script calls `servers.a.started()`. */
  started: Promise<void>;
  /** Resolves when a call of `servers.a.hang()` reaches the host (it answers only when aborted). */
  hanging: Promise<void>;
  /** Resolves when `n` calls of `servers.a.barrier()` are running at once. */
  barrier(n: number): void;
}

/** The servers a test script sees: one server with a mix of tools, one with a dashed name. */
export const SERVERS = {
  a: ["echo", "fail", "hang", "started", "pollute", "list-items", "throws", "barrier"],
  "other-server": ["echo"],
} as const;

export function toolHost(): ToolHost {
  const calls: ToolHost["calls"] = [];
  const aborted: string[] = [];
  const started = deferred();
  const hanging = deferred();
  let barrierSize = 0;
  let waiting: Deferred<void>[] = [];

  const call: InnerCall = async (server, tool, args, signal): Promise<InnerCallResult> => {
    calls.push({ server, tool, args });
    switch (tool) {
      case "echo":
        return { value: args };
      case "fail":
        return { error: `the tool failed: ${JSON.stringify(args)}` };
      case "throws":
        throw new Error("the host's call rejected");
      case "started":
        started.resolve();
        return { value: true };
      case "pollute":
        return { value: JSON.parse('{"__proto__":{"polluted":true},"ok":1}') as unknown };
      case "list-items":
        return { value: [1, 2, 3] };
      case "barrier": {
        const mine = deferred();
        waiting.push(mine);
        if (waiting.length === barrierSize) {
          for (const w of waiting) w.resolve();
          waiting = [];
        }
        await mine.promise;
        return { value: "together" };
      }
      case "hang":
        hanging.resolve();
        return new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            aborted.push(tool);
            resolve({ error: "aborted" });
          });
        });
      default:
        return { error: `no tool ${tool}` };
    }
  };

  return {
    call,
    calls,
    aborted,
    started: started.promise,
    hanging: hanging.promise,
    barrier: (n) => (barrierSize = n),
    options: (extra = {}) => ({ servers: SERVERS, call, ...extra }),
  };
}

/** The process's OS threads (Linux), to see worker threads come and go; undefined elsewhere. */
export function threadCount(): number | undefined {
  try {
    const m = /^Threads:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined; // no /proc: the caller skips the check
  }
}
