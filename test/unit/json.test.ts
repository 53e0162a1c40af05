import { describe, expect, it } from "vitest";
import { canonicalJson, isRecord } from "../../src/json.js";

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
