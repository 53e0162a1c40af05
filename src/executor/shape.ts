/**
 * The last step of a call: `select` applied, then the cheapest faithful encoding, and never a
 * flood. A result above its server's budget is cut (the head that fits, and what was left out
 * kept for paging under `mcpx://results/<id>`); pages are read through the `resources` tool.
 */
import type { ResultCompression } from "../config/load.js";
import {
  budgetTokens,
  cutJson,
  fitsByLength,
  cutText,
  pageOf,
  type Cut,
  type EncodeMode,
  type Pageable,
} from "../compression/budget.js";
import {
  compressResult,
  encodeJson,
  encodeValue,
  estimateTokens,
  type CompressionTally,
} from "../compression/result.js";
import { shapeOf } from "../compression/select.js";
import { Selector } from "../compression/selector.js";
import { textResult, type ContentBlock, type ToolResult } from "../types.js";
import { counted, partsOf, repeated, type Part } from "./parts.js";
import {
  parseResultUri,
  resultUri,
  type ResultStore,
  type StoredPart,
  type StoredResult,
} from "./result-store.js";
import { SharedUnavailableError } from "../shared/types.js";

/** What shaping one result needs to know about its call. */
export interface ShapeRequest {
  /** `server.tool`, named on pages. */
  source: string;
  /** Tokens the answer may take (the server's result budget). */
  budget: number;
  /** Whose handle a cut result becomes. */
  caller: string;
  /** A JMESPath expression to apply first. */
  select?: string;
  /** Adds what re-encoding saved (blocks sent as TOON or sparse tables instead of JSON). */
  compression?: CompressionTally;
}

/**
 * A result with more than this many characters per token of budget is cut without being encoded
 * whole first: no encoding gets below a token per 20 characters on real data, and encoding
 * 20,000 records only to learn they do not fit would double the cost of the call.
 */
const HUGE = 20;

/** The fewest tokens worth showing of a part that does not fit whole. */
const MIN_HEAD = 50;

/** Tokens kept for the words around a page (its heading, the next call). */
const PAGE_RESERVE = 100;

/**
 * Tokens of content a page may hold: the budget less the words around it, but never less than
 * half the budget, so a small budget still pages through its result in useful steps.
 */
function pageTokens(budget: number): number {
  return Math.max(budget - PAGE_RESERVE, Math.floor(budget / 2));
}

/** A part that was cut or left out, kept for paging. */
interface Kept extends StoredPart {
  /** Elements or characters the answer shows: where the next page starts. */
  next: number;
}

export class ResultShaper {
  private readonly encodeMode: EncodeMode;

  /**
   * `selector` evaluates select expressions off the main thread, within a time and size budget
   * (see selector.ts); by default one of its own, whose threads start at the first select.
   */
  constructor(
    private readonly store: ResultStore,
    private readonly mode: ResultCompression,
    private readonly selector: Selector = new Selector(),
  ) {
    // Cut heads and pages are re-encoded even with compression off: there is no original text
    // for a part of an array.
    this.encodeMode = mode === "off" ? "json" : mode;
  }

  /** The answer for an upstream result: selected, encoded, and within the budget. */
  async shape(result: ToolResult, req: ShapeRequest): Promise<ToolResult> {
    if (req.select === undefined) return this.fit(result, req);
    const selected = await this.select(result, req.select, req);
    return "answer" in selected ? selected.answer : this.fit(selected.result, req);
  }

