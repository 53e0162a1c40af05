/**
 * What the dashboard remembers, all of it bounded: recent calls, per-server durations and
 * compression savings, recent log lines, the callers seen, when each server became ready. Fed by
 * the hooks the proxy already has (call events, the logger's tap, registry and view changes);
 * every listener does a few map and array updates and returns, so calls never wait for a page.
 */
import type { CompressionTally } from "../compression/result.js";
import type { CallEnded, CallStarted } from "../executor/events.js";
import type { CallOutcome } from "../executor/context.js";
import type { LogLine } from "../logger.js";
import type { ProxyContext } from "../server/context.js";
import { Ring } from "../ring.js";

/** One call as the dashboard shows it: never its arguments or result. */
export interface CallRecord {
  id: number;
  parentId?: number;
  caller: string;
  server?: string;
  tool: string;
  startedAt: number;
  /** Absent while the call runs. */
  durationMs?: number;
  outcome: CallOutcome | "running";
}

/** One log line: mcpx's own (`source` "mcpx") or an upstream's (its name). */
export interface LogRecord {
  seq: number;
  time: number;
  level: LogLine["level"];
  source: string;
  tag?: string;
  text: string;
  caller?: string;
}

export interface CallerRecord {
  caller: string;
  firstSeen: number;
  lastSeen: number;
  calls: number;
}

/** Results re-encoded for one server, and their estimated tokens as JSON and as sent. */
export interface CompressionStats {
  results: number;
  jsonTokens: number;
  sentTokens: number;
}

export interface StateLimits {
  /** Ended calls kept for the calls table and a token holder's own percentiles. */
  calls: number;
  /** Durations kept per server for p50/p95. */
  durations: number;
  logs: number;
  callers: number;
  /** Characters of one log line kept. */
  lineChars: number;
}

export const DEFAULT_STATE_LIMITS: StateLimits = {
  calls: 1000,
  durations: 1000,
  logs: 1000,
  callers: 500,
  lineChars: 2000,
};

/** Running calls tracked at most (a flood of hung calls must not grow this without bound). */
const MAX_RUNNING = 1000;

export type StateEvent =
  { type: "call"; record: CallRecord } | { type: "log"; record: LogRecord } | { type: "status" };

