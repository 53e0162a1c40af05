import type { HealthSettings } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ServerHealth, ServerStatus } from "../registry/registry.js";
import { systemClock, type Clock } from "../clock.js";

/** What the monitor needs from the registry (a group = servers sharing one spec and pool). */
export interface HealthTarget {
  groups(): { key: string; names: string[] }[];
  statusOf(key: string): ServerStatus | undefined;
  /** Round trip in ms, or "busy": the upstream is occupied by our own calls on that session. */
  ping(key: string, timeoutMs: number): Promise<number | "busy">;
  rediscover(key: string): Promise<void>;
  /** A lazy group with nothing running: not pinged (that would start it), and not down. */
  asleep?(key: string): boolean;
  updateHealth(
    key: string,
    status: ServerStatus,
    patch: Partial<ServerHealth>,
    error?: string,
  ): void;
}

export interface MonitorOptions {
  logger: Logger;
  clock?: Clock;
  /** Source of jitter in [0, 1); injectable for deterministic tests. */
  random?: () => number;
}

interface GroupState {
  timer?: unknown;
  failures: number;
  /** Reconnect attempts since the group went down. */
  attempts: number;
  running: boolean;
}

/**
 * Pings every upstream periodically and reconnects down ones with capped exponential backoff and
 * jitter. A ready server whose checks fail becomes degraded, then down after `failureThreshold`
 * failures in a row; a down one (including one that failed at startup) is rediscovered until it
 * answers, and the registry then announces the change (downstream clients get list_changed).
 */
export class HealthMonitor {
  private readonly groups = new Map<string, GroupState>();
  private readonly clock: Clock;
  private readonly random: () => number;
  private stopped = false;

  constructor(
    private readonly target: HealthTarget,
    private readonly settings: HealthSettings,
    private readonly options: MonitorOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  /** Schedule checks for every group: pings for live ones, reconnects for down ones. */
  start(): void {
    this.sync();
  }

  /** Follow the registry after a reload: watch new groups, forget removed ones. */
  sync(): void {
    if (this.stopped) return;
    const keys = new Set(this.target.groups().map((g) => g.key));
    for (const [key, state] of this.groups) {
      if (keys.has(key)) continue;
      this.clock.clearTimeout(state.timer);
      this.groups.delete(key);
    }
    for (const key of keys) {
      if (this.groups.has(key)) continue;
      const state: GroupState = { failures: 0, attempts: 0, running: false };
      this.groups.set(key, state);
      if (this.target.statusOf(key) === "down") this.scheduleRetry(key, state);
      else this.schedulePing(key, state);
    }
  }

  /** Reconnect every down group now instead of at its next retry (a sign-in just landed). */
  retryDown(): void {
    if (this.stopped) return;
    for (const [key, state] of this.groups) {
      if (state.running || this.target.statusOf(key) !== "down") continue;
      this.clock.clearTimeout(state.timer);
      void this.reconnect(key, state);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const state of this.groups.values()) this.clock.clearTimeout(state.timer);
    this.groups.clear();
  }

  /** The delay before reconnect attempt `attempt` (0-based): doubling, capped, with ±25% jitter. */
  retryDelay(attempt: number): number {
    const base = Math.min(this.settings.retryMaxMs, this.settings.retryInitialMs * 2 ** attempt);
    return Math.round(base * (0.75 + this.random() * 0.5));
  }

  private schedulePing(key: string, state: GroupState): void {
    if (this.stopped) return;
    state.timer = this.clock.setTimeout(
      () => void this.check(key, state),
      this.settings.intervalMs,
    );
  }

  private scheduleRetry(key: string, state: GroupState): void {
    if (this.stopped) return;
    const delay = this.retryDelay(state.attempts);
    state.attempts += 1;
    this.target.updateHealth(key, "down", { nextRetryAt: this.clock.now() + delay });
    state.timer = this.clock.setTimeout(() => void this.reconnect(key, state), delay);
  }

  private async check(key: string, state: GroupState): Promise<void> {
    if (this.stopped || state.running || this.groups.get(key) !== state) return;
    if (this.target.asleep?.(key)) {
      this.schedulePing(key, state);
      return;
    }
    state.running = true;
    try {
      const latencyMs = await this.target.ping(key, this.settings.timeoutMs);
      if (latencyMs === "busy") {
        // Busy with our own calls (which have their own timeouts): neither a success nor a
        // failure. The status stays as it was; the next check asks again.
        const current = this.target.statusOf(key) ?? "ready";
        this.target.updateHealth(key, current, { lastCheckAt: this.clock.now() });
        this.schedulePing(key, state);
        return;
      }
      state.failures = 0;
      this.target.updateHealth(key, "ready", {
        consecutiveFailures: 0,
        lastSuccessAt: this.clock.now(),
        lastCheckAt: this.clock.now(),
        latencyMs,
      });
      this.schedulePing(key, state);
    } catch (err) {
      state.failures += 1;
      const error = errorMessage(err);
      if (state.failures >= this.settings.failureThreshold) {
        this.options.logger.warn(
          `health check failed ${state.failures} times in a row: down (${error})`,
        );
        this.target.updateHealth(
          key,
          "down",
          {
            consecutiveFailures: state.failures,
            downSince: this.clock.now(),
            lastCheckAt: this.clock.now(),
          },
          error,
        );
        state.attempts = 0;
        this.scheduleRetry(key, state);
      } else {
        this.target.updateHealth(
          key,
          "degraded",
          { consecutiveFailures: state.failures, lastCheckAt: this.clock.now() },
          error,
        );
        this.schedulePing(key, state);
      }
    } finally {
      state.running = false;
    }
  }

  private async reconnect(key: string, state: GroupState): Promise<void> {
    if (this.stopped || state.running || this.groups.get(key) !== state) return;
    if (this.target.asleep?.(key)) {
      this.schedulePing(key, state);
      return;
    }
    state.running = true;
    try {
      await this.target.rediscover(key);
      if (this.stopped) return;
      state.failures = 0;
      state.attempts = 0;
      this.target.updateHealth(key, "ready", {
        consecutiveFailures: 0,
        lastSuccessAt: this.clock.now(),
        downSince: undefined,
        nextRetryAt: undefined,
      });
      this.schedulePing(key, state);
    } catch (err) {
      this.target.updateHealth(key, "down", {}, errorMessage(err));
      this.scheduleRetry(key, state);
    } finally {
      state.running = false;
    }
  }
}