  /** One page of a kept result, or why there is none. */
  async page(
    uri: string,
    offset: number,
    limit: number | undefined,
    caller: string,
  ): Promise<ToolResult> {
    const ref = parseResultUri(uri);
    let entry: Awaited<ReturnType<ResultStore["get"]>>;
    try {
      entry = ref && (await this.store.get(caller, ref.id));
    } catch (err) {
      // Redis away: the handle may be fine, only unreadable now; say so, never "No result".
      if (err instanceof SharedUnavailableError)
        return textResult(`${uri} cannot be read now: ${err.message}`, true);
      throw err;
    }
    if (!ref || !entry) {
      return textResult(
        `No result ${uri}. Handles (mcpx://results/…) come from call results cut to fit the budget, and only their caller can read them.`,
        true,
      );
    }
    if ("gone" in entry) return textResult(this.goneText(uri, entry.gone), true);
    const part = entry.parts[ref.part - 1];
    if (!part) {
      const uris = entry.parts.map((_, i) => `"${resultUri(ref.id, i + 1)}"`).join(", ");
      return textResult(`${uri} has no part ${ref.part}. Its parts: ${uris}.`, true);
    }
    const total = sizeOf(part.pageable);
    if (offset >= total && total > 0) {
      return textResult(
        `offset ${offset} is past the end of ${uri}: it has ${total} ${unit(part.pageable)} (offsets 0 to ${total - 1}).`,
        true,
      );
    }
    const page = pageOf(part.pageable, offset, limit, pageTokens(entry.budget), this.encodeMode);
    const range = `${unit(part.pageable)} ${offset}–${page.end - 1} of ${total}`;
    const short =
      limit !== undefined && page.end - offset < limit && page.end < total
        ? ` (${page.end - offset} of the ${limit} asked fit the ${entry.budget}-token budget)`
        : "";
    const next =
      page.end < total
        ? ` Next: resources({ uri: "${uri}", offset: ${page.end} })`
        : "; this is the last page.";
    return {
      content: [
        { type: "text", text: `${uri} (${entry.source}, ${part.label}): ${range}${short}.${next}` },
        { type: "text", text: page.text },
      ],
    };
  }

  private goneText(uri: string, why: "expired" | "evicted"): string {
    const { maxAgeMs, maxResults, maxChars } = this.store.limits;
    const limits = `results are kept ${Math.round(maxAgeMs / 60_000)} min, the ${maxResults} most recent and ${Math.round(maxChars / 1024 / 1024)} MB at most`;
    return why === "expired"
      ? `${uri} has expired (${limits}). Call the tool again, narrower if you can.`
      : `${uri} is no longer kept: newer results took its place (${limits}). Call the tool again, narrower if you can.`;
  }

  // -------------------------------------------------------------------------------------------

  private async select(
    result: ToolResult,
    expression: string,
    req: ShapeRequest,
  ): Promise<{ result: ToolResult } | { answer: ToolResult }> {
    if (result.isError === true)
      return { result: withNote(result, "select was not applied: the tool returned an error.") };
    const parts = partsOf(result);
    const source =
      result.structuredContent ??
      parts.flatMap((p) => (p.kind === "json" ? [p.json.value] : []))[0];
    if (source === undefined)
      return { result: withNote(result, "select was not applied: this result is not JSON.") };
    const applied = await this.selector.apply(source, expression, req.caller);
    if ("error" in applied) {
      const uri = await this.keep(parts, req);
      const kept = uri
        ? ` The call ran; its whole result is kept: resources({ uri: "${uri}" }) reads it without calling again.`
        : "";
      return {
        answer: textResult(
          `select "${expression}" failed: ${applied.error}. The result's top-level shape: ${shapeOf(source)}. Fix the expression, or call without select.${kept}`,
          true,
        ),
      };
    }
    // A string is shown as itself: quoting it as JSON would escape every line break.
    const block: ContentBlock = { type: "text", text: applied.text };
    const { structuredContent: _replaced, ...rest } = result;
    const selected: ToolResult = { ...rest, content: replaceSource(result, parts, source, block) };
    return {
      result: applied.nothing
        ? withNote(
            selected,
            `select "${expression}" matched nothing. The result's top-level shape: ${shapeOf(source)}.`,
          )
        : selected,
    };
  }

