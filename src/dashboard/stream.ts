/**
 * `/api/events`: server-sent events to open dashboards. Events are queued (bounded) and written
 * in batches on a timer, never from the call that caused them. A browser that reads slowly gets
 * no more than `maxBufferedBytes` queued for it: past that its events are dropped and counted,
 * and it is told how many (`event: dropped`) once it catches up, so it can reload what it shows.
 * At most `maxStreams` dashboards stream at once.
 */
import type { Request, Response } from "express";
import type { Viewer } from "./auth.js";

export interface StreamLimits {
  maxStreams: number;
  /** Bytes waiting in one stream's socket buffer beyond which its events are dropped. */
  maxBufferedBytes: number;
  /** Events waiting for the next flush; more are dropped (and counted for every stream). */
  maxPending: number;
  flushMs: number;
  /** How often status is recomputed for open streams (health latency, sessions change quietly). */
  statusMs: number;
  /** A comment line this often keeps idle streams open through proxies. */
  heartbeatMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxStreams: 16,
  maxBufferedBytes: 256 * 1024,
  maxPending: 2000,
  flushMs: 100,
  statusMs: 2000,
  heartbeatMs: 15_000,
};

/** One event for every stream whose viewer may see it. */
export interface HubEvent {
  type: "call" | "log";
  data: unknown;
  /** The caller it belongs to, if any; a token holder sees only their own. */
  caller?: string;
  /** The server it belongs to, if any. */
  server?: string;
}

/** What the hub asks of the dashboard. */
export interface HubHost {
  visible(viewer: Viewer, event: HubEvent): boolean;
  /** The status document of a viewer (as /api/status answers). */
  status(viewer: Viewer): unknown;
}

interface Stream {
  res: Response;
  viewer: Viewer;
  dropped: number;
  lastStatus?: string;
}

export class EventHub {
  private readonly streams = new Set<Stream>();
  private pending: HubEvent[] = [];
  private overflow = 0;
  private droppedTotal = 0;
  private statusDirty = true;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly statusTimer: NodeJS.Timeout;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly host: HubHost,
    private readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS,
  ) {
    this.statusTimer = setInterval(() => {
      if (this.streams.size === 0) return;
      this.statusDirty = true;
      this.schedule();
    }, limits.statusMs);
    this.heartbeat = setInterval(() => {
      for (const s of this.streams) if (s.res.writableLength === 0) s.res.write(": ping\n\n");
    }, limits.heartbeatMs);
    this.statusTimer.unref();
    this.heartbeat.unref();
  }

  /** Streams open now. */
  get size(): number {
    return this.streams.size;
  }

  /** Events dropped so far because a stream's reader was too slow or the queue was full. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Queue an event for the next flush; nothing at all while no dashboard is open. */
  publish(event: HubEvent): void {
    if (this.streams.size === 0) return;
    if (this.pending.length >= this.limits.maxPending) this.overflow += 1;
    else this.pending.push(event);
    this.schedule();
  }

  /** Something the status shows changed: send it with the next flush. */
  statusChanged(): void {
    if (this.streams.size === 0) return;
    this.statusDirty = true;
    this.schedule();
  }

  /** Start streaming to a viewer; false (503 sent) when too many dashboards are open. */
  open(req: Request, res: Response, viewer: Viewer): boolean {
    if (this.streams.size >= this.limits.maxStreams) {
      res
        .status(503)
        .json({ error: `Too many dashboards open (${this.limits.maxStreams}); close one.` });
      return false;
    }
    res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    const stream: Stream = { res, viewer, dropped: 0 };
    this.streams.add(stream);
    res.write("retry: 2000\n\n");
    this.sendStatus(stream, new Map());
    req.on("close", () => this.streams.delete(stream));
    return true;
  }

  /** End every stream and stop the timers (the HTTP server is closing). */
  close(): void {
    clearInterval(this.statusTimer);
    clearInterval(this.heartbeat);
    clearTimeout(this.flushTimer);
    for (const s of this.streams) s.res.end();
    this.streams.clear();
    this.pending = [];
  }

  private schedule(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), this.limits.flushMs);
    this.flushTimer.unref();
  }

  /** Write what is queued to every stream now (the timer calls this; tests too). */
  flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const events = this.pending;
    const overflow = this.overflow;
    this.pending = [];
    this.overflow = 0;
    const frames = new Map<HubEvent, string>();
    const frame = (e: HubEvent) => {
      let text = frames.get(e);
      if (text === undefined) frames.set(e, (text = sse(e.type, e.data)));
      return text;
    };
    const statuses = new Map<string, string>();
    for (const stream of this.streams) {
      stream.dropped += overflow;
      this.droppedTotal += overflow;
      const own = events.filter((e) => this.host.visible(stream.viewer, e));
      if (this.statusDirty) this.sendStatus(stream, statuses);
      if (own.length === 0) continue;
      if (!this.writable(stream)) {
        stream.dropped += own.length;
        this.droppedTotal += own.length;
        continue;
      }
      stream.res.write(own.map(frame).join(""));
    }
    this.statusDirty = false;
  }

  /** Send the viewer's status if it changed since the last one this stream got. */
  private sendStatus(stream: Stream, cache: Map<string, string>): void {
    const key = stream.viewer.caller === undefined ? "" : `caller:${stream.viewer.caller}`;
    let json = cache.get(key);
    if (json === undefined)
      cache.set(key, (json = JSON.stringify(this.host.status(stream.viewer))));
    if (json === stream.lastStatus || !this.writable(stream)) return;
    stream.lastStatus = json;
    stream.res.write(`event: status\ndata: ${json}\n\n`);
  }

  /** False while the stream's buffer is full; when it has room again, say what was dropped. */
  private writable(stream: Stream): boolean {
    if (stream.res.writableLength > this.limits.maxBufferedBytes) return false;
    if (stream.dropped > 0) {
      stream.res.write(sse("dropped", { count: stream.dropped }));
      stream.dropped = 0;
    }
    return true;
  }
}

function sse(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
