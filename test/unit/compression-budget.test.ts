/**
 * Cutting to a token budget (src/compression/budget.ts): element boundaries, nested arrays,
 * line breaks, pages that reassemble the exact original, and real o200k counts under the budget.
 */
import { decode as decodeToon } from "@toon-format/toon";
import { createHash } from "node:crypto";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  budgetTokens,
  cutJson,
  cutText,
  largestFitting,
  pageOf,
  type Cut,
  type Pageable,
} from "../../src/compression/budget.js";
import { jsonOfText } from "../../src/compression/result.js";
import { decodeSparse } from "../../src/compression/sparse.js";
import { SHAPES } from "../fixtures/results/shapes.js";

/** The rows the replay fixture's uniform_rows answers (test/fixtures/upstreams/replay.mjs). */
function rows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `item-${i + 1}`,
    state: i % 3 === 0 ? "closed" : "open",
    created_at: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString(),
    score: (i * 37) % 100,
  }));
}

const json = (value: unknown) => jsonOfText(JSON.stringify(value))!;

/** Any of the encodings a head or page may use, read back. */
function decode(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // TOON or a sparse table.
  }
  try {
    return decodeSparse(text);
  } catch {
    return decodeToon(text);
  }
}

/** Every page from `cut.next` to the end, as the resources tool would serve them. */
function pages(cut: Cut, budget: number): string[] {
  const out: string[] = [];
  const total = cut.pageable.kind === "text" ? cut.pageable.text.length : cut.pageable.items.length;
  for (let offset = cut.next; offset < total;) {
    const page = pageOf(cut.pageable, offset, undefined, budget, "auto");
    expect(page.end, "every page moves on").toBeGreaterThan(offset);
    expect(budgetTokens(page.text)).toBeLessThanOrEqual(budget);
    out.push(page.text);
    offset = page.end;
  }
  return out;
}

function elements(p: Pageable) {
  if (p.kind !== "elements") throw new Error(`expected elements, got ${p.kind}`);
  return p;
}

describe("cutJson", () => {
  it("cuts a root array between elements: the head is exactly the first k, and k+1 would not fit", () => {
    const data = rows(2_000);
    const cut = cutJson(json(data), 1_000, 1_000, "auto");
    const k = cut.next;
    expect(k).toBeGreaterThan(10);
    expect(k).toBeLessThan(2_000);
    expect(decode(cut.head)).toEqual(data.slice(0, k));
    expect(budgetTokens(cut.head)).toBeLessThanOrEqual(1_000);
    expect(elements(cut.pageable).path).toEqual([]);
    // Kept as compact JSON per element: what a page parses back.
    expect(elements(cut.pageable).items.map((i) => JSON.parse(i) as unknown)).toEqual(data);
    const next = cutJson(json(data.slice(0, k + 1)), 1_000, 1_000, "auto");
    expect(next.next, "one more element does not fit").toBe(k);
  });

  it("cuts the largest array inside an object and keeps the rest of the object", () => {
    const data = { total_count: 5_000, incomplete: false, items: rows(5_000), labels: ["a", "b"] };
    const cut = cutJson(json(data), 1_500, 1_500, "auto");
    const k = cut.next;
    expect(k).toBeGreaterThan(0);
    expect(decode(cut.head)).toEqual({ ...data, items: data.items.slice(0, k) });
    expect(elements(cut.pageable).path).toEqual(["items"]);
  });

  it("finds an array two objects deep", () => {
    const data = { data: { search: { nodes: rows(3_000) }, cursor: "abc" } };
    const cut = cutJson(json(data), 1_000, 1_000, "auto");
    expect(elements(cut.pageable).path).toEqual(["data", "search", "nodes"]);
    expect(decode(cut.head)).toEqual({
      data: { search: { nodes: data.data.search.nodes.slice(0, cut.next) }, cursor: "abc" },
    });
  });

  it("pages an array to the end: head + pages are exactly the original elements", () => {
    const data = { items: rows(3_000), total_count: 3_000 };
    const cut = cutJson(json(data), 900, 1_000, "auto");
    const head = decode(cut.head) as { items: unknown[] };
    const rest = pages(cut, 1_000).flatMap((p) => decode(p) as unknown[]);
    expect([...head.items, ...rest]).toEqual(data.items);
  });

  it("falls back to text at line breaks when one element alone is larger than a page", () => {
    const data = [{ id: 1, body: "word ".repeat(5_000) }, ...rows(50)];
    const cut = cutJson(json(data), 500, 500, "auto");
    expect(cut.pageable.kind).toBe("text");
    const text = (cut.pageable as { text: string }).text;
    expect(text.startsWith(cut.head)).toBe(true);
    expect(cut.head + pages(cut, 500).join("")).toBe(text);
    expect(decode(text)).toEqual(data);
  });

  it("cuts JSON with integers past 2^53 as its own text, never re-serialized", () => {
    const raw = `[${Array.from({ length: 500 }, (_, i) => `{"id":${9007199254740993n + BigInt(i * 2)},"n":${i}}`).join(",")}]`;
    const cut = cutJson(jsonOfText(raw)!, 300, 300, "auto");
    expect(cut.pageable).toEqual({ kind: "text", text: raw });
    expect(cut.head + pages(cut, 300).join("")).toBe(raw);
  });
});

