/**
 * What a pool lends a call, and what a call asks of a pool: the contract between the executor,
 * the pool (pool.ts) and its long-lived per-key sessions (keyed.ts).
 */
import type { UpstreamSession } from "../upstream/types.js";

export interface AcquireOptions {
  caller: string;
  /**
   * The downstream client: its stdio connection, its 2025-era HTTP session, or for a
   * 2026-07-28 client (no session) its caller. Picks the session under the `client` policy and
   * names who is told that a server restarted. Default: the caller.
   */
  client?: string;
  /** How long a call may wait for a free slot before it is refused. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A session lent to one call. Release it when the call is over, whatever the outcome. */
export interface Lease {
  readonly session: UpstreamSession;
  /**
   * Set on the first lease a client gets after the session that held its state (under
   * `client`, `shared` or `caller`) ended and a new one replaced it: why the old one ended,
   * e.g. "its process exited". The executor says so in the answer; set once per loss.
   */
  readonly restarted?: string;
  release(): void;
}

/** Why a long-lived session ended, as the lost-state notice words it. */
export const LOST = {
  exited: "its session ended: the process exited or the connection closed",
  reset: "mcpx reconnected it after it failed health checks",
  idle: (ms: number) =>
    `mcpx closed its session after ${Math.round(ms / 1000)} s without calls (idleTimeout)`,
  evicted: (max: number) =>
    `mcpx closed its session to make room for another caller (maxSessions ${max})`,
} as const;

/** The client a call belongs to, for the lost-state notice and the `client` policy. */
export function clientKey(options: AcquireOptions): string {
  return options.client ?? `caller:${options.caller}`;
}