  /** The result as encoded, when it fits the budget; else the head that fits, with a handle. */
  private async fit(result: ToolResult, req: ShapeRequest): Promise<ToolResult> {
    const structured = result.structuredContent;
    const structuredChars = structured === undefined ? 0 : JSON.stringify(structured).length;
    // Far too large to fit whatever the encoding: skip encoding it whole, cut it at once.
    if (textChars(result.content) + structuredChars > HUGE * req.budget)
      return this.cut(result, partsOf(result), [], req);
    const compressed = compressResult(result, this.mode, req.compression);
    const texts = compressed.content.map((b) => (typeof b.text === "string" ? b.text : ""));
    const chars = textChars(compressed.content) + structuredChars;
    // A token is at least a character: most results need no estimate at all.
    if (fitsByLength(chars, req.budget)) return compressed;
    const parts = partsOf(result);
    const encoded = parts.map((p, i) =>
      p.kind === "media"
        ? ""
        : (texts[i] ?? encodeValue(p.kind === "json" ? p.json.value : p.text, this.encodeMode)),
    );
    const tokens = encoded.reduce((n, t) => n + budgetTokens(t), 0);
    if (tokens <= req.budget) return compressed;
    return this.cut(result, parts, encoded, req);
  }

  /** `encoded` holds each part's whole encoding where it was computed (not for huge results). */
  private async cut(
    result: ToolResult,
    parts: Part[],
    encoded: string[],
    req: ShapeRequest,
  ): Promise<ToolResult> {
    const pageBudget = pageTokens(req.budget);
    const countable = counted(parts).length;
    // Room for the notice: a line per part kept for paging.
    let remaining = req.budget - Math.min(Math.floor(req.budget / 4), 80 + 50 * countable);
    const content: ContentBlock[] = [];
    const kept: Kept[] = [];
    let whole = 0;
    parts.forEach((part, i) => {
      if (part.kind === "media") return void content.push(part.block);
      const text = encoded[i] ?? this.encodeUnlessHuge(part, req.budget);
      const cost = text === undefined ? Number.POSITIVE_INFINITY : budgetTokens(text);
      if (text !== undefined && cost <= remaining) {
        remaining -= cost;
        whole += estimateTokens(text);
        return void content.push({ type: "text", text });
      }
      // Too little room left for a useful head: the part is only kept, and said so.
      const room = remaining >= MIN_HEAD;
      const cut = this.cutPart(part, room ? remaining : 0, pageBudget);
      const next = room ? cut.next : 0;
      if (next > 0) content.push({ type: "text", text: cut.head });
      kept.push({ pageable: cut.pageable, label: labelOf(part.label, cut.pageable), next });
      whole += wholeTokens(text, { ...cut, next }, () => encodeWhole(part, this.encodeMode));
      remaining = 0;
    });
    const { id, unkept } = await this.tryPut(req, {
      source: req.source,
      parts: kept.map(({ pageable, label }) => ({ pageable, label })),
      budget: req.budget,
    });
    const { structuredContent: _dropped, content: _old, ...rest } = result;
    return {
      ...rest,
      content: [{ type: "text", text: cutNotice(kept, id, req.budget, whole, unkept) }, ...content],
      _meta: {
        ...result._meta,
        "mcpx/cut": kept.map((k, i) => ({
          ...(id !== undefined && { uri: resultUri(id, kept.length > 1 ? i + 1 : undefined) }),
          unit: unit(k.pageable),
          shown: k.next,
          total: sizeOf(k.pageable),
        })),
      },
    };
  }

  /** A part's whole encoding, or undefined when it is far too large to fit anyway. */
  private encodeUnlessHuge(
    part: Exclude<Part, { kind: "media" }>,
    budget: number,
  ): string | undefined {
    const size = part.kind === "json" ? part.json.text.length : part.text.length;
    return size > HUGE * budget ? undefined : encodeWhole(part, this.encodeMode);
  }

  private cutPart(part: Exclude<Part, { kind: "media" }>, budget: number, pageBudget: number): Cut {
    return part.kind === "json"
      ? cutJson(part.json, budget, pageBudget, this.encodeMode)
      : cutText(part.text, budget);
  }

  /** Keep every countable part whole for paging (select failed): the handle, if kept. */
  private async keep(parts: Part[], req: ShapeRequest): Promise<string | undefined> {
    const pageBudget = pageTokens(req.budget);
    const stored = counted(parts).map((p) => {
      const cut = this.cutPart(p, pageBudget, pageBudget);
      return { pageable: cut.pageable, label: labelOf(p.label, cut.pageable) };
    });
    if (stored.length === 0) return undefined;
    const { id } = await this.tryPut(req, {
      source: req.source,
      parts: stored,
      budget: req.budget,
    });
    return id && resultUri(id, stored.length > 1 ? 1 : undefined);
  }

