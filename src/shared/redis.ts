/**
 * Shared state in Redis (or Valkey), the `redis` key of the config: every replica configured with
 * the same server and `sessionSecret` reads the same kept values. ioredis is loaded on first use,
 * so a proxy without `redis` never loads it.
 *
 * Faults: commands never queue while Redis is away (they fail at once, as
 * {@link SharedUnavailableError} naming Redis); ioredis reconnects by itself with backoff; an
 * outage is logged once when it starts and once when it ends.
 */
import { randomUUID } from "node:crypto";
import type { Redis, RedisOptions } from "ioredis";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import {
  SharedUnavailableError,
  type Gone,
  type KeptLimits,
  type KeptStore,
  type SharedState,
  type SharedStatus,
  type SharedValues,
} from "./types.js";
import { RedisValues } from "./redis-values.js";

/** How long a command may wait for Redis before it fails (a stopped, not closed, server). */
const COMMAND_TIMEOUT_MS = 3_000;
/** Reconnect backoff: 100 ms more per attempt, at most this. */
const MAX_RETRY_MS = 2_000;

/**
 * Keep a value (Lua, atomic): drop members whose value expired, store the value with its TTL and
 * a "gone" marker outliving it, then evict the least recently read until count and size fit.
 * KEYS: lru (zset member → order of last use), sizes (hash member → size), seq (that order's
 * counter: a clock's milliseconds tie when several results are kept at once).
 * ARGV[4] (now) is unused by the order.
 * ARGV: member, value, size, now, maxAgeMs, maxEntries, maxSize, value prefix, gone prefix.
 */
const PUT = `
local lru, sizes = KEYS[1], KEYS[2]
local member, value, size = ARGV[1], ARGV[2], tonumber(ARGV[3])
local age, maxn, maxsize = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local vp, gp = ARGV[8], ARGV[9]
local total = 0
for _, m in ipairs(redis.call('ZRANGE', lru, 0, -1)) do
  if redis.call('EXISTS', vp .. m) == 0 then
    redis.call('ZREM', lru, m)
    redis.call('HDEL', sizes, m)
  else
    total = total + tonumber(redis.call('HGET', sizes, m) or '0')
  end
end
redis.call('SET', vp .. member, value, 'PX', age)
redis.call('SET', gp .. member, 'expired', 'PX', age * 2)
redis.call('ZADD', lru, redis.call('INCR', KEYS[3]), member)
redis.call('HSET', sizes, member, size)
redis.call('PEXPIRE', lru, age * 2)
redis.call('PEXPIRE', sizes, age * 2)
redis.call('PEXPIRE', KEYS[3], age * 2)
total = total + size
local count = redis.call('ZCARD', lru)
while count > maxn or total > maxsize do
  local oldest = redis.call('ZRANGE', lru, 0, 0)[1]
  if not oldest then break end
  total = total - tonumber(redis.call('HGET', sizes, oldest) or '0')
  redis.call('ZREM', lru, oldest)
  redis.call('HDEL', sizes, oldest)
  redis.call('DEL', vp .. oldest)
  redis.call('SET', gp .. oldest, 'evicted', 'KEEPTTL')
  count = count - 1
end
return 1
`;

/**
 * Read a value and mark it used; else why it is gone. KEYS: lru, seq. ARGV: member, now, value
 * prefix, gone prefix. Returns {1, value}, {0, reason} or {}.
 */
const GET = `
local v = redis.call('GET', ARGV[3] .. ARGV[1])
if v then
  redis.call('ZADD', KEYS[1], 'XX', redis.call('INCR', KEYS[2]), ARGV[1])
  return {1, v}
end
local g = redis.call('GET', ARGV[4] .. ARGV[1])
if g then return {0, g} end
return {}
`;

interface KeptCommands {
  mcpxKeptPut(...args: (string | number)[]): Promise<number>;
  mcpxKeptGet(...args: (string | number)[]): Promise<[] | [0 | 1, string]>;
}

export interface RedisSharedOptions {
  /** `redis://…` or `rediss://…`, `${VAR}` already expanded (a secret when it holds a password). */
  url: string;
  /** Separates deployments sharing one Redis: replicas with the same config share it. */
  namespace: string;
  logger: Logger;
  now?: () => number;
}

export class RedisShared implements SharedState {
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly prefix: string;
  readonly address: string;
  private client?: Redis & KeptCommands;
  private readonly connecting: Promise<(Redis & KeptCommands) | undefined>;
  private reachable = false;
  /** Set while an outage lasts (logged once); undefined while connected or before the first try. */
  private down?: { since: number; error: string };
  private closed = false;
  /** Settles when the first connection is ready or has failed. */
  private firstTry?: Promise<void>;
  /** This replica, so it skips what it broadcast itself. */
  private readonly origin = randomUUID();
  /** The pub/sub connection, opened at the first listen; topic → its listeners. */
  private subscriber?: Promise<Redis | undefined>;
  private readonly listeners = new Map<string, Set<(message: unknown) => void>>();
  /** topic → its first SUBSCRIBE, true once Redis acknowledged it. */
  private readonly subscribed = new Map<string, Promise<boolean>>();

