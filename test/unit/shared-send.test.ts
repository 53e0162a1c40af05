/**
 * SharedState.send and listening (src/shared/types.ts), which mid-call answers and retries use to
 * reach the one replica that asked: in a real redis-server, a message sent after `listening`
 * resolved reaches the listener, `send` counts the other replicas that heard it (0 for a topic
 * nobody listens to, and for a replica's own topic), and with Redis stopped both fail naming
 * Redis. In this process alone nobody hears anything and there is nothing to wait for.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { openShared } from "../../src/shared/index.js";
import { SharedUnavailableError, type SharedState } from "../../src/shared/types.js";
import { eventually } from "../helpers/eventually.js";
import { findRedis, startRedis, type RunningRedis } from "../helpers/redis.js";

const REDIS = findRedis();
let redis: RunningRedis | undefined;
const opened: SharedState[] = [];

function open(deployment: Buffer, url?: string): SharedState {
  const shared = openShared({
    ...(url !== undefined && { redis: url }),
    deployment,
    logger: createLogger({ level: "error" }),
  });
  opened.push(shared);
  return shared;
}

beforeAll(async () => {
  if (REDIS) redis = await startRedis(REDIS);
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await redis?.stop();
});

describe("SharedState.send in this process", () => {
  it("is heard by nobody, and listening has nothing to wait for", async () => {
    const shared = open(randomBytes(8));
    const heard: unknown[] = [];
    shared.listen("t", (m) => heard.push(m));
    await shared.listening("t");
    expect(await shared.send("t", { n: 1 })).toBe(0);
    expect(heard).toEqual([]);
  });
});

describe.skipIf(!REDIS)("SharedState.send in Redis", () => {
  it("reaches the one replica listening, once it listens, and counts who heard", async () => {
    const deployment = randomBytes(8);
    const [asker, other] = [open(deployment, redis!.url), open(deployment, redis!.url)];
    const heard: unknown[] = [];
    asker.listen("answers:asker", (m) => heard.push(m));
    await eventually(
      () =>
        asker.listening("answers:asker").then(
          () => true,
          () => false,
        ),
      10_000,
      "the subscription",
    );
    // No wait after listening: a message sent now is heard.
    await eventually(
      () =>
        other.send("answers:asker", { n: 1 }).then(
          (n) => n === 1,
          () => false,
        ),
      10_000,
      "the other replica to reach Redis",
    );
    await eventually(() => heard.length === 1, 5_000, "the message");
    expect(heard).toEqual([{ n: 1 }]);
    expect(await other.send("answers:nobody", { n: 2 })).toBe(0);
    // Its own topic: not heard by itself, and not counted.
    expect(await asker.send("answers:asker", { n: 3 })).toBe(0);
    // Another deployment on the same Redis hears nothing of this one.
    const stranger = open(randomBytes(8), redis!.url);
    await eventually(
      () =>
        stranger.send("answers:asker", { n: 4 }).then(
          (n) => n === 0,
          () => false,
        ),
      10_000,
      "the stranger to reach Redis",
    );
    expect(await other.send("answers:asker", { n: 5 })).toBe(1);
    await eventually(() => heard.length === 2, 5_000, "the last message");
    expect(heard).toEqual([{ n: 1 }, { n: 5 }]);
  });

  it("fails naming Redis while it is stopped, and works once it is back", async () => {
    const deployment = randomBytes(8);
    const [asker, other] = [open(deployment, redis!.url), open(deployment, redis!.url)];
    asker.listen("answers:a", () => {});
    await eventually(
      () =>
        asker.listening("answers:a").then(
          () => true,
          () => false,
        ),
      10_000,
      "the subscription",
    );
    await redis!.stop();
    try {
      await eventually(() => !asker.status().reachable && !other.status().reachable, 10_000);
      const listening = await asker.listening("answers:a").catch((err: unknown) => err);
      expect(listening).toBeInstanceOf(SharedUnavailableError);
      expect((listening as Error).message).toMatch(/^Redis at 127\.0\.0\.1:\d+\/0 .*unreachable/);
      const sent = await other.send("answers:a", {}).catch((err: unknown) => err);
      expect(sent).toBeInstanceOf(SharedUnavailableError);
    } finally {
      await redis!.start();
    }
    await eventually(
      () =>
        asker.listening("answers:a").then(
          () => true,
          () => false,
        ),
      15_000,
      "the subscription to be back",
    );
    await eventually(
      () =>
        other.send("answers:a", {}).then(
          (n) => n === 1,
          () => false,
        ),
      15_000,
      "a message heard again",
    );
  });
});
