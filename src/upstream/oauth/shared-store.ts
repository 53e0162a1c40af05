/**
 * Sign-ins in Redis (`redis` with an `encryptionKey`, issue 31): one `mcpx login` serves every
 * replica. Each resource's record is one value, sealed (src/shared/sealed.ts: AES-256-GCM, the
 * key from the config), under the hash of the resource's URL, as the files are named; the refresh
 * lock is a `SET NX PX` on its own key holding a random id (no secret), so one replica refreshes
 * at a time and the others, once they hold the lock, read the token it got. A sign-in written
 * here is announced on the `sign-ins` topic so replicas waiting with "needs sign-in" reconnect.
 */
import { randomUUID } from "node:crypto";
import { sealValues } from "../../shared/sealed.js";
import type { SharedState, SharedValues } from "../../shared/types.js";
import { parseSignIn, resourceKey, type SignInRecord, type SignInStore } from "./store.js";

/** The topic a sign-in written to Redis is announced on (the resource's key, nothing secret). */
export const SIGN_IN_TOPIC = "sign-ins";

export class SharedSignIns implements SignInStore {
  private readonly records: SharedValues;
  private readonly locks: SharedValues;

  constructor(
    private readonly shared: SharedState,
    encryptionKey: string,
  ) {
    this.records = sealValues(shared.values("oauth"), encryptionKey, "oauth", "the sign-in");
    this.locks = shared.values("oauth-lock");
  }

  get where(): string {
    const { address } = this.shared.status();
    return `Redis at ${address ?? "(memory)"}`;
  }

  async read(resource: string): Promise<SignInRecord | undefined> {
    const text = await this.records.get(resourceKey(resource));
    if (text === undefined) return undefined;
    // Authenticated but not ours to read (a later format): as if signed out.
    return parseSignIn(text, resource);
  }

  async write(record: SignInRecord): Promise<void> {
    const key = resourceKey(record.resource);
    await this.records.set(key, JSON.stringify({ ...record, savedAt: Date.now() }));
    // Replicas waiting for this sign-in reconnect now; a lost notice costs only their backoff.
    await this.shared.broadcast(SIGN_IN_TOPIC, { key }).catch(() => undefined);
  }

  async remove(resource: string): Promise<boolean> {
    const key = resourceKey(resource);
    const had = (await this.shared.values("oauth").get(key)) !== undefined;
    await this.records.delete(key);
    return had;
  }

  /**
   * The lock: `SET NX` with a lifetime of `staleMs` (a replica that dies holding it frees it by
   * expiry), polled every 25 ms for at most `timeoutMs`; released only by its holder.
   */
  async withLock<T>(
    resource: string,
    fn: () => Promise<T>,
    { staleMs = 30_000, timeoutMs = 20_000 } = {},
  ): Promise<T> {
    const key = resourceKey(resource);
    const holder = randomUUID();
    const deadline = Date.now() + timeoutMs;
    while (!(await this.locks.setIfAbsent(key, holder, staleMs))) {
      if (Date.now() > deadline) {
        throw new Error(`the sign-in's refresh lock in ${this.where} is held by another replica`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    try {
      return await fn();
    } finally {
      // Ours still (not expired and taken by another): release it. A lost race here only lets
      // the other holder's lock lapse early by the few ms between get and delete.
      if ((await this.locks.get(key).catch(() => undefined)) === holder) {
        await this.locks.delete(key).catch(() => undefined);
      }
    }
  }
}
