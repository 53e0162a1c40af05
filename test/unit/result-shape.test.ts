/**
 * The last step of a call (src/executor/shape.ts): select, then the budget. Cut answers, pages
 * read back to the exact original, media untouched and uncounted, select's errors and hints.
 */
import { decode as decodeToon } from "@toon-format/toon";
import { createHash } from "node:crypto";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { applySelect, selectedNothing, shapeOf } from "../../src/compression/select.js";
import { compressResult } from "../../src/compression/result.js";
import { decodeSparse } from "../../src/compression/sparse.js";
import { ResultStore } from "../../src/executor/result-store.js";
import { ResultShaper, type ShapeRequest } from "../../src/executor/shape.js";
import type { ToolResult } from "../../src/types.js";
import { FakeClock } from "../helpers/clock.js";

function rows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `item-${i + 1}`,
    state: i % 3 === 0 ? "closed" : "open",
    score: (i * 37) % 100,
  }));
}

const req = (extra: Partial<ShapeRequest> = {}): ShapeRequest => ({
  source: "srv.tool",
  budget: 1_000,
  caller: "alice",
  ...extra,
});

const texts = (r: ToolResult) =>
  r.content.filter((b) => b.type === "text").map((b) => b.text as string);
const all = (r: ToolResult) => texts(r).join("\n");

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

/** The `resources({ uri, offset })` call a cut answer or a page says to make next. */
function nextCall(text: string): { uri: string; offset: number } | undefined {
  const m = /resources\(\{ uri: "([^"]+)", offset: (\d+) \}\)/.exec(text);
  return m ? { uri: m[1]!, offset: Number(m[2]) } : undefined;
}

/** Follow the "next" calls from a cut answer to the last page; returns each page's data text. */
async function readAll(
  shaper: ResultShaper,
  first: ToolResult,
  caller = "alice",
): Promise<string[]> {
  const out: string[] = [];
  let next = nextCall(texts(first)[0]!);
  while (next) {
    const page = await shaper.page(next.uri, next.offset, undefined, caller);
    expect(page.isError, texts(page)[0]).toBeUndefined();
    const [notice, data] = texts(page);
    out.push(data!);
    next = nextCall(notice!);
    if (!next) expect(notice).toContain("this is the last page");
  }
  return out;
}

