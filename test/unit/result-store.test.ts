/**
 * The store cut results are paged from (src/executor/result-store.ts): bounded by count, size and age
 * on an injected clock, and private to the caller whose call made each handle.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RESULT_STORE,
  parseResultUri,
  readPageArgs,
  resultUri,
  ResultStore,
  type StoredResult,
} from "../../src/executor/result-store.js";
import { FakeClock } from "../helpers/clock.js";

const entry = (chars: number): StoredResult => ({
  source: "s.t",
  budget: 1_000,
  parts: [{ label: "the result", pageable: { kind: "text", text: "x".repeat(chars) } }],
});

describe("ResultStore", () => {
  it("keeps at most maxResults, dropping the least recently used, whose owner hears why", () => {
    const store = new ResultStore({ maxResults: 3 });
    const ids = [1, 2, 3].map(() => store.put("a", entry(10))!);
    expect(store.get("a", ids[0]!)).toMatchObject({ source: "s.t" });
    const fourth = store.put("a", entry(10))!;
    // ids[0] was read last, so ids[1] is the least recently used.
    expect(store.get("a", ids[1]!)).toEqual({ gone: "evicted" });
    for (const id of [ids[0]!, ids[2]!, fourth]) expect(store.get("a", id)).toHaveProperty("parts");
  });

  it("keeps at most maxChars in all, and refuses a result larger than that alone", () => {
    const store = new ResultStore({ maxChars: 100 });
    const a = store.put("a", entry(60))!;
    const b = store.put("a", entry(30))!;
    expect(store.get("a", a)).toHaveProperty("parts");
    const c = store.put("a", entry(50))!;
    expect(store.get("a", b)).toEqual({ gone: "evicted" });
    expect(store.get("a", a)).toEqual({ gone: "evicted" });
    expect(store.get("a", c)).toHaveProperty("parts");
    expect(store.put("a", entry(101))).toBeUndefined();
  });

  it("counts elements by their compact JSON", () => {
    const store = new ResultStore({ maxChars: 20 });
    const items = ['{"a":1}', '{"a":2}', '{"a":3}']; // [{"a":1},{"a":2},{"a":3}]: 25 characters
    const big: StoredResult = {
      source: "s.t",
      budget: 100,
      parts: [{ label: "x", pageable: { kind: "elements", path: [], items } }],
    };
    expect(store.put("a", big)).toBeUndefined();
    expect(
      store.put("a", {
        ...big,
        parts: [
          { ...big.parts[0]!, pageable: { kind: "elements", path: [], items: items.slice(0, 2) } },
        ],
      }),
    ).toBeDefined();
  });

  it("expires results maxAgeMs after the call, on the injected clock", async () => {
    const clock = new FakeClock();
    const store = new ResultStore({ maxAgeMs: 60_000 }, () => clock.now());
    const id = store.put("a", entry(10))!;
    await clock.advance(59_999);
    expect(store.get("a", id)).toHaveProperty("parts");
    await clock.advance(2);
    expect(store.get("a", id)).toEqual({ gone: "expired" });
    // Reading does not extend the age.
    const other = store.put("a", entry(10))!;
    await clock.advance(30_000);
    store.get("a", other);
    await clock.advance(30_001);
    expect(store.get("a", other)).toEqual({ gone: "expired" });
  });

  it("gives a handle only to its caller: to any other it does not exist, gone or not", async () => {
    const clock = new FakeClock();
    const store = new ResultStore({ maxAgeMs: 1_000 }, () => clock.now());
    const id = store.put("alice", entry(10))!;
    expect(store.get("bob", id)).toBeUndefined();
    expect(store.get("bob", "never-made")).toBeUndefined();
    await clock.advance(1_001);
    expect(store.get("alice", id)).toEqual({ gone: "expired" });
    expect(store.get("bob", id)).toBeUndefined();
  });

  it("makes short, unguessable, distinct ids", () => {
    const store = new ResultStore();
    const ids = new Set(Array.from({ length: 200 }, () => store.put("a", entry(1))!));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{12}$/);
  });

  it("has documented defaults: 100 results, 64 MB, 30 minutes", () => {
    expect(DEFAULT_RESULT_STORE).toEqual({
      maxResults: 100,
      maxChars: 64 * 1024 * 1024,
      maxAgeMs: 30 * 60_000,
    });
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
