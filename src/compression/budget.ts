/**
 * Results that do not fit a token budget: the head that fits, and what a later page reads.
 * Arrays are cut between elements (never mid-record), an array nested in an object (`{items:
 * [...], total_count}`) keeps the object around the cut array, and text is cut at a line break.
 * Pure functions: the executor keeps what is cut (src/executor/result-store.ts) and words the answer.
 */
import type { ResultCompression } from "../config/types.js";
import {
  encodeJson,
  encodeValue,
  estimateTokens,
  hasUnsafeInteger,
  type JsonText,
} from "./result.js";

export type EncodeMode = Exclude<ResultCompression, "off">;

/**
 * The estimate is within a few percent of o200k on JSON, TOON and prose, and over-counts other
 * scripts; dividing by this keeps what is sent under the budget as the real tokenizer counts it.
 */
const ESTIMATE_MARGIN = 0.85;

/** Tokens as the budget counts them (an estimate, rounded up to stay under the real count). */
export function budgetTokens(text: string): number {
  return Math.ceil(estimateTokens(text) / ESTIMATE_MARGIN);
}

/** True when text of `chars` characters surely fits `budget`, with no estimate needed. */
export function fitsByLength(chars: number, budget: number): boolean {
  // budgetTokens is at most chars / ESTIMATE_MARGIN: the estimate never exceeds the length.
  return chars <= budget * ESTIMATE_MARGIN;
}

/** What a page reads from: the elements of one array, or one text. */
export type Pageable =
  | {
      kind: "elements";
      /** Object keys from the root to the array; empty when the value is the array. */
      path: string[];
      /**
       * Each element as compact JSON: a page parses only what it shows, and a kept result takes
       * about its character count in memory (parsed records take several times that).
       */
      items: string[];
    }
  | { kind: "text"; text: string };

/** A cut part: the text the answer shows, what pages read, and where the next page starts. */
export interface Cut {
  head: string;
  pageable: Pageable;
  /** Elements or characters shown by the head: the next page's offset. */
  next: number;
}

/**
 * Cut JSON to a head of `budget` tokens; pages will hold `pageBudget`. The largest array is cut
 * between elements when the rest of the value fits in half a page and every element fits a page
 * on its own; otherwise the encoded text is cut at a line break (TOON and sparse tables have a
 * line per record).
 */
export function cutJson(json: JsonText, budget: number, pageBudget: number, mode: EncodeMode): Cut {
  // Integers past 2^53 survive only in the text as received: cut that, never the parsed value.
  const found = hasUnsafeInteger(json.value) ? undefined : largestArray(json.value);
  const items = found && elementsFitting(json, found, pageBudget, mode);
  if (found && items) {
    const frame = (k: number) =>
      encodeValue(withArrayAt(json.value, found.path, found.items.slice(0, k)), mode);
    const k = largestFitting(found.items.length, (n) => budgetTokens(frame(n)) <= budget);
    return { head: frame(k), pageable: { kind: "elements", path: found.path, items }, next: k };
  }
  return cutText(encodeJson(json, mode), budget);
}

/** Cut text to `budget` tokens at a line break (else a space, else anywhere). */
export function cutText(text: string, budget: number): Cut {
  const end = fitText(text, 0, budget);
  return { head: text.slice(0, end), pageable: { kind: "text", text }, next: end };
}

/** One page: `limit` elements or characters from `offset` at most, and no more than fit `budget`. */
export function pageOf(
  pageable: Pageable,
  offset: number,
  limit: number | undefined,
  budget: number,
  mode: EncodeMode,
): { text: string; end: number } {
  if (pageable.kind === "text") {
    const end = fitText(pageable.text, offset, budget, limit);
    return { text: pageable.text.slice(offset, end), end };
  }
  const { items } = pageable;
  const most = Math.min(items.length - offset, limit ?? Number.POSITIVE_INFINITY);
  const parsed: unknown[] = [];
  const encode = (k: number) => {
    for (let i = parsed.length; i < k; i++) parsed.push(JSON.parse(items[offset + i]!));
    return encodeValue(parsed.slice(0, k), mode);
  };
  // At least one element, so paging always moves on (an element alone fits a page: elementsFitting).
  const k = Math.max(
    Math.min(1, most),
    largestFitting(most, (n) => budgetTokens(encode(n)) <= budget),
  );
  return { text: encode(k), end: offset + k };
}

