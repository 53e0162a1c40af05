/**
 * The store cut results are paged from (src/executor/result-store.ts): bounded by count, size and age
 * (on an injected clock in this process, TTLs in Redis), and private to the caller whose call made
 * each handle; in this process and in a real redis-server (src/shared/redis.ts).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_RESULT_STORE,
  parseResultUri,
  readPageArgs,
  resultUri,
  ResultStore,
  type ResultStoreLimits,
  type StoredResult,
} from "../../src/executor/result-store.js";
import { createLogger } from "../../src/logger.js";
import { openShared } from "../../src/shared/index.js";
import { SharedUnavailableError, type SharedState } from "../../src/shared/types.js";
import { FakeClock } from "../helpers/clock.js";
import { eventually } from "../helpers/eventually.js";
import { findRedis, startRedis, type RunningRedis } from "../helpers/redis.js";

const entry = (chars: number): StoredResult => ({
  source: "s.t",
  budget: 1_000,
  parts: [{ label: "the result", pageable: { kind: "text", text: "x".repeat(chars) } }],
});

/** The in-process store, and the Redis one every replica reads (a real redis-server). */
const STORES: { name: string; make: (limits: Partial<ResultStoreLimits>) => ResultStore }[] = [
  { name: "in this process", make: (limits) => new ResultStore(limits) },
];
let redis: RunningRedis | undefined;
const opened: SharedState[] = [];
const REDIS = findRedis();
if (REDIS) {
  STORES.push({
    name: "in Redis",
    make: (limits) => {
      // A namespace per store: each test starts empty.
      const shared = openShared({
        redis: redis!.url,
        deployment: randomBytes(8),
        logger: createLogger({ level: "error" }),
      });
      opened.push(shared);
      return new ResultStore(limits, Date.now, shared);
    },
  });
}
beforeAll(async () => {
  if (REDIS) redis = await startRedis(REDIS);
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await redis?.stop();
});

/** Keep `n` entries one after another (order matters for least recently used). */
async function putAll(store: ResultStore, caller: string, sizes: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const chars of sizes) ids.push((await store.put(caller, entry(chars)))!);
  return ids;
}

describe.each(STORES)("ResultStore $name", ({ make }) => {
  it("keeps at most maxResults, dropping the least recently used, whose owner hears why", async () => {
    const store = make({ maxResults: 3 });
    await eventually(async () => (await store.put("a", entry(1)).catch(() => "")) !== "");
    const ids = await putAll(store, "a", [10, 10, 10]);
    expect(await store.get("a", ids[0]!)).toMatchObject({ source: "s.t" });
    const [fourth] = await putAll(store, "a", [10]);
    // ids[0] was read last, so ids[1] is the least recently used.
    expect(await store.get("a", ids[1]!)).toEqual({ gone: "evicted" });
    for (const id of [ids[0]!, ids[2]!, fourth!])
      expect(await store.get("a", id)).toHaveProperty("parts");
  });

  it("keeps at most maxChars in all, and refuses a result larger than that alone", async () => {
    const store = make({ maxChars: 100 });
    await eventually(async () => (await store.put("a", entry(1)).catch(() => "")) !== "");
    const [a, b] = await putAll(store, "a", [60, 30]);
    expect(await store.get("a", a!)).toHaveProperty("parts");
    const [c] = await putAll(store, "a", [50]);
    expect(await store.get("a", b!)).toEqual({ gone: "evicted" });
    expect(await store.get("a", a!)).toEqual({ gone: "evicted" });
    expect(await store.get("a", c!)).toHaveProperty("parts");
    expect(await store.put("a", entry(101))).toBeUndefined();
  });

  it("counts elements by their compact JSON", async () => {
    const store = make({ maxChars: 20 });
    const items = ['{"a":1}', '{"a":2}', '{"a":3}']; // [{"a":1},{"a":2},{"a":3}]: 25 characters
    const big: StoredResult = {
      source: "s.t",
      budget: 100,
      parts: [{ label: "x", pageable: { kind: "elements", path: [], items } }],
    };
    expect(await store.put("a", big)).toBeUndefined();
    const small: StoredResult = {
      ...big,
      parts: [
        { ...big.parts[0]!, pageable: { kind: "elements", path: [], items: items.slice(0, 2) } },
      ],
    };
    await eventually(async () => (await store.put("a", small).catch(() => "")) !== "");
    const id = (await store.put("a", small))!;
    expect(await store.get("a", id)).toEqual(small);
  });

  it("gives a handle only to its caller: to any other it does not exist", async () => {
    const store = make({});
    await eventually(async () => (await store.put("alice", entry(1)).catch(() => "")) !== "");
    const [id] = await putAll(store, "alice", [10]);
    expect(await store.get("bob", id!)).toBeUndefined();
    expect(await store.get("bob", "never-made")).toBeUndefined();
    expect(await store.get("alice", id!)).toHaveProperty("parts");
  });

  it("makes short, unguessable, distinct ids", async () => {
    const store = make({});
    await eventually(async () => (await store.put("a", entry(1)).catch(() => "")) !== "");
    const ids = new Set(
      await putAll(
        store,
        "a",
        Array.from({ length: 200 }, () => 1),
      ),
    );
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{12}$/);
  });
});