  /**
   * Keep a result for paging: its id, or why it was not kept when the store (Redis) is away —
   * the answer still carries the head, so the call itself does not fail.
   */
  private async tryPut(
    req: ShapeRequest,
    entry: StoredResult,
  ): Promise<{ id?: string; unkept?: string }> {
    try {
      const id = await this.store.put(req.caller, entry);
      return id === undefined ? {} : { id };
    } catch (err) {
      if (err instanceof SharedUnavailableError) return { unkept: err.message };
      throw err;
    }
  }
}

function textChars(content: readonly ContentBlock[]): number {
  return content.reduce((n, b) => n + (typeof b.text === "string" ? b.text.length : 0), 0);
}

function encodeWhole(part: Exclude<Part, { kind: "media" }>, mode: EncodeMode): string {
  return part.kind === "json" ? encodeJson(part.json, mode) : part.text;
}

/**
 * The whole part's estimated tokens: counted when its encoding is at hand (or it was left out),
 * else extrapolated from the head (elements or characters shown, out of all of them).
 */
function wholeTokens(text: string | undefined, cut: Cut, encode: () => string): number {
  if (text !== undefined) return estimateTokens(text);
  if (cut.next === 0) return estimateTokens(encode());
  return Math.round((estimateTokens(cut.head) * sizeOf(cut.pageable)) / cut.next);
}

function withNote(result: ToolResult, note: string): ToolResult {
  return { ...result, content: [...result.content, { type: "text", text: note }] };
}

/** The content with the selection in place of the JSON it was taken from (and its copies). */
function replaceSource(
  result: ToolResult,
  parts: Part[],
  source: unknown,
  block: ContentBlock,
): ContentBlock[] {
  const content: ContentBlock[] = [];
  let placed = false;
  result.content.forEach((b, i) => {
    const part = parts[i];
    const isSource =
      part?.kind === "json" && (part.json.value === source || repeated(source, [part]));
    if (!isSource) return void content.push(b);
    if (!placed) content.push(block);
    placed = true;
  });
  return placed ? content : [block, ...content];
}

function sizeOf(p: Pageable): number {
  return p.kind === "text" ? p.text.length : p.items.length;
}

function unit(p: Pageable): "elements" | "characters" {
  return p.kind === "text" ? "characters" : "elements";
}

/** `the result`, `"items"`, `text block 2, "data.items"`. */
function labelOf(partLabel: string, p: Pageable): string {
  if (p.kind === "text" || p.path.length === 0) return partLabel;
  const path = `"${p.path.join(".")}"`;
  return partLabel === "the result" ? path : `${partLabel}, ${path}`;
}

/** The first block of a cut answer: what is shown, the whole size, and the exact next calls. */
function cutNotice(
  kept: Kept[],
  id: string | undefined,
  budget: number,
  whole: number,
  unkept?: string,
): string {
  const lines = kept.map((k, i) => {
    const total = sizeOf(k.pageable);
    const of = k.label === "the result" ? "" : ` of ${k.label}`;
    const shown =
      k.next === 0
        ? `${k.label}: not shown (${total} ${unit(k.pageable)})`
        : k.pageable.kind === "text"
          ? `the first ${k.next} of ${total} characters${of} shown`
          : `${k.next} of ${total} elements${of} shown`;
    if (id === undefined) return `${shown}.`;
    const uri = resultUri(id, kept.length > 1 ? i + 1 : undefined);
    return `${shown}; next: resources({ uri: "${uri}", offset: ${k.next} }).`;
  });
  const head = `Result cut to fit the ${budget}-token budget (≈${whole} tokens in all):`;
  const rest =
    unkept !== undefined
      ? `The rest was not kept for paging: ${unkept} Narrow the call with select (JMESPath) or the tool's own filters.`
      : id === undefined
        ? "The rest was not kept: it is larger than the result store holds. Narrow the call with select (JMESPath) or the tool's own filters."
        : "Or narrow the call with select (JMESPath) or the tool's own filters.";
  return [head, ...lines, rest].join(kept.length > 1 ? "\n" : " ");
}