// ---------------------------------------------------------------------------------------------

interface Found {
  path: string[];
  items: unknown[];
}

/** How deep under objects an array is looked for (`{data: {items: [...]}}` is depth 2). */
const MAX_DEPTH = 3;

/** The array with the most JSON text: the value itself, or one under object keys. */
export function largestArray(value: unknown): Found | undefined {
  let best: (Found & { size: number }) | undefined;
  const visit = (node: unknown, path: string[]): void => {
    if (Array.isArray(node)) {
      if (node.length < 2) return;
      const size = JSON.stringify(node).length;
      if (!best || size > best.size) best = { path, items: node, size };
      return;
    }
    if (typeof node !== "object" || node === null || path.length >= MAX_DEPTH) return;
    for (const [k, v] of Object.entries(node)) visit(v, [...path, k]);
  };
  visit(value, []);
  return best && { path: best.path, items: best.items };
}

/** A copy of `value` with the array at `path` replaced by `items`; nothing else is copied. */
export function withArrayAt(value: unknown, path: readonly string[], items: unknown[]): unknown {
  if (path.length === 0) return items;
  const [key, ...rest] = path as [string, ...string[]];
  const obj = value as Record<string, unknown>;
  return { ...obj, [key]: withArrayAt(obj[key], rest, items) };
}

/**
 * The elements as compact JSON when the rest of the value fits in half a page and each element
 * fits half a page on its own (so every page moves on); undefined when the array cannot be paged.
 */
function elementsFitting(
  json: JsonText,
  found: Found,
  budget: number,
  mode: EncodeMode,
): string[] | undefined {
  const rest = encodeValue(withArrayAt(json.value, found.path, []), mode);
  if (budgetTokens(rest) > budget / 2) return undefined;
  const items: string[] = [];
  for (const item of found.items) {
    const text = JSON.stringify(item) ?? "null";
    // Characters bound tokens from above, so most elements need no estimate.
    if (text.length > budget / 2 && budgetTokens(text) > budget / 2) return undefined;
    items.push(text);
  }
  return items;
}

/**
 * The largest n in [0, max] with fits(n), for a monotone `fits`: doubling from 1, then bisecting,
 * so no probe is more than twice the answer (probes encode text of about the budget's size).
 */
export function largestFitting(max: number, fits: (n: number) => boolean): number {
  if (max <= 0 || !fits(1)) return 0;
  let lo = 1;
  let hi = 2;
  while (hi <= max && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  hi = Math.min(hi, max + 1);
  // Invariant: fits(lo), and hi is past max or does not fit.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Where a page of `text` from `from` ends: within budget and limit, at a line break if any. */
function fitText(text: string, from: number, budget: number, limit?: number): number {
  const max = Math.min(text.length - from, limit ?? Number.POSITIVE_INFINITY);
  // Bisecting on characters to the nearest 16 is precise enough and keeps probes few.
  const chunks = Math.ceil(max / 16);
  const n = largestFitting(
    chunks,
    (c) => budgetTokens(text.slice(from, from + Math.min(c * 16, max))) <= budget,
  );
  let end = from + Math.min(n * 16, max);
  // Only a cut the budget made moves back to a line break; a limit is taken as asked.
  if (n * 16 < max) end = snap(text, from, end);
  // Never split a surrogate pair; always move on by at least one character.
  if (end > from + 1 && /[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end--;
  return Math.max(end, Math.min(from + 1, text.length));
}

/** Move a cut back to just after a line break, or a space, in the second half of the page. */
function snap(text: string, from: number, end: number): number {
  const half = from + (end - from) / 2;
  const line = text.lastIndexOf("\n", end - 1);
  if (line >= half) return line + 1;
  const space = Math.max(text.lastIndexOf(" ", end - 1), text.lastIndexOf("\t", end - 1));
  return space >= half ? space + 1 : end;
}