describe("cutText", () => {
  const log = Array.from(
    { length: 3_000 },
    (_, i) => `2025-01-01T00:00:${i % 60}Z line ${i}: ok`,
  ).join("\n");

  it("cuts at a line break, and reports the characters shown", () => {
    const cut = cutText(log, 400);
    expect(cut.head.endsWith("\n")).toBe(true);
    expect(log.startsWith(cut.head)).toBe(true);
    expect(cut.next).toBe(cut.head.length);
    expect(budgetTokens(cut.head)).toBeLessThanOrEqual(400);
  });

  it("pages text to the end, reassembling it exactly, each page within the budget", () => {
    const cut = cutText(log, 400);
    expect(cut.head + pages(cut, 400).join("")).toBe(log);
  });

  it("never splits a surrogate pair, and moves on even through one long line", () => {
    const emoji = "😀".repeat(3_000);
    const cut = cutText(emoji, 200);
    expect(cut.next % 2).toBe(0);
    expect(cut.head + pages(cut, 200).join("")).toBe(emoji);
  });

  it("honours a limit in characters exactly", () => {
    const page = pageOf({ kind: "text", text: log }, 10, 100, 10_000, "auto");
    expect(page.end).toBe(110);
    expect(page.text).toBe(log.slice(10, 110));
  });
});

describe("pageOf elements", () => {
  it("returns at most limit elements, from offset, encoded like any result", () => {
    const items = rows(100);
    const page = pageOf(
      { kind: "elements", path: [], items: items.map((i) => JSON.stringify(i)) },
      40,
      7,
      10_000,
      "auto",
    );
    expect(page.end).toBe(47);
    expect(decode(page.text)).toEqual(items.slice(40, 47));
  });
});

/** `bytes` deterministic pseudo-random bytes (sha256 in counter mode). */
function noise(bytes: number): Buffer {
  const blocks = Array.from({ length: Math.ceil(bytes / 32) }, (_, i) =>
    createHash("sha256").update(String(i)).digest(),
  );
  return Buffer.concat(blocks).subarray(0, bytes);
}

function uuidOf(i: number): string {
  const h = createHash("sha256").update(`uuid${i}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

describe("the budget holds as o200k counts it", () => {
  const budget = 2_000;
  const samples: Record<string, string> = {
    ...Object.fromEntries(
      Object.entries(SHAPES).map(([k, make]) => [k, JSON.stringify(make())] as const),
    ),
    rows: JSON.stringify(rows(3_000)),
    prose: "The quick brown fox jumps over the lazy dog; it was not amused.\n".repeat(800),
    chinese: "模型上下文协议是一个开放协议，使应用程序与外部数据源无缝集成。\n".repeat(400),
    russian: "Протокол контекста модели — это открытый протокол интеграции.\n".repeat(400),
    // Random strings are no words: o200k spends a token per 1.5 to 2 of their characters.
    base64: noise(24_000).toString("base64"),
    "base64 in JSON": JSON.stringify({
      mimeType: "image/png",
      data: noise(12_000).toString("base64"),
    }),
    hex: noise(12_000).toString("hex"),
    uuids: Array.from({ length: 600 }, (_, i) => uuidOf(i)).join("\n"),
    camelCase: "getElementByIdAndReturnValue someVariableName anotherCamelCaseThing ".repeat(300),
  };
  for (const [name, text] of Object.entries(samples)) {
    it(`${name}: head and every page within ${budget} real tokens`, () => {
      const parsed = jsonOfText(text);
      const cut = parsed ? cutJson(parsed, budget, budget, "auto") : cutText(text, budget);
      for (const t of [cut.head, ...pages(cut, budget)]) {
        expect(countTokens(t)).toBeLessThanOrEqual(budget);
      }
    });
  }
});

describe("largestFitting", () => {
  it("finds the largest n for any threshold, and 0 when nothing fits", () => {
    for (const max of [0, 1, 2, 7, 100, 1_000]) {
      for (const limit of [0, 1, 3, 50, 999, 5_000]) {
        expect(largestFitting(max, (n) => n <= limit)).toBe(Math.min(max, limit));
      }
    }
  });
});