describe("ResultShaper: the budget", () => {
  it("returns a result that fits exactly as compressResult does, structuredContent included", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const data = rows(20);
    const result: ToolResult = {
      content: [{ type: "text", text: JSON.stringify(data, null, 2) }],
      structuredContent: { rows: data },
    };
    expect(await shaper.shape(result, req())).toEqual(compressResult(result, "auto"));
  });

  it("cuts a large array: a notice first, the head that fits, N of M elements, no structuredContent", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const data = rows(5_000);
    const result: ToolResult = {
      content: [{ type: "text", text: JSON.stringify(data) }],
      structuredContent: { rows: data },
    };
    const out = await shaper.shape(result, req());
    const [notice, head] = texts(out);
    const shown = (decode(head!) as unknown[]).length;
    expect(notice).toMatch(
      new RegExp(
        `^Result cut to fit the 1000-token budget \\(≈\\d+ tokens in all\\): ${shown} of 5000 elements shown; next: resources\\(\\{ uri: "mcpx://results/[\\w-]+", offset: ${shown} \\}\\)\\.`,
      ),
    );
    expect(decode(head!)).toEqual(data.slice(0, shown));
    expect(out.structuredContent).toBeUndefined();
    const [meta] = out._meta?.["mcpx/cut"] as { uri: string }[];
    expect(meta).toEqual({ uri: meta!.uri, unit: "elements", shown, total: 5000 });
    expect(meta!.uri).toMatch(/^mcpx:\/\/results\/[\w-]{12}$/);
    expect(countTokens(all(out))).toBeLessThanOrEqual(1_000);
  });

  it("sends a 32,000-character base64 text within the default 8,000-token budget, on a token count", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const bytes = Buffer.concat(
      Array.from({ length: 750 }, (_, i) => createHash("sha256").update(String(i)).digest()),
    ).subarray(0, 24_000);
    const text = bytes.toString("base64");
    expect(text).toHaveLength(32_000);
    const out = await shaper.shape({ content: [{ type: "text", text }] }, req({ budget: 8_000 }));
    expect(countTokens(all(out))).toBeLessThanOrEqual(8_000);
    const [notice, head] = texts(out);
    expect(notice).toMatch(
      new RegExp(
        `^Result cut to fit the 8000-token budget \\(≈\\d+ tokens in all\\): the first ${head!.length} of 32000 characters shown; next: resources\\(\\{ uri: "mcpx://results/[\\w-]+", offset: ${head!.length} \\}\\)\\.`,
      ),
    );
    // Every page holds the budget too, and the pages are exactly the rest.
    const pages = await readAll(shaper, out);
    for (const p of pages) expect(countTokens(p)).toBeLessThanOrEqual(8_000);
    expect(head! + pages.join("")).toBe(text);
  });

  it("pages to the end: head and pages are exactly the original array", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const data = rows(3_000);
    const out = await shaper.shape(
      { content: [{ type: "text", text: JSON.stringify(data) }] },
      req(),
    );
    const head = decode(texts(out)[1]!) as unknown[];
    const rest = (await readAll(shaper, out)).flatMap((p) => decode(p) as unknown[]);
    expect([...head, ...rest]).toEqual(data);
  });

  it("keeps the object around a nested array and names it", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const data = { total_count: 4_000, items: rows(4_000) };
    const out = await shaper.shape(
      { content: [{ type: "text", text: JSON.stringify(data) }] },
      req(),
    );
    const [notice, head] = texts(out);
    const decoded = decode(head!) as typeof data;
    expect(decoded.total_count).toBe(4_000);
    expect(notice).toContain(`${decoded.items.length} of 4000 elements of "items" shown`);
    const rest = (await readAll(shaper, out)).flatMap((p) => decode(p) as unknown[]);
    expect([...decoded.items, ...rest]).toEqual(data.items);
  });

  it("cuts plain text at a line break, never altering it, and pages it back exactly", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const log = Array.from({ length: 2_000 }, (_, i) => `line ${i}: {"not": json`).join("\n");
    const out = await shaper.shape({ content: [{ type: "text", text: log }] }, req());
    const [notice, head] = texts(out);
    expect(notice).toMatch(/the first (\d+) of \d+ characters shown/);
    expect(head!.endsWith("\n")).toBe(true);
    expect(head! + (await readAll(shaper, out)).join("")).toBe(log);
  });

  it("pages in useful steps under the smallest budget (100 tokens)", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const log = Array.from({ length: 200 }, (_, i) => `line ${i}: some log text`).join("\n");
    const out = await shaper.shape(
      { content: [{ type: "text", text: log }] },
      req({ budget: 100 }),
    );
    const pages = await readAll(shaper, out);
    // Before: the words around a page took the whole budget, leaving 1 character per page.
    expect(Math.min(...pages.slice(0, -1).map((p) => p.length))).toBeGreaterThan(50);
    expect(texts(out)[1]! + pages.join("")).toBe(log);
  });

  it("passes images, audio and resource links untouched and does not count them", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const image = { type: "image", data: "A".repeat(500_000), mimeType: "image/png" };
    const audio = { type: "audio", data: "B".repeat(500_000), mimeType: "audio/wav" };
    const link = { type: "resource_link", uri: "file:///big.bin", name: "big" };
    const small: ToolResult = { content: [{ type: "text", text: "done" }, image, audio, link] };
    expect(await shaper.shape(small, req())).toEqual(small);
    const big: ToolResult = {
      content: [image, { type: "text", text: JSON.stringify(rows(3_000)) }, audio, link],
    };
    const out = await shaper.shape(big, req());
    expect(out.content[0]!.type).toBe("text");
    expect(out.content.slice(1).filter((b) => b.type !== "text")).toEqual([image, audio, link]);
    expect(out.content[1]).toBe(image);
  });

  it("pages each of several large parts under its own URI", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const a = rows(2_000);
    const b = "text\n".repeat(5_000);
    const out = await shaper.shape(
      {
        content: [
          { type: "text", text: JSON.stringify(a) },
          { type: "text", text: b },
        ],
      },
      req(),
    );
    const notice = texts(out)[0]!;
    expect(notice).toMatch(
      /\n\d+ of 2000 elements of text block 1 shown; next: resources\(\{ uri: "mcpx:\/\/results\/[\w-]+\/1"/,
    );
    expect(notice).toMatch(
      /\ntext block 2: not shown \(25000 characters\); next: resources\(\{ uri: "mcpx:\/\/results\/[\w-]+\/2", offset: 0 \}\)/,
    );
    const uri2 = /"(mcpx:\/\/results\/[\w-]+\/2)"/.exec(notice)![1]!;
    const first = await shaper.page(uri2, 0, undefined, "alice");
    expect(texts(first)[1]).toBe(b.slice(0, texts(first)[1]!.length));
  });

  it("counts and cuts structuredContent that no text block repeats, keeping the text whole", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const data = rows(3_000);
    const result: ToolResult = {
      content: [{ type: "text", text: "Found 3000 rows." }],
      structuredContent: { rows: data },
    };
    const out = await shaper.shape(result, req());
    const [notice, summary, head] = texts(out);
    expect(summary).toBe("Found 3000 rows.");
    const shown = (decode(head!) as { rows: unknown[] }).rows;
    expect(shown).toEqual(data.slice(0, shown.length));
    expect(notice).toContain(`${shown.length} of 3000 elements of structuredContent, "rows" shown`);
    expect(out.structuredContent).toBeUndefined();
  });

  it("keeps isError on a cut error result, and cuts as compact JSON with compression off", async () => {
    const shaper = new ResultShaper(new ResultStore(), "off");
    const data = rows(3_000);
    const out = await shaper.shape(
      { content: [{ type: "text", text: JSON.stringify(data, null, 2) }], isError: true },
      req(),
    );
    expect(out.isError).toBe(true);
    const head = texts(out)[1]!;
    expect(head).toBe(JSON.stringify(JSON.parse(head)));
    const shown = JSON.parse(head) as unknown[];
    expect(shown).toEqual(data.slice(0, shown.length));
  });

  it("says when the rest was too large to keep", async () => {
    const shaper = new ResultShaper(new ResultStore({ maxChars: 1_000 }), "auto");
    const out = await shaper.shape(
      { content: [{ type: "text", text: JSON.stringify(rows(3_000)) }] },
      req(),
    );
    expect(texts(out)[0]).toContain("The rest was not kept");
    expect(texts(out)[0]).not.toContain("mcpx://results/");
  });
});

