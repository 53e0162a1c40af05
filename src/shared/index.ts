/**
 * Shared state for one proxy: in this process (no `redis` key: today's behaviour), or in Redis,
 * shared by every replica with the same config. The rest of mcpx sees only src/shared/types.ts.
 */
import { createHash } from "node:crypto";
import type { Logger } from "../logger.js";
import { MemoryShared } from "./memory.js";
import { RedisShared } from "./redis.js";
import type { SharedState } from "./types.js";

export interface SharedOptions {
  /** The config's `redis` URL, expanded; absent: this process only. */
  redis?: string;
  /**
   * What every replica of one deployment shares and others do not (the session key): keys are
   * namespaced by its hash, so deployments sharing one Redis never read each other's state.
   */
  deployment: Buffer;
  logger: Logger;
  now?: () => number;
}

export function openShared(options: SharedOptions): SharedState {
  if (options.redis === undefined) return new MemoryShared(options.now);
  const namespace = createHash("sha256")
    .update("mcpx redis namespace\n")
    .update(options.deployment)
    .digest("hex")
    .slice(0, 16);
  return new RedisShared({
    url: options.redis,
    namespace,
    logger: options.logger.child("redis"),
    ...(options.now && { now: options.now }),
  });
}
