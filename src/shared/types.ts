/**
 * The state replicas share (issue 31), as the rest of mcpx sees it: kept results, and whether the
 * store behind them (this process, or Redis) is reachable. An in-process implementation keeps
 * today's single-process behaviour; `redis` in the config swaps in one every replica reads.
 */

/** A kept store's limits: count, total size and age, over every scope. */
export interface KeptLimits {
  /** Values kept at once. */
  maxEntries: number;
  /** Their total size, in the unit the caller measures (characters for results). */
  maxSize: number;
  /** How long after it was kept a value can be read, in ms. */
  maxAgeMs: number;
}

/** Why a value of this scope can no longer be read. */
export type Gone = "expired" | "evicted";

/**
 * Values kept per scope (a caller) under unguessable ids, bounded by count, size and age; the
 * least recently read goes first. A value is readable only under the scope that kept it.
 * Both methods reject with {@link SharedUnavailableError} when the store cannot be reached.
 */
export interface KeptStore<T> {
  readonly limits: KeptLimits;
  put(scope: string, id: string, value: T, size: number): Promise<void>;
  /** The value, why it is gone, or undefined for one never kept (or another scope's). */
  get(scope: string, id: string): Promise<T | { gone: Gone } | undefined>;
}

/**
 * Small string values under keys, with an optional lifetime (a session's log level, a lock's
 * holder, an encrypted token). Every method rejects with {@link SharedUnavailableError} when the
 * store cannot be reached. Keys are the caller's to scope: put the caller or session in them.
 */
export interface SharedValues {
  get(key: string): Promise<string | undefined>;
  /** Keep `value` under `key` (replacing any), for `ttlMs` when given, else until deleted. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Keep `value` only if `key` holds nothing now (a lock); true when it was kept. */
  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean>;
  delete(key: string): Promise<void>;
}

/** Where shared state lives and whether it can be reached now (for /healthz and the dashboard). */
export interface SharedStatus {
  /** "memory": this process only; "redis": shared by every replica configured with it. */
  store: "memory" | "redis";
  /** The Redis server as `host:port/db` (never its password), with "redis". */
  address?: string;
  /** false while Redis cannot be reached. */
  reachable: boolean;
  /** With reachable false: since when (ISO time) and why. */
  downSince?: string;
  error?: string;
}

/** The shared state of one proxy; built by `openShared` (src/shared/index.ts). */
export interface SharedState {
  /** A bounded kept store named `name` (e.g. "results"), serializing values as JSON in Redis. */
  kept<T extends object>(name: string, limits: KeptLimits): KeptStore<T>;
  /** Values named `name` (e.g. "log-levels"), each set apart from the others. */
  values(name: string): SharedValues;
  /**
   * Send `message` (JSON) on `topic` to every OTHER replica, in order (Redis pub/sub); in this
   * process alone there is no other replica and nothing is sent. Rejects with
   * {@link SharedUnavailableError} when Redis cannot be reached.
   */
  broadcast(topic: string, message: unknown): Promise<void>;
  /**
   * Send `message` (JSON) on `topic` like {@link broadcast}, and say how many other replicas
   * listen there now (Redis PUBLISH's count, this replica's own subscription left out): 0 when
   * none heard it (in this process alone, always 0).
   */
  send(topic: string, message: unknown): Promise<number>;
  /** Hear what other replicas broadcast on `topic`; returns how to stop. */
  listen(topic: string, onMessage: (message: unknown) => void): () => void;
  /**
   * Resolves once what other replicas send on `topic` (which this replica listens to) reaches
   * it: Redis acknowledged the subscription and the connection is up. Await it before asking
   * another replica for something answered on `topic`. Rejects with
   * {@link SharedUnavailableError} when Redis cannot be reached.
   */
  listening(topic: string): Promise<void>;
  status(): SharedStatus;
  /** Disconnect (Redis); idempotent. */
  close(): Promise<void>;
}

/** Shared state is needed but its store cannot be reached; the message names Redis and the fix. */
export class SharedUnavailableError extends Error {
  readonly code = "SHARED_UNAVAILABLE";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