export class DashboardState {
  readonly startedAt = Date.now();
  private readonly ended: Ring<CallRecord & { compression?: CompressionTally }>;
  private readonly running = new Map<number, CallRecord>();
  private readonly durations = new Map<string, Ring<number>>();
  private readonly compression = new Map<string, CompressionStats>();
  private readonly logs: Ring<LogRecord>;
  private readonly callers = new Map<string, CallerRecord>();
  private readonly readySince = new Map<string, number>();
  private logSeq = 0;
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly ctx: ProxyContext,
    private readonly emit: (event: StateEvent) => void,
    private readonly limits: StateLimits = DEFAULT_STATE_LIMITS,
  ) {
    this.ended = new Ring(limits.calls);
    this.logs = new Ring(limits.logs);
    for (const s of ctx.registry.servers()) {
      if (s.status === "ready") this.readySince.set(s.name, s.updatedAt ?? Date.now());
    }
    this.stops.push(
      ctx.executor.events.on({
        started: (e) => this.started(e),
        ended: (e) => this.finished(e),
      }),
      ctx.logger.tap((line) => this.logged(line)),
      ctx.registry.onChange((name) => this.changed(name)),
      ctx.views.onCaller((caller) => this.seen(caller, false)),
    );
  }

  /** Stop listening (the HTTP server is closing). */
  close(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  /** Recent calls, newest first: running ones, then ended ones. */
  recentCalls(): (CallRecord & { compression?: CompressionTally })[] {
    return [...[...this.running.values()].reverse(), ...this.ended.toArray().reverse()];
  }

  /** Durations of the server's recent calls, in ms. */
  durationsOf(server: string): number[] {
    return this.durations.get(server)?.toArray() ?? [];
  }

  compressionOf(server: string): CompressionStats | undefined {
    return this.compression.get(server);
  }

  recentLogs(): LogRecord[] {
    return this.logs.toArray();
  }

  callersSeen(): CallerRecord[] {
    return [...this.callers.values()].sort((a, b) => b.lastSeen - a.lastSeen);
  }

  readyAt(server: string): number | undefined {
    return this.readySince.get(server);
  }

  private started(e: CallStarted): void {
    const record: CallRecord = { ...callFields(e), outcome: "running" };
    if (this.running.size < MAX_RUNNING) this.running.set(e.id, record);
    this.seen(e.caller, true);
    this.emit({ type: "call", record });
  }

  private finished(e: CallEnded): void {
    this.running.delete(e.id);
    // Only configured servers get statistics: a ref naming no server must not add a key.
    const known = e.server !== undefined && this.ctx.registry.server(e.server) !== undefined;
    const record: CallRecord & { compression?: CompressionTally } = {
      ...callFields(e),
      durationMs: Math.round(e.durationMs * 10) / 10,
      outcome: e.outcome,
      ...(e.compression && { compression: e.compression }),
    };
    this.ended.push(record);
    if (known && e.outcome !== "refused") {
      let ring = this.durations.get(e.server!);
      if (!ring) this.durations.set(e.server!, (ring = new Ring(this.limits.durations)));
      ring.push(e.durationMs);
    }
    if (known && e.compression) {
      const c = this.compression.get(e.server!) ?? { results: 0, jsonTokens: 0, sentTokens: 0 };
      c.results += 1;
      c.jsonTokens += e.compression.jsonTokens;
      c.sentTokens += e.compression.sentTokens;
      this.compression.set(e.server!, c);
    }
    const { compression: _c, ...shown } = record;
    this.emit({ type: "call", record: shown });
  }

  private logged(line: LogLine): void {
    const first = line.tag?.split("/")[0];
    const source =
      first !== undefined && this.ctx.registry.server(first) !== undefined ? first : "mcpx";
    const text =
      line.text.length > this.limits.lineChars
        ? `${line.text.slice(0, this.limits.lineChars)}…`
        : line.text;
    const record: LogRecord = {
      seq: ++this.logSeq,
      time: line.time,
      level: line.level,
      source,
      ...(line.tag !== undefined && { tag: line.tag }),
      text,
      ...(line.caller !== undefined && { caller: line.caller }),
    };
    this.logs.push(record);
    this.emit({ type: "log", record });
  }

  private changed(name: string): void {
    const state = this.ctx.registry.server(name);
    if (state?.status === "ready" || state?.status === "degraded") {
      if (!this.readySince.has(name)) this.readySince.set(name, Date.now());
    } else {
      this.readySince.delete(name);
    }
    this.emit({ type: "status" });
  }

  /** A caller made a request (`call`: it was a tool call). The least recent goes when full. */
  private seen(caller: string, call: boolean): void {
    const now = Date.now();
    const known = this.callers.get(caller);
    if (known) {
      known.lastSeen = now;
      if (call) known.calls += 1;
      // Re-insert: the map's order is least recently seen first.
      this.callers.delete(caller);
      this.callers.set(caller, known);
      return;
    }
    if (this.callers.size >= this.limits.callers) {
      const oldest = this.callers.keys().next().value;
      if (oldest !== undefined) this.callers.delete(oldest);
    }
    this.callers.set(caller, { caller, firstSeen: now, lastSeen: now, calls: call ? 1 : 0 });
  }
}

/** What a call record shows of a call event, started or ended (never its arguments). */
function callFields(e: CallStarted) {
  return {
    id: e.id,
    ...(e.parentId !== undefined && { parentId: e.parentId }),
    caller: e.caller,
    ...(e.server !== undefined && { server: e.server }),
    tool: e.tool,
    startedAt: e.startedAt,
  };
}
