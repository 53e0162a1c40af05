/**
 * Result encoding is lossless and never a flood: every text the proxy can produce for JSON
 * (compact JSON, TOON, sparse tables) decodes to exactly the upstream's data — missing vs null vs
 * empty string, keys with dots, numbers vs numeric strings — over fast-check generated inputs and
 * realistic payloads, and is never more o200k tokens than compact JSON.
 */
import { isDeepStrictEqual } from "node:util";

import { decode as decodeToon, encode as encodeToon } from "@toon-format/toon";
import fc from "fast-check";
import { encode as countTokens } from "gpt-tokenizer";
import { describe, expect, it } from "vitest";

import { compressResult } from "../../src/compression/result.js";
import { decodeSparse, encodeSparse } from "../../src/compression/sparse.js";
import type { ToolResult } from "../../src/types.js";
import { SHAPES } from "../fixtures/results/shapes.js";

/** What the model is given for `data` sent as pretty JSON text. */
function proxied(data: unknown): string {
  const result: ToolResult = { content: [{ type: "text", text: JSON.stringify(data, null, 2) }] };
  return compressResult(result, "auto").content[0]!.text as string;
}

/** Decode whichever form the proxy chose (it is told apart by re-encoding, as a reader could). */
function decodeAny(text: string, data: unknown): unknown {
  if (text === JSON.stringify(data)) return JSON.parse(text);
  if (text === encodeSparse(data)) return decodeSparse(text);
  if (text === encodeToon(data)) return decodeToon(text);
  throw new Error(`unknown form:\n${text}`);
}

/** JSON values as JSON.parse makes them (no -0, no undefined), with record arrays favoured. */
const key = fc.oneof(
  fc.constantFrom("id", "name", "user", "login", "a.b", "x y", "", "1", "-", "#", '"q"', "[0]"),
  fc.string({ maxLength: 6 }),
);
const primitive = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    "",
    "null",
    "true",
    "12",
    "01",
    "1.0",
    "-5",
    "1e5",
    " x",
    "a,b",
    "[1]",
    "{}",
    "#c",
    "a\nb",
    "2025-01-01T00:00:00Z",
  ),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
);
const { value: jsonValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    primitive,
    tie("records"),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 5 }),
  ),
  record: fc.dictionary(
    key,
    fc.oneof(primitive, fc.dictionary(key, primitive, { maxKeys: 3 }), tie("value")),
    {
      maxKeys: 6,
    },
  ),
  records: fc.array(tie("record"), { minLength: 1, maxLength: 6 }),
}));
/** Sparse record arrays with shared keys, nested objects and holes: the shape tables are for. */
const recordsLike = fc
  .array(
    fc.record(
      {
        id: fc.integer(),
        title: primitive,
        user: fc.record({ login: primitive, "a.b": primitive }, { requiredKeys: [] }),
        "x.y": primitive,
        tags: fc.array(primitive, { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((rows) => JSON.parse(JSON.stringify(rows)) as unknown);
const anyJson = fc
  .oneof(jsonValue, recordsLike, fc.record({ total: fc.integer(), items: recordsLike }))
  .filter((v) => typeof v === "object" && v !== null)
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe("sparse tables", () => {
  it("round-trip every generated JSON value exactly", () => {
    fc.assert(
      fc.property(anyJson, (data) => {
        const text = encodeSparse(data);
        if (text === undefined) return true;
        return isDeepStrictEqual(decodeSparse(text), data);
      }),
      { numRuns: 2000 },
    );
  });

  it("tell missing, null, empty string, numbers, numeric strings and dotted keys apart", () => {
    const data = [
      { a: 1, "b.c": "", d: { e: null } },
      { a: "1", b: { c: "x" }, d: { e: "null" } },
      { a: null },
      {},
    ];
    const text = encodeSparse(data)!;
    expect(text.split("\n")[0]).toBe("# empty cell = key absent; a.b = key b inside object a");
    expect(text).toContain('[4]{a,"b.c",d.e,b.c}:');
    expect(decodeSparse(text)).toEqual(data);
    expect(isDeepStrictEqual(decodeSparse(text), data)).toBe(true);
  });

  it("are not used where there is no array of records", () => {
    expect(encodeSparse({ a: 1, b: [1, 2] })).toBeUndefined();
    expect(encodeSparse([1, 2, 3])).toBeUndefined();
    expect(encodeSparse([{}, {}])).toBeUndefined();
  });
});

describe("proxied results", () => {
  it("decode to the upstream's data, for generated values", () => {
    fc.assert(
      fc.property(anyJson, (data) => isDeepStrictEqual(decodeAny(proxied(data), data), data)),
      { numRuns: 1000 },
    );
  });

  it("are never more tokens than compact JSON, for generated values", () => {
    fc.assert(
      fc.property(anyJson, (data) => {
        const out = proxied(data);
        return countTokens(out).length <= countTokens(JSON.stringify(data)).length;
      }),
      { numRuns: 1000 },
    );
  });

  it.each(Object.keys(SHAPES))("%s: lossless and never above compact JSON", (name) => {
    const data = SHAPES[name as keyof typeof SHAPES]();
    const out = proxied(data);
    expect(decodeAny(out, data)).toEqual(data);
    expect(countTokens(out).length).toBeLessThanOrEqual(countTokens(JSON.stringify(data)).length);
  });

  it.each(["github_issues", "search_hits", "logs", "mixed_array"] as const)(
    "%s (semi-uniform records) is at most 0.85 of compact JSON",
    (name) => {
      const data = SHAPES[name]();
      const ratio = countTokens(proxied(data)).length / countTokens(JSON.stringify(data)).length;
      expect(ratio).toBeLessThanOrEqual(0.85);
    },
  );

  it("leaves text that is not JSON, images, audio and resource links untouched", () => {
    const input: ToolResult = {
      content: [
        { type: "text", text: "level=info msg={not json}" },
        { type: "text", text: '  {"a": 1} trailing' },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///b.json", name: "b" },
      ],
    };
    expect(compressResult(input, "auto")).toBe(input);
  });
});