  constructor(private readonly options: RedisSharedOptions) {
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.prefix = `mcpx:${options.namespace}:`;
    this.address = redisAddress(options.url);
    this.connecting = this.connect().catch((err: unknown) => {
      this.markDown(`ioredis did not load: ${errorMessage(err)}`);
      return undefined;
    });
  }

  private async connect(): Promise<(Redis & KeptCommands) | undefined> {
    const { Redis } = await import("ioredis");
    if (this.closed) return undefined;
    const options: RedisOptions = {
      // Fail at once while Redis is away: callers answer "Redis unreachable" instead of hanging.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: COMMAND_TIMEOUT_MS,
      // Forever, with backoff: an outage ends when Redis is back, without a restart of mcpx.
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RETRY_MS),
      // Our own prefix per key (namespace); no client name leaks the config.
      lazyConnect: false,
    };
    const client = new Redis(this.options.url, options) as Redis & KeptCommands;
    client.defineCommand("mcpxKeptPut", { numberOfKeys: 3, lua: PUT });
    client.defineCommand("mcpxKeptGet", { numberOfKeys: 2, lua: GET });
    client.on("ready", () => this.markUp());
    client.on("error", (err: unknown) => this.markDown(errorMessage(err)));
    client.on("close", () => this.markDown("connection closed"));
    this.client = client;
    return client;
  }

  private markUp(): void {
    this.reachable = true;
    if (this.down) {
      const seconds = Math.round((this.now() - this.down.since) / 1000);
      this.logger.info(`Redis at ${this.address} reachable again (after ${seconds} s)`);
    }
    this.down = undefined;
  }

  private markDown(error: string): void {
    if (this.closed) return;
    this.reachable = false;
    if (this.down) return;
    this.down = { since: this.now(), error };
    this.logger.warn(
      `Redis at ${this.address} unreachable: ${error}. What needs shared state (result handles, sign-ins and pins kept in Redis, answers crossing replicas) fails until it is back, and 2025-era sessions fall back to this replica's own state; mcpx reconnects by itself.`,
    );
  }

  /** The client, or a clear error naming Redis when it cannot be used now. */
  async use(): Promise<Redis & KeptCommands> {
    const client = await this.connecting;
    // Still making the first connection (a command right after start, or a short-lived
    // `mcpx login`): wait for it rather than fail as if Redis were down.
    if (client && !this.reachable && !this.down) await (this.firstTry ??= settled(client));
    if (!client || !this.reachable) throw this.unavailable(this.down?.error ?? "connecting");
    return client;
  }

  unavailable(why: string, cause?: unknown): SharedUnavailableError {
    return new SharedUnavailableError(
      `Redis at ${this.address} (the "redis" key: shared state of every replica) is unreachable: ${why}. Try again once it is back; mcpx reconnects by itself.`,
      { cause },
    );
  }

  async broadcast(topic: string, message: unknown): Promise<void> {
    await this.send(topic, message);
  }

  async send(topic: string, message: unknown): Promise<number> {
    const client = await this.use();
    const payload = JSON.stringify({ origin: this.origin, message });
    let heard: number;
    try {
      heard = await client.publish(`${this.prefix}bus:${topic}`, payload);
    } catch (err) {
      throw this.unavailable(errorMessage(err), err);
    }
    // This replica's own subscription counts in PUBLISH's answer; it skips its own messages.
    return Math.max(0, heard - (this.subscribed.has(topic) ? 1 : 0));
  }

  async listening(topic: string): Promise<void> {
    const subscribed = this.subscribed.get(topic);
    if (!subscribed) throw new Error(`mcpx bug: listening(${topic}) before listen(${topic})`);
    // Checked first: while Redis is away the SUBSCRIBE waits in ioredis's queue.
    if (!this.reachable || !(await subscribed))
      throw this.unavailable(this.down?.error ?? "subscribing");
    const sub = await this.subscriber;
    // After an outage ioredis subscribes again once its pub/sub connection is back.
    if (sub?.status !== "ready") throw this.unavailable(this.down?.error ?? "subscribing");
  }

  listen(topic: string, onMessage: (message: unknown) => void): () => void {
    let set = this.listeners.get(topic);
    if (!set) {
      this.listeners.set(topic, (set = new Set()));
      this.subscribed.set(topic, this.subscribe(topic));
    }
    set.add(onMessage);
    return () => set.delete(onMessage);
  }

  /**
   * Subscribe on the pub/sub connection (its own: a subscribed connection sends nothing else).
   * It queues the subscription until connected and subscribes again after each reconnect.
   */
  private async subscribe(topic: string): Promise<boolean> {
    this.subscriber ??= this.connecting.then((client) => {
      if (!client || this.closed) return undefined;
      const sub = client.duplicate({ enableOfflineQueue: true });
      sub.on("error", () => {}); // the command connection's handlers report outages
      sub.on("message", (channel: string, payload: string) => this.deliver(channel, payload));
      return sub;
    });
    const sub = await this.subscriber;
    if (!sub) return false;
    return sub.subscribe(`${this.prefix}bus:${topic}`).then(
      () => true,
      (err: unknown) => {
        this.logger.warn(`Redis: could not subscribe to ${topic}: ${errorMessage(err)}`);
        return false;
      },
    );
  }

  private deliver(channel: string, payload: string): void {
    const topic = channel.slice(`${this.prefix}bus:`.length);
    let parsed: { origin?: unknown; message?: unknown };
    try {
      parsed = JSON.parse(payload) as { origin?: unknown; message?: unknown };
    } catch {
      return; // not ours: nothing a replica of this deployment sent
    }
    if (parsed.origin === this.origin) return;
    for (const listener of this.listeners.get(topic) ?? []) {
      try {
        listener(parsed.message);
      } catch (err) {
        this.logger.warn(`Redis: a ${topic} message failed: ${errorMessage(err)}`);
      }
    }
  }

  values(name: string): SharedValues {
    return new RedisValues(this, `${this.prefix}values:${name}:`);
  }

  kept<T extends object>(name: string, limits: KeptLimits): KeptStore<T> {
    return new RedisKept<T>(this, `${this.prefix}kept:${name}:`, limits, this.now);
  }

  status(): SharedStatus {
    return {
      store: "redis",
      address: this.address,
      reachable: this.reachable,
      ...(this.down && {
        downSince: new Date(this.down.since).toISOString(),
        error: this.down.error,
      }),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const sub = await this.subscriber;
    if (sub) await sub.quit().catch(() => sub.disconnect());
    const client = await this.connecting;
    if (!client) return;
    await client.quit().catch(() => client.disconnect());
  }
}