describe("ResultStore in this process, on an injected clock", () => {
  it("expires results maxAgeMs after the call", async () => {
    const clock = new FakeClock();
    const store = new ResultStore({ maxAgeMs: 60_000 }, () => clock.now());
    const id = (await store.put("a", entry(10)))!;
    await clock.advance(59_999);
    expect(await store.get("a", id)).toHaveProperty("parts");
    await clock.advance(2);
    expect(await store.get("a", id)).toEqual({ gone: "expired" });
    // Reading does not extend the age.
    const other = (await store.put("a", entry(10)))!;
    await clock.advance(30_000);
    await store.get("a", other);
    await clock.advance(30_001);
    expect(await store.get("a", other)).toEqual({ gone: "expired" });
  });

  it("says expired to the handle's caller only", async () => {
    const clock = new FakeClock();
    const store = new ResultStore({ maxAgeMs: 1_000 }, () => clock.now());
    const id = (await store.put("alice", entry(10)))!;
    await clock.advance(1_001);
    expect(await store.get("alice", id)).toEqual({ gone: "expired" });
    expect(await store.get("bob", id)).toBeUndefined();
  });

  it("has documented defaults: 100 results, 64 MB, 30 minutes", () => {
    expect(DEFAULT_RESULT_STORE).toEqual({
      maxResults: 100,
      maxChars: 64 * 1024 * 1024,
      maxAgeMs: 30 * 60_000,
    });
  });
});

describe.skipIf(!REDIS)("ResultStore in Redis: age and outages", () => {
  it("expires a result with its TTL (Redis's clock), and says so to its caller only", async () => {
    const store = STORES[1]!.make({ maxAgeMs: 300 });
    await eventually(async () => (await store.put("a", entry(1)).catch(() => "")) !== "");
    const [id] = await putAll(store, "a", [10]);
    await eventually(
      async () => JSON.stringify(await store.get("a", id!)) === '{"gone":"expired"}',
      5_000,
      "the TTL to expire the result",
    );
    expect(await store.get("b", id!)).toBeUndefined();
  });

  it("fails clearly, naming Redis, while it is down, and works again once it is back", async () => {
    const store = STORES[1]!.make({});
    await eventually(async () => (await store.put("a", entry(1)).catch(() => "")) !== "");
    const [id] = await putAll(store, "a", [10]);
    await redis!.stop();
    try {
      await expect(store.get("a", id!)).rejects.toThrow(
        new RegExp(`Redis at 127\\.0\\.0\\.1:${redis!.port}/0 .* is unreachable`),
      );
      await expect(store.put("a", entry(1))).rejects.toBeInstanceOf(SharedUnavailableError);
    } finally {
      await redis!.start();
    }
    // No persistence: the old handle is gone with the old server; new ones work at once.
    await eventually(async () => (await store.put("a", entry(1)).catch(() => "")) !== "");
    expect(await store.get("a", id!)).toBeUndefined();
  });
});

describe("result URIs and page arguments", () => {
  it("round-trips ids and parts", () => {
    expect(resultUri("abc")).toBe("mcpx://results/abc");
    expect(resultUri("abc", 2)).toBe("mcpx://results/abc/2");
    expect(parseResultUri("mcpx://results/abc")).toEqual({ id: "abc", part: 1 });
    expect(parseResultUri("mcpx://results/abc/2")).toEqual({ id: "abc", part: 2 });
    for (const bad of ["mcpx://results/", "mcpx://results/a b", "mcpx://results/a/0", "file:///x"])
      expect(parseResultUri(bad), bad).toBeUndefined();
  });

  it("reads offset and limit, accepting whole numbers written as strings", () => {
    expect(readPageArgs({})).toEqual({ offset: 0 });
    expect(readPageArgs({ offset: 412, limit: 50 })).toEqual({ offset: 412, limit: 50 });
    expect(readPageArgs({ offset: "412" })).toEqual({ offset: 412 });
    const error = (args: Record<string, unknown>) => {
      const r = readPageArgs(args);
      return "error" in r ? r.error : "";
    };
    expect(error({ offset: -1 })).toContain('"offset" must be a whole number from 0');
    expect(error({ offset: 1.5 })).toContain('"offset"');
    expect(error({ limit: 0 })).toContain('"limit" must be a whole number from 1');
  });
});
