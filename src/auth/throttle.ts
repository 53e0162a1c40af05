/**
 * Throttling of failed bearer tokens: a token bucket per remote address and one for all of them.
 * Each failed token takes one from both; while either is empty, requests that would check a token
 * are answered 429 without checking it, so guessing runs at the refill rate at most. Valid tokens
 * take nothing. Time comes from an injected clock (tests drive it by hand).
 */
import { LRUCache } from "lru-cache";
import type { Logger } from "../logger.js";

/** A bucket: `burst` failures at once, then one more every `refillMs`. */
export interface BucketLimits {
  burst: number;
  refillMs: number;
}

export interface ThrottleLimits {
  perAddress: BucketLimits;
  global: BucketLimits;
}

/**
 * Ten wrong tokens from one address, then one a second; a hundred from everywhere, then ten a
 * second. A client with a typo in its token sees its 401s long before a 429.
 */
export const DEFAULT_THROTTLE: ThrottleLimits = {
  perAddress: { burst: 10, refillMs: 1_000 },
  global: { burst: 100, refillMs: 100 },
};

/** Addresses tracked at once; the least recently failing are forgotten first (a full bucket). */
const MAX_ADDRESSES = 10_000;

class Bucket {
  private tokens: number;
  private at: number;
  /** The throttling of this bucket was logged; cleared when the bucket is full again. */
  logged = false;

  constructor(
    private readonly limits: BucketLimits,
    now: number,
  ) {
    this.tokens = limits.burst;
    this.at = now;
  }

  /** Tokens now, after refilling for the time since the last look. */
  level(now: number): number {
    if (this.tokens < this.limits.burst) {
      const refilled = Math.floor((now - this.at) / this.limits.refillMs);
      if (refilled > 0) {
        this.tokens = Math.min(this.limits.burst, this.tokens + refilled);
        this.at += refilled * this.limits.refillMs;
      }
    }
    if (this.tokens === this.limits.burst) {
      this.at = now;
      this.logged = false;
    }
    return this.tokens;
  }

  take(now: number): void {
    this.tokens = Math.max(0, this.level(now) - 1);
  }

  /** Milliseconds until the next token, when empty. */
  waitMs(now: number): number {
    return this.level(now) > 0 ? 0 : Math.max(1, this.at + this.limits.refillMs - now);
  }
}

export class AuthThrottle {
  private readonly addresses = new LRUCache<string, Bucket>({ max: MAX_ADDRESSES });
  private readonly global: Bucket;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
  ) {
    this.global = new Bucket(limits.global, now());
  }

  /**
   * Milliseconds `address` must wait before a token of its may be checked; 0 when it may now.
   * Logs once per burst when throttling starts (for the address, or for everyone).
   */
  retryAfterMs(address: string | undefined): number {
    const now = this.now();
    const key = address ?? "unknown";
    const bucket = this.addresses.get(key);
    const own = bucket?.waitMs(now) ?? 0;
    const all = this.global.waitMs(now);
    if (own > 0 && bucket && !bucket.logged) {
      bucket.logged = true;
      this.logger.warn(
        `auth: throttling failed bearer tokens from ${key}: more than ${this.limits.perAddress.burst} wrong tokens; its requests get 429 until it slows to one every ${this.limits.perAddress.refillMs} ms`,
      );
    }
    if (all > 0 && !this.global.logged) {
      this.global.logged = true;
      this.logger.warn(
        `auth: throttling failed bearer tokens from every address: more than ${this.limits.global.burst} wrong tokens in a burst; requests with a token get 429 until failures slow to one every ${this.limits.global.refillMs} ms`,
      );
    }
    return Math.max(own, all);
  }

  /** A token from `address` was wrong. */
  failed(address: string | undefined): void {
    const now = this.now();
    const key = address ?? "unknown";
    let bucket = this.addresses.get(key);
    if (!bucket) {
      bucket = new Bucket(this.limits.perAddress, now);
      this.addresses.set(key, bucket);
    }
    bucket.take(now);
    this.global.take(now);
  }
}
