/**
 * Shared state kept in this process only: today's behaviour, and the default without `redis`.
 */
import { LRUCache } from "lru-cache";
import type {
  Gone,
  KeptLimits,
  KeptStore,
  SharedState,
  SharedStatus,
  SharedValues,
} from "./types.js";

/** Forgotten ids remembered (per store) so their owner hears why, not just "not found". */
const MAX_GONE = 1000;

export class MemoryKept<T extends object> implements KeptStore<T> {
  private readonly entries: LRUCache<string, T>;
  /** key → why it went; oldest first, bounded by MAX_GONE. */
  private readonly gone = new Map<string, Gone>();

  /** `now` is the clock ages are measured on (tests inject one). */
  constructor(
    readonly limits: KeptLimits,
    now: () => number = Date.now,
  ) {
    this.entries = new LRUCache<string, T>({
      max: limits.maxEntries,
      maxSize: limits.maxSize,
      ttl: limits.maxAgeMs,
      // Read the clock on every check: no cached time, so an injected clock is exact.
      ttlResolution: 0,
      perf: { now },
      dispose: (_entry, key, reason) => {
        if (reason === "expire" || reason === "evict")
          this.forget(key, reason === "expire" ? "expired" : "evicted");
      },
    });
  }

  put(scope: string, id: string, value: T, size: number): Promise<void> {
    this.entries.set(key(scope, id), value, { size: Math.max(1, size) });
    return Promise.resolve();
  }

  get(scope: string, id: string): Promise<T | { gone: Gone } | undefined> {
    const k = key(scope, id);
    const entry = this.entries.get(k);
    if (entry) return Promise.resolve(entry);
    const why = this.gone.get(k);
    return Promise.resolve(why && { gone: why });
  }

  private forget(k: string, why: Gone): void {
    this.gone.set(k, why);
    if (this.gone.size > MAX_GONE) this.gone.delete(this.gone.keys().next().value!);
  }
}

function key(scope: string, id: string): string {
  // A NUL cannot occur in a caller name (cleanCaller refuses control characters) or an id.
  return `${scope}\u0000${id}`;
}

/** Values in this process, each with its expiry time (ms on `now`'s clock), checked on read. */
export class MemoryValues implements SharedValues {
  private readonly entries = new Map<string, { value: string; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.live(key)?.value);
  }

  set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.entries.set(key, { value, until: ttlMs === undefined ? Infinity : this.now() + ttlMs });
    return Promise.resolve();
  }

  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    if (this.live(key)) return Promise.resolve(false);
    return this.set(key, value, ttlMs).then(() => true);
  }

  delete(key: string): Promise<void> {
    this.entries.delete(key);
    return Promise.resolve();
  }

  private live(key: string): { value: string; until: number } | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

/** Shared state of this process alone. */
export class MemoryShared implements SharedState {
  private readonly valueSets = new Map<string, MemoryValues>();

  constructor(private readonly now: () => number = Date.now) {}

  values(name: string): SharedValues {
    let set = this.valueSets.get(name);
    if (!set) this.valueSets.set(name, (set = new MemoryValues(this.now)));
    return set;
  }

  kept<T extends object>(_name: string, limits: KeptLimits): KeptStore<T> {
    return new MemoryKept<T>(limits, this.now);
  }

  /** No other replica shares this process's memory: nothing to send. */
  broadcast(_topic: string, _message: unknown): Promise<void> {
    return Promise.resolve();
  }

  send(_topic: string, _message: unknown): Promise<number> {
    return Promise.resolve(0);
  }

  listen(_topic: string, _onMessage: (message: unknown) => void): () => void {
    return () => {};
  }

  /** Nothing to wait for: no other replica sends anything. */
  listening(_topic: string): Promise<void> {
    return Promise.resolve();
  }

  status(): SharedStatus {
    return { store: "memory", reachable: true };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
