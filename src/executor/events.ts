/**
 * Call events: who called which tool, how long it took and how it ended — never its arguments
 * or its result. The dashboard listens; nothing on the call path waits for a listener, and a
 * listener that throws is ignored (a page must never break a call).
 */
import type { CompressionTally } from "../compression/result.js";
import { parseToolRef } from "../registry/toolref.js";
import type { CallOutcome } from "./context.js";

/** A call as it starts. `server`/`tool` are the ref as written until it resolves. */
export interface CallStarted {
  /** Unique per executor, increasing. */
  id: number;
  /** The call this one runs inside (a code-mode script's inner calls), if any. */
  parentId?: number;
  caller: string;
  /** The tool ref as the client wrote it. */
  ref: string;
  server?: string;
  tool: string;
  /** ms since epoch. */
  startedAt: number;
}

/** A call as it ended: its resolved tool, duration and outcome. */
export interface CallEnded extends CallStarted {
  durationMs: number;
  outcome: CallOutcome;
  /** JSON blocks the result's encoding replaced, and their estimated tokens before and after. */
  compression?: CompressionTally;
}

export interface CallListener {
  started?(event: CallStarted): void;
  ended?(event: CallEnded): void;
}

/** The executor's call events. Costs nothing while nobody listens. */
export class CallEvents {
  private readonly listeners = new Set<CallListener>();
  private nextId = 1;

  /** Listen to every call from now on; returns how to stop. */
  on(listener: CallListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A call begins: undefined when nobody listens (nothing else is built then). */
  start(ref: string, caller: string, parentId: number | undefined): CallStarted | undefined {
    if (this.listeners.size === 0) return undefined;
    const parsed = parseToolRef(ref);
    const event: CallStarted = {
      id: this.nextId++,
      ...(parentId !== undefined && { parentId }),
      caller,
      ref,
      ...(parsed && { server: parsed.server }),
      tool: parsed?.tool ?? ref,
      startedAt: Date.now(),
    };
    this.each((l) => l.started?.(event));
    return event;
  }

  /** The call that `start` announced has ended. */
  end(
    started: CallStarted | undefined,
    end: {
      durationMs: number;
      outcome: CallOutcome;
      target?: { server: string; tool: string };
      compression?: CompressionTally;
    },
  ): void {
    if (!started) return;
    const event: CallEnded = {
      ...started,
      ...(end.target && { server: end.target.server, tool: end.target.tool }),
      durationMs: end.durationMs,
      outcome: end.outcome,
      ...(end.compression && end.compression.blocks > 0 && { compression: end.compression }),
    };
    this.each((l) => l.ended?.(event));
  }

  private each(fn: (listener: CallListener) => void): void {
    for (const l of this.listeners) {
      try {
        fn(l);
      } catch {
        // A listener's failure is its own: the call it watches goes on untouched.
      }
    }
  }
}
