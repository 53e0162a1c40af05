/**
 * {@link SharedValues} in Redis: one string key per value under the store's prefix, its lifetime a
 * Redis TTL (PX), `setIfAbsent` a `SET … NX` (one holder at a time across replicas).
 */
import { errorMessage } from "../errors.js";
import type { SharedValues, SharedUnavailableError } from "./types.js";
import type { Redis } from "ioredis";

/** What RedisValues needs of the connection (RedisShared). */
export interface RedisUser {
  use(): Promise<Redis>;
  unavailable(why: string, cause?: unknown): SharedUnavailableError;
}

export class RedisValues implements SharedValues {
  constructor(
    private readonly shared: RedisUser,
    private readonly prefix: string,
  ) {}

  get(key: string): Promise<string | undefined> {
    return this.run(async (r) => (await r.get(this.prefix + key)) ?? undefined);
  }

  set(key: string, value: string, ttlMs?: number): Promise<void> {
    return this.run(async (r) => {
      if (ttlMs === undefined) await r.set(this.prefix + key, value);
      else await r.set(this.prefix + key, value, "PX", Math.max(1, Math.ceil(ttlMs)));
    });
  }

  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    return this.run(async (r) => {
      const done =
        ttlMs === undefined
          ? await r.set(this.prefix + key, value, "NX")
          : await r.set(this.prefix + key, value, "PX", Math.max(1, Math.ceil(ttlMs)), "NX");
      return done === "OK";
    });
  }

  delete(key: string): Promise<void> {
    return this.run(async (r) => {
      await r.del(this.prefix + key);
    });
  }

  /** A command; a connection failure becomes the error naming Redis. */
  private async run<R>(command: (client: Redis) => Promise<R>): Promise<R> {
    const client = await this.shared.use();
    try {
      return await command(client);
    } catch (err) {
      throw this.shared.unavailable(errorMessage(err), err);
    }
  }
}