class RedisKept<T extends object> implements KeptStore<T> {
  constructor(
    private readonly shared: RedisShared,
    private readonly prefix: string,
    readonly limits: KeptLimits,
    private readonly now: () => number,
  ) {}

  async put(scope: string, id: string, value: T, size: number): Promise<void> {
    const client = await this.shared.use();
    const { maxAgeMs, maxEntries, maxSize } = this.limits;
    await this.run(() =>
      client.mcpxKeptPut(
        `${this.prefix}lru`,
        `${this.prefix}sizes`,
        `${this.prefix}seq`,
        member(scope, id),
        JSON.stringify(value),
        Math.max(1, size),
        this.now(),
        maxAgeMs,
        maxEntries,
        maxSize,
        `${this.prefix}v:`,
        `${this.prefix}g:`,
      ),
    );
  }

  async get(scope: string, id: string): Promise<T | { gone: Gone } | undefined> {
    const client = await this.shared.use();
    const found = await this.run(() =>
      client.mcpxKeptGet(
        `${this.prefix}lru`,
        `${this.prefix}seq`,
        member(scope, id),
        this.now(),
        `${this.prefix}v:`,
        `${this.prefix}g:`,
      ),
    );
    if (found.length === 0) return undefined;
    const [kind, text] = found;
    if (kind === 1) return JSON.parse(text) as T;
    return { gone: text === "evicted" ? "evicted" : "expired" };
  }

  /** A command; a connection failure becomes the error naming Redis. */
  private async run<R>(command: () => Promise<R>): Promise<R> {
    try {
      return await command();
    } catch (err) {
      throw this.shared.unavailable(errorMessage(err), err);
    }
  }
}

/** Resolves when `client` is ready or failed (its error handlers report which), at most 3 s. */
function settled(client: Redis): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off("ready", done);
      client.off("error", done);
      resolve();
    };
    const timer = setTimeout(done, COMMAND_TIMEOUT_MS);
    client.once("ready", done);
    client.once("error", done);
  });
}

/** Scope and id in one member: a NUL occurs in neither (cleanCaller refuses control characters). */
function member(scope: string, id: string): string {
  return `${scope}\u0000${id}`;
}

/** `host:port/db` of a redis(s) URL, never its user or password. */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    const db = u.pathname.replace(/^\//, "") || "0";
    return `${u.protocol === "rediss:" ? "rediss://" : ""}${u.hostname}:${u.port || "6379"}/${db}`;
  } catch {
    return "(unparsable URL)";
  }
}
