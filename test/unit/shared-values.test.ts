/**
 * SharedValues (src/shared/types.ts): the same contract in this process and in a real
 * redis-server, which every replica reads.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { openShared } from "../../src/shared/index.js";
import type { SharedState } from "../../src/shared/types.js";
import { FakeClock } from "../helpers/clock.js";
import { eventually } from "../helpers/eventually.js";
import { findRedis, startRedis, type RunningRedis } from "../helpers/redis.js";

const clock = new FakeClock();
let redis: RunningRedis | undefined;
const opened: SharedState[] = [];
const REDIS = findRedis();

/** A fresh deployment (namespace) each time: each test starts empty. */
const STORES: {
  name: string;
  open: (deployment?: Buffer) => SharedState;
  expire: (ms: number) => Promise<void>;
}[] = [
  {
    name: "in this process",
    open: () =>
      openShared({
        deployment: randomBytes(8),
        logger: createLogger({ level: "error" }),
        now: () => clock.now(),
      }),
    expire: async (ms) => {
      await clock.advance(ms);
    },
  },
];
if (REDIS) {
  STORES.push({
    name: "in Redis",
    open: (deployment = randomBytes(8)) => {
      const shared = openShared({
        redis: redis!.url,
        deployment,
        logger: createLogger({ level: "error" }),
      });
      opened.push(shared);
      return shared;
    },
    // Redis's own clock: wait (bounded) for the key to go.
    expire: () => Promise.resolve(),
  });
}
beforeAll(async () => {
  if (REDIS) redis = await startRedis(REDIS);
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await redis?.stop();
});

describe.each(STORES)("SharedValues $name", ({ name, open, expire }) => {
  it("sets, reads, replaces and deletes; names and keys stay apart", async () => {
    const shared = open();
    const levels = shared.values("levels");
    await eventually(
      async () =>
        await levels.set("s1", "debug").then(
          () => true,
          () => false,
        ),
    );
    expect(await levels.get("s1")).toBe("debug");
    expect(await shared.values("other").get("s1")).toBeUndefined();
    await levels.set("s1", "error");
    expect(await levels.get("s1")).toBe("error");
    await levels.delete("s1");
    expect(await levels.get("s1")).toBeUndefined();
  });

  it("setIfAbsent keeps only the first holder until it is deleted or its lifetime ends", async () => {
    const shared = open();
    const locks = shared.values("locks");
    await eventually(
      async () =>
        await locks.get("x").then(
          () => true,
          () => false,
        ),
    );
    expect(await locks.setIfAbsent("refresh", "a", 60_000)).toBe(true);
    expect(await locks.setIfAbsent("refresh", "b", 60_000)).toBe(false);
    expect(await locks.get("refresh")).toBe("a");
    await locks.delete("refresh");
    expect(await locks.setIfAbsent("refresh", "b", 200)).toBe(true);
    await expire(200);
    await eventually(
      async () => (await locks.get("refresh")) === undefined,
      5_000,
      `${name}: expiry`,
    );
    expect(await locks.setIfAbsent("refresh", "c")).toBe(true);
  });

  it.runIf(name === "in Redis")(
    "is shared by two replicas of one deployment, not by another deployment",
    async () => {
      const deployment = randomBytes(8);
      const [a, b, c] = [open(deployment), open(deployment), open()];
      await eventually(
        async () =>
          await a
            .values("v")
            .set("k", "1")
            .then(
              () => true,
              () => false,
            ),
      );
      await eventually(
        async () =>
          (await b
            .values("v")
            .get("k")
            .catch(() => undefined)) === "1",
      );
      await eventually(
        async () =>
          await c
            .values("v")
            .get("k")
            .then(
              () => true,
              () => false,
            ),
      );
      expect(await c.values("v").get("k")).toBeUndefined();
    },
  );
});
