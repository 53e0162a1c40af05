import { parseJSONRPCMessage } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, isRecord, looksLikeJsonRpc } from "../../src/json.js";

describe("canonicalJson", () => {
  it("prints equal values alike whatever their key order, at every depth", () => {
    const a = { b: 1, a: { y: [{ q: 1, p: 2 }], x: null } };
    const b = { a: { x: null, y: [{ p: 2, q: 1 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"x":null,"y":[{"p":2,"q":1}]},"b":1}');
  });

  it("keeps array order and leaves out undefined properties", () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });
});

describe("isRecord", () => {
  it("is true for objects only: never null, an array or a scalar", () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    for (const v of [null, undefined, [], [1], "x", 1, true]) expect(isRecord(v)).toBe(false);
  });
});

describe("looksLikeJsonRpc", () => {
  it("never refuses what the SDK's message schema accepts", () => {
    const other = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.constant(null),
      fc.constant({}),
      fc.constant([]),
    );
    // The four shapes of message, each key likely of its type or else anything, some missing.
    const maybe = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: arb, weight: 4 }, { arbitrary: other, weight: 1 });
    const jsonrpc = maybe(fc.constant("2.0"));
    const id = maybe(fc.oneof(fc.string(), fc.integer()));
    const message = fc.oneof(
      fc.record(
        { jsonrpc, id, method: maybe(fc.string()), params: maybe(fc.constant({})) },
        { requiredKeys: ["jsonrpc", "method"] },
      ),
      fc.record({ jsonrpc, id, result: maybe(fc.constant({})) }, { requiredKeys: ["jsonrpc"] }),
      fc.record(
        { jsonrpc, id, error: maybe(fc.record({ code: fc.integer(), message: fc.string() })) },
        { requiredKeys: ["jsonrpc"] },
      ),
    );
    let accepted = 0;
    fc.assert(
      fc.property(message, (m) => {
        try {
          parseJSONRPCMessage(m);
        } catch {
          return;
        }
        accepted += 1;
        expect(looksLikeJsonRpc(m)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
    // The property was put to the test: many of the objects were messages.
    expect(accepted).toBeGreaterThan(200);
  });

  it("turns down what is plainly no message", () => {
    expect(looksLikeJsonRpc({ a: 1 })).toBe(false);
    expect(looksLikeJsonRpc({ jsonrpc: "2.0", id: 7, method: 42 })).toBe(false);
    expect(looksLikeJsonRpc({ method: "ping", id: 1 })).toBe(false);
    expect(looksLikeJsonRpc({ jsonrpc: "2.0", id: 1, result: {} })).toBe(true);
    expect(looksLikeJsonRpc({ jsonrpc: "2.0", error: { code: 1, message: "m" } })).toBe(true);
  });
});
