/**
 * 2025-era session state every replica reads through Redis (issue 31): the level a session set
 * with logging/setLevel, when any replica last saw it (idle expiry), and the resources it
 * subscribed to; plus the relay of a session's GET-stream notifications made on a replica that
 * does not hold its stream. Keys carry a hash of the signed session id, never the id itself, and
 * live as long as the id does.
 *
 * Redis unreachable: each falls back to what this replica knows (today's single-replica
 * behaviour), logged once per outage; a request never fails for it.
 */
import { createHash, randomUUID } from "node:crypto";
import type { LoggingLevel } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { SharedState, SharedValues } from "../shared/types.js";
import type { SessionState, SharedSessionBits } from "./legacy-sessions.js";
import { loggingLevel } from "./log-levels.js";

/** A session's resources/updated relayed to the replica holding its GET stream, in order. */
export interface RelayedUpdate {
  kind: "update";
  sid: string;
  /** The relaying replica and its sequence for this session (per replica, from 1). */
  from: string;
  seq: number;
  server: string;
  uri: string;
}

/** Shared-state topic of 2025-era sessions: cancellations, DELETEs, subscriptions, updates. */
export const LEGACY_TOPIC = "legacy-sessions";

export class LegacyShared {
  private readonly levels: SharedValues;
  private readonly seen: SharedValues;
  private readonly subs: SharedValues;
  /** This replica, in the updates it relays. */
  readonly origin = randomUUID();
  /** How often at most this replica writes a session's last-seen time. */
  readonly touchEveryMs: number;
  /** An outage is logged once, here: set on the first failure, cleared by a success. */
  private failing = false;

  constructor(
    private readonly shared: SharedState,
    private readonly logger: Logger,
    idleMs: number,
    private readonly now: () => number,
  ) {
    this.levels = shared.values("legacy-level");
    this.seen = shared.values("legacy-seen");
    this.subs = shared.values("legacy-subscriptions");
    this.touchEveryMs = Math.max(1, Math.min(5_000, Math.floor(idleMs / 4)));
  }

  /** The session's bookkeeping here, made on first use. */
  bits(state: SessionState): SharedSessionBits {
    return (state.shared ??= { touchedAt: 0, seq: 0, heard: new Map() });
  }

  /** The level the session set on any replica; undefined when none or Redis is away. */
  async level(sid: string): Promise<LoggingLevel | undefined> {
    const level = await this.attempt("read the log level", () => this.levels.get(key(sid)));
    return loggingLevel(level);
  }

  async setLevel(sid: string, level: string, exp: number): Promise<void> {
    if (!loggingLevel(level)) return;
    await this.attempt("keep the log level", () =>
      this.levels.set(key(sid), level, exp - this.now()),
    );
  }

  /** Note the session active now: written at most every touchEveryMs per session. */
  touch(sid: string, state: SessionState): void {
    const bits = this.bits(state);
    const now = this.now();
    if (now - bits.touchedAt < this.touchEveryMs) return;
    bits.touchedAt = now;
    void this.attempt("keep the last-seen time", () =>
      this.seen.set(key(sid), String(now), state.exp - now),
    );
  }

  /**
   * When a replica last saw the session at the latest: its last-seen time plus the write
   * interval (a replica writes at most that often). Undefined when Redis is away or has none.
   */
  async lastSeen(sid: string): Promise<number | undefined> {
    const at = Number(await this.attempt("read the last-seen time", () => this.seen.get(key(sid))));
    return Number.isFinite(at) && at > 0 ? at + this.touchEveryMs : undefined;
  }

  /** The URIs the session subscribed to, on any replica. */
  async subscriptions(sid: string): Promise<string[]> {
    const text = await this.attempt("read subscriptions", () => this.subs.get(key(sid)));
    return parseUris(text);
  }

  /**
   * Keep (or drop) a subscription of the session. A read then a write: two subscriptions of
   * one session made at the same instant on two replicas may keep only one in Redis (both
   * still reach the stream's replica through the relay).
   */
  async subscribed(sid: string, uri: string, on: boolean, exp: number): Promise<void> {
    await this.attempt("keep subscriptions", async () => {
      const uris = new Set(parseUris(await this.subs.get(key(sid))));
      if (on) uris.add(uri);
      else uris.delete(uri);
      if (uris.size === 0) await this.subs.delete(key(sid));
      else await this.subs.set(key(sid), JSON.stringify([...uris]), exp - this.now());
    });
  }

  /** The session ended: its shared state goes too. */
  forget(sid: string): void {
    const k = key(sid);
    void this.attempt("forget an ended session", () =>
      Promise.all([this.levels.delete(k), this.seen.delete(k), this.subs.delete(k)]),
    );
  }

  /**
   * This replica's next place in the session's relay sequence: resource updates and task
   * statuses (legacy-task-status.ts) share it, so the stream's replica keeps their order.
   */
  next(state: SessionState): { from: string; seq: number } {
    const bits = this.bits(state);
    bits.seq += 1;
    return { from: this.origin, seq: bits.seq };
  }

  /** The next relayed update of the session from this replica. */
  update(sid: string, state: SessionState, server: string, uri: string): RelayedUpdate {
    return { kind: "update", sid, ...this.next(state), server, uri };
  }

  /** True when `update` is new (not a repeat of one already heard from its replica). */
  fresh(state: SessionState, update: { from: string; seq: number }): boolean {
    const bits = this.bits(state);
    const last = bits.heard.get(update.from) ?? 0;
    if (update.seq <= last) return false;
    if (update.seq > last + 1 && last > 0) {
      this.logger.debug(`relayed updates ${last + 1}..${update.seq - 1} of a session were lost`);
    }
    bits.heard.set(update.from, update.seq);
    return true;
  }

  /** Tell the other replicas (Redis pub/sub, in order); a failure is logged once per outage. */
  publish(message: Record<string, unknown>): Promise<void> {
    return this.attempt(`tell other replicas (${String(message.kind)})`, () =>
      this.shared.broadcast(LEGACY_TOPIC, message),
    );
  }

  /** Run a Redis operation; on failure, log once per outage and answer undefined. */
  private async attempt<R>(what: string, op: () => Promise<R>): Promise<R | undefined> {
    try {
      const result = await op();
      this.failing = false;
      return result;
    } catch (err) {
      if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          `2025-era sessions: could not ${what} in Redis (${errorMessage(err)}); their log level, idle expiry, subscriptions and stream notifications are this replica's own until Redis is back`,
        );
      } else this.logger.debug(`2025-era sessions: could not ${what}: ${errorMessage(err)}`);
      return undefined;
    }
  }
}

/** A session's key in Redis: a hash of its signed id (the id itself stays out of Redis). */
function key(sid: string): string {
  return createHash("sha256").update(sid).digest("hex").slice(0, 32);
}

function parseUris(text: string | undefined): string[] {
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((u): u is string => typeof u === "string") : [];
  } catch {
    return []; // not ours: nothing a replica of this deployment wrote
  }
}