describe("ResultShaper: pages", () => {
  const cutFor = async (shaper: ResultShaper, caller = "alice") =>
    nextCall(
      texts(
        await shaper.shape(
          { content: [{ type: "text", text: JSON.stringify(rows(3_000)) }] },
          req({ caller }),
        ),
      )[0]!,
    )!;

  it("answers another caller's handle exactly like one that never existed", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const { uri } = await cutFor(shaper, "alice");
    const theirs = await shaper.page(uri, 0, undefined, "bob");
    const missing = await shaper.page("mcpx://results/AAAAAAAAAAAA", 0, undefined, "bob");
    expect(theirs.isError).toBe(true);
    expect(texts(theirs)[0]!.replace(uri, "U")).toBe(
      texts(missing)[0]!.replace("mcpx://results/AAAAAAAAAAAA", "U"),
    );
  });

  it("says when a handle has expired, to its own caller", async () => {
    const clock = new FakeClock();
    const shaper = new ResultShaper(new ResultStore({}, () => clock.now()), "auto");
    const { uri } = await cutFor(shaper);
    await clock.advance(30 * 60_000 + 1);
    const page = await shaper.page(uri, 0, undefined, "alice");
    expect(page.isError).toBe(true);
    expect(texts(page)[0]).toMatch(/has expired \(results are kept 30 min/);
  });

  it("honours limit, says how many of those asked fit, and refuses an offset past the end", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const { uri } = await cutFor(shaper);
    const five = await shaper.page(uri, 100, 5, "alice");
    expect(texts(five)[0]).toContain("elements 100–104 of 3000");
    expect(decode(texts(five)[1]!)).toEqual(rows(3_000).slice(100, 105));
    const many = await shaper.page(uri, 100, 2_000, "alice");
    expect(texts(many)[0]).toMatch(/\(\d+ of the 2000 asked fit the 1000-token budget\)/);
    const past = await shaper.page(uri, 3_000, undefined, "alice");
    expect(past.isError).toBe(true);
    expect(texts(past)[0]).toContain("offset 3000 is past the end");
    const part = await shaper.page(`${uri}/2`, 0, undefined, "alice");
    expect(texts(part)[0]).toContain("has no part 2");
  });
});

