/**
 * `notifications/tasks/status` for 2025-era HTTP sessions. A task's status changes after the
 * tools/call that started it has been answered, so no request's stream can carry it: it goes to
 * the session's standalone GET stream, as list changes and resource updates do. Held on this
 * replica: sent there. Held on another (Redis): relayed to it over pub/sub with the session's
 * relay sequence (the one resource updates use, legacy-shared.ts), so its statuses arrive in
 * order and once. Held nowhere: dropped without error; the client still polls tasks/get.
 */
import type { Server } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";
import type { ProxyContext } from "./context.js";
import type { SessionState } from "./legacy-sessions.js";
import type { LegacyShared } from "./legacy-shared.js";

export const TASK_STATUS = "notifications/tasks/status";

/** A session's task status relayed to the replica holding its GET stream. */
export interface RelayedTaskStatus {
  kind: "task";
  sid: string;
  from: string;
  seq: number;
  task: Record<string, unknown>;
}

/** Routes one replica's 2025-era sessions' task statuses (see the file comment). */
export class LegacyTaskStatuses {
  /** The GET stream each session holds on this replica: where its statuses go. */
  private readonly streams = new WeakMap<SessionState, (task: Record<string, unknown>) => void>();

  constructor(
    private readonly ctx: ProxyContext,
    /** Shared with the other replicas (Redis); absent with one replica. */
    private readonly store?: LegacyShared,
  ) {}

  /** A session seen here: its tasks' statuses take this route (SessionMemory.taskStatus). */
  attach(sid: string, state: SessionState): void {
    state.taskStatus ??= (task) => this.route(sid, state, task);
  }

  /** The session's GET stream opened here, on `server`: statuses go there. Returns the stop. */
  streaming(state: SessionState, server: Server): () => void {
    const send = (task: Record<string, unknown>) =>
      void server
        .notification({ method: TASK_STATUS, params: task })
        .catch((err: unknown) =>
          this.ctx.logger.debug(`task status not sent: ${errorMessage(err)}`),
        );
    this.streams.set(state, send);
    return () => {
      if (this.streams.get(state) === send) this.streams.delete(state);
    };
  }

  /** Another replica's relayed status of a session live here (its id already verified). */
  heard(state: SessionState, message: Record<string, unknown>): void {
    if (!this.store || !isRecord(message.task) || typeof message.from !== "string") return;
    if (typeof message.seq !== "number") return;
    const relayed = message as unknown as RelayedTaskStatus;
    // Fresh first: a status sent while the stream is elsewhere still counts in the sequence.
    if (!this.store.fresh(state, relayed)) return;
    this.streams.get(state)?.(relayed.task);
  }

  private async route(sid: string, state: SessionState, task: Record<string, unknown>) {
    const send = this.streams.get(state);
    if (send) return send(task);
    if (!this.store) return; // no stream anywhere: the client polls tasks/get
    const { from, seq } = this.store.next(state);
    const message: RelayedTaskStatus = { kind: "task", sid, from, seq, task };
    await this.store.publish({ ...message });
  }
}
