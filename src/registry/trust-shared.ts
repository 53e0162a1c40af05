/**
 * Trust pins shared by replicas through Redis (`redis` with an `encryptionKey`, issue 31): one
 * approval serves every replica. Redis holds each launch's pin files (index and definitions) as
 * one sealed value (src/shared/sealed.ts) under its launch key; each replica's pin files stay its
 * working copy, read synchronously as before (trust-store.ts).
 *
 * - Every `save` (a replica pinning on first sight, recording a change, the dashboard's or
 *   `mcpx trust approve`'s approval) is copied to Redis and announced on the `pins` topic.
 * - A replica hearing it copies the value into its files and checks the server again
 *   (`onPulled` → `Registry.repin`): a held change another replica approved is released, no
 *   restart. At start, Redis's copy replaces the local one (or the local one seeds Redis).
 *
 * Copying only what differs ends the exchange: a replica that re-checks after a pull finds its
 * entry unchanged and writes nothing back.
 */
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { sealValues } from "../shared/sealed.js";
import type { SharedState, SharedValues } from "../shared/types.js";
import type { PinStore } from "./trust-store.js";

/** The topic a changed pin entry is announced on (its launch key: nothing secret). */
export const PINS_TOPIC = "pins";

interface Copy {
  index: string;
  defs?: string;
}

export class SharedPins {
  private readonly values: SharedValues;
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly store: PinStore,
    private readonly shared: SharedState,
    encryptionKey: string,
    private readonly logger: Logger,
  ) {
    this.values = sealValues(shared.values("pins"), encryptionKey, "pins", "the trust pins");
  }

  /**
   * Copy saves to Redis and take other replicas' saves: `onPulled(key)` after a pull changed the
   * local files. Returns how to stop.
   */
  start(onPulled: (key: string) => void): () => void {
    this.store.onSave = (key) => {
      void this.push(key).catch((err: unknown) =>
        this.logger.warn(`trust pins not shared through Redis: ${errorMessage(err)}`),
      );
    };
    this.stopListening = this.shared.listen(PINS_TOPIC, (message) => {
      const key = (message as { key?: unknown } | null)?.key;
      if (typeof key !== "string" || !/^[\w.-]+$/.test(key)) return;
      void this.pull(key).then(
        (changed) => {
          this.logger.debug(
            `trust pins ${key} saved by another replica${changed ? "" : " (as here)"}`,
          );
          if (changed) onPulled(key);
        },
        (err: unknown) => this.logger.warn(`trust pins not read from Redis: ${errorMessage(err)}`),
      );
    });
    return () => this.stop();
  }

  stop(): void {
    this.store.onSave = undefined;
    this.stopListening?.();
    this.stopListening = undefined;
  }

  /** Copy the local files of `key` to Redis and announce them; nothing when there are none. */
  async push(key: string): Promise<void> {
    const text = this.store.readText(key);
    if (text.index === undefined) return;
    const copy: Copy = { index: text.index, ...(text.defs !== undefined && { defs: text.defs }) };
    await this.values.set(key, JSON.stringify(copy));
    await this.shared.broadcast(PINS_TOPIC, { key });
  }

  /** Replace the local files of `key` by Redis's copy when it differs; true when they changed. */
  async pull(key: string): Promise<boolean> {
    const stored = await this.values.get(key);
    if (stored === undefined) return false;
    const copy = JSON.parse(stored) as Copy;
    if (typeof copy.index !== "string") return false;
    const local = this.store.readText(key);
    if (local.index === copy.index && (copy.defs === undefined || local.defs === copy.defs)) {
      return false;
    }
    this.store.writeText(key, copy);
    return true;
  }

  /**
   * At start, for each launch key: Redis's copy replaces the local files; a key Redis lacks is
   * seeded from them. Redis unreachable: the local files serve, said once.
   */
  async sync(keys: Iterable<string>): Promise<void> {
    try {
      for (const key of keys) {
        if ((await this.values.get(key)) === undefined) await this.push(key);
        else await this.pull(key);
      }
    } catch (err) {
      this.logger.warn(
        `trust pins: using this machine's copy, Redis's not read: ${errorMessage(err)}`,
      );
    }
  }
}
