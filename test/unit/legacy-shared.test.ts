/**
 * LegacyShared (src/server/legacy-shared.ts): the 2025-era session state replicas share, on the
 * in-process store with a clock the test drives (the Redis store keeps the same contract:
 * shared-values.test.ts), and its fallback when the store cannot be reached.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import type { SessionState } from "../../src/server/legacy-sessions.js";
import { LegacyShared, type RelayedUpdate } from "../../src/server/legacy-shared.js";
import { MemoryShared } from "../../src/shared/memory.js";
import {
  SharedUnavailableError,
  type SharedState,
  type SharedValues,
} from "../../src/shared/types.js";
import { FakeClock } from "../helpers/clock.js";

const IDLE_MS = 60_000;

function setup(shared?: SharedState) {
  const clock = new FakeClock();
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", write: (l) => lines.push(l) });
  const store = shared ?? new MemoryShared(() => clock.now());
  const legacy = new LegacyShared(store, logger, IDLE_MS, () => clock.now());
  const state = (): SessionState => ({
    lastSeen: clock.now(),
    open: 0,
    exp: clock.now() + 3_600_000,
    calls: new Map(),
  });
  return { clock, lines, legacy, state };
}

describe("LegacyShared", () => {
  it("keeps a session's level for its lifetime, and only a level the spec names", async () => {
    const { clock, legacy } = setup();
    await legacy.setLevel("sid-1", "error", clock.now() + 1_000);
    await legacy.setLevel("sid-1", "loud", clock.now() + 1_000);
    expect(await legacy.level("sid-1")).toBe("error");
    expect(await legacy.level("sid-2")).toBeUndefined();
    await clock.advance(1_001);
    expect(await legacy.level("sid-1")).toBeUndefined();
  });

  it("writes last-seen at most every min(5 s, idle/4) per session, and reports it with that slack", async () => {
    const { clock, legacy, state } = setup();
    expect(legacy.touchEveryMs).toBe(5_000);
    const s = state();
    const first = clock.now();
    legacy.touch("sid", s);
    await clock.advance(4_000);
    legacy.touch("sid", s); // within the interval: not written
    expect(await legacy.lastSeen("sid")).toBe(first + 5_000);
    await clock.advance(1_000);
    legacy.touch("sid", s);
    expect(await legacy.lastSeen("sid")).toBe(clock.now() + 5_000);
    expect(await legacy.lastSeen("never-seen")).toBeUndefined();
  });

  it("keeps a session's subscriptions as a set, and forgets everything when it ends", async () => {
    const { clock, legacy, state } = setup();
    const exp = clock.now() + 10_000;
    await legacy.subscribed("sid", "a://1", true, exp);
    await legacy.subscribed("sid", "a://2", true, exp);
    await legacy.subscribed("sid", "a://1", true, exp);
    expect(await legacy.subscriptions("sid")).toEqual(["a://1", "a://2"]);
    await legacy.subscribed("sid", "a://1", false, exp);
    expect(await legacy.subscriptions("sid")).toEqual(["a://2"]);
    await legacy.setLevel("sid", "debug", exp);
    legacy.touch("sid", state());
    legacy.forget("sid");
    await clock.advance(0);
    expect(await legacy.subscriptions("sid")).toEqual([]);
    expect(await legacy.level("sid")).toBeUndefined();
    expect(await legacy.lastSeen("sid")).toBeUndefined();
  });

  it("numbers relayed updates per session and drops repeats and stale ones", () => {
    const { legacy, state } = setup();
    const sender = state();
    const receiver = state();
    const updates = [1, 2, 3].map((i) => legacy.update("sid", sender, "srv", `u://${i}`));
    expect(updates.map((u) => u.seq)).toEqual([1, 2, 3]);
    const fresh = (u: RelayedUpdate) => legacy.fresh(receiver, u);
    expect(updates.map(fresh)).toEqual([true, true, true]);
    expect(fresh(updates[1]!)).toBe(false);
    // Another replica's sequence is its own.
    expect(fresh({ ...updates[0]!, from: "other" })).toBe(true);
  });

  it("answers nothing while the store is away, warning once per outage", async () => {
    let down = true;
    const failing = (values: SharedValues): SharedValues => ({
      get: (k) => (down ? Promise.reject(unreachable()) : values.get(k)),
      set: (k, v, t) => (down ? Promise.reject(unreachable()) : values.set(k, v, t)),
      setIfAbsent: (k, v, t) => values.setIfAbsent(k, v, t),
      delete: (k) => (down ? Promise.reject(unreachable()) : values.delete(k)),
    });
    const memory = new MemoryShared();
    const shared: SharedState = {
      ...memory,
      values: (name) => failing(memory.values(name)),
      broadcast: () => (down ? Promise.reject(unreachable()) : Promise.resolve()),
      send: () => (down ? Promise.reject(unreachable()) : Promise.resolve(0)),
      listen: () => () => {},
      listening: () => Promise.resolve(),
      kept: (name, limits) => memory.kept(name, limits),
      status: () => ({ store: "redis", reachable: !down }),
      close: () => Promise.resolve(),
    };
    const { legacy, lines, state } = setup(shared);
    const exp = Date.now() + 10_000;
    await legacy.setLevel("sid", "error", exp);
    expect(await legacy.level("sid")).toBeUndefined();
    await legacy.subscribed("sid", "a://1", true, exp);
    expect(await legacy.subscriptions("sid")).toEqual([]);
    expect(await legacy.lastSeen("sid")).toBeUndefined();
    await legacy.publish({ kind: "sub", sid: "sid", uri: "a://1" });
    const warned = () => lines.filter((l) => l.includes("WARN")).length;
    expect(warned()).toBe(1);
    expect(lines.join("\n")).toMatch(/could not keep the log level in Redis/);
    // Back: it works, and the next outage is said again.
    down = false;
    await legacy.setLevel("sid", "error", exp);
    expect(await legacy.level("sid")).toBe("error");
    down = true;
    legacy.touch("sid", state());
    await legacy.level("sid");
    expect(warned()).toBe(2);
  });
});

function unreachable() {
  return new SharedUnavailableError("Redis at 127.0.0.1:1/0 is unreachable: test");
}