describe("ResultShaper: select", () => {
  const data = { total_count: 40, items: rows(40) };
  const asText: ToolResult = { content: [{ type: "text", text: JSON.stringify(data, null, 2) }] };
  const structured: ToolResult = {
    content: [{ type: "text", text: JSON.stringify(data) }],
    structuredContent: data,
  };

  it("projects JSON text, and the projection is encoded like any result", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const out = await shaper.shape(asText, req({ select: "items[].{id: id, name: name}" }));
    expect(out.content).toHaveLength(1);
    expect(decode(texts(out)[0]!)).toEqual(data.items.map(({ id, name }) => ({ id, name })));
    expect(texts(out)[0]).toMatch(/^\[40\]\{id,name\}:/);
  });

  it("applies to structuredContent when present, in place of the text that repeats it", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const out = await shaper.shape(structured, req({ select: "total_count" }));
    expect(out).toEqual({ content: [{ type: "text", text: "40" }] });
  });

  it("shows a selected string as itself, not as quoted JSON", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const result: ToolResult = {
      content: [{ type: "text", text: JSON.stringify({ body: "line 1\nline 2" }) }],
    };
    expect(texts(await shaper.shape(result, req({ select: "body" })))).toEqual(["line 1\nline 2"]);
  });

  it("keeps a selection within the budget like any result", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const big = { items: rows(5_000) };
    const out = await shaper.shape(
      { content: [{ type: "text", text: JSON.stringify(big) }] },
      req({ select: "items[].id" }),
    );
    expect(texts(out)[0]).toMatch(/of 5000 elements shown/);
    expect(countTokens(all(out))).toBeLessThanOrEqual(1_000);
  });

  it("answers a bad expression with a clear error, the result's shape, and the result kept", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const out = await shaper.shape(structured, req({ select: "items[" }));
    expect(out.isError).toBe(true);
    const message = texts(out)[0]!;
    expect(message).toContain('select "items[" failed: Syntax error');
    expect(message).toContain("{total_count: number, items: array(40)}");
    const uri = /resources\(\{ uri: "([^"]+)" \}\)/.exec(message)![1]!;
    const page = await shaper.page(uri, 0, undefined, "alice");
    expect(decode(texts(page)[1]!)).toEqual(data.items);
  });

  it("hints with the shape when a selection matches nothing", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const out = await shaper.shape(structured, req({ select: "itemz[].id" }));
    expect(out.isError).toBeUndefined();
    expect(texts(out)).toEqual([
      "null",
      'select "itemz[].id" matched nothing. The result\'s top-level shape: {total_count: number, items: array(40)}.',
    ]);
  });

  it("leaves text that is not JSON unaltered, and says select was not applied", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const result: ToolResult = { content: [{ type: "text", text: "Created issue #12" }] };
    expect(texts(await shaper.shape(result, req({ select: "id" })))).toEqual([
      "Created issue #12",
      "select was not applied: this result is not JSON.",
    ]);
  });

  it("does not apply to an error result", async () => {
    const shaper = new ResultShaper(new ResultStore(), "auto");
    const result: ToolResult = {
      content: [{ type: "text", text: '{"error":"not found"}' }],
      isError: true,
    };
    const out = await shaper.shape(result, req({ select: "items" }));
    expect(out.isError).toBe(true);
    // The error's JSON is encoded like any result's (TOON here); select left it whole.
    expect(texts(out)).toEqual([
      "error: not found",
      "select was not applied: the tool returned an error.",
    ]);
  });
});

describe("select helpers", () => {
  it("shapeOf names keys, types and array lengths", () => {
    expect(shapeOf({ items: [1, 2], total_count: 2, next: null, q: "x", meta: {} })).toBe(
      "{items: array(2), total_count: number, next: null, q: string, meta: object}",
    );
    expect(shapeOf([{ id: 1, title: "a" }])).toBe("array(1) of {id: number, title: string}");
    expect(shapeOf([1, 2, 3])).toBe("array(3)");
    expect(shapeOf("x")).toBe("string");
  });

  it("applySelect returns the error text instead of throwing", () => {
    expect(applySelect({ a: [1] }, "length(a)")).toEqual({ value: 1 });
    const bad = applySelect({ a: 1 }, "nosuchfn(a)");
    expect("error" in bad && bad.error).toContain("Unknown function");
    expect(applySelect({ a: 1 }, "length(a)")).toHaveProperty("error");
  });

  it("selectedNothing is true for null and lists of nulls only", () => {
    expect(selectedNothing(null)).toBe(true);
    expect(selectedNothing([null, null])).toBe(true);
    expect(selectedNothing([])).toBe(true);
    expect(selectedNothing([0])).toBe(false);
    expect(selectedNothing(0)).toBe(false);
  });
});
