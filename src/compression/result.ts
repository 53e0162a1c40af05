import { encode as encodeToon } from "@toon-format/toon";

import type { ResultCompression as ResultMode } from "../config/types.js";
import type { ContentBlock, ToolResult } from "../types.js";
import { asciiTokens, isAscii, MIN_RUN, RUN_TOKENS_PER_CHAR } from "./ascii-tokens.js";
import { encodeSparse } from "./sparse.js";

/**
 * Re-encode JSON in a tool result to the cheapest faithful text. Never makes a result bigger than
 * compact JSON (except in "toon" mode, which forces TOON by request).
 *
 * Only `text` blocks whose whole (trimmed) text is a JSON object or array are rewritten; other
 * blocks, `structuredContent`, `isError` and any other field are kept. The input is not mutated;
 * when nothing changes the same object is returned.
 */
export function compressResult(
  result: ToolResult,
  mode: ResultMode,
  tally?: CompressionTally,
): ToolResult {
  if (mode === "off" || !Array.isArray(result.content)) return result;
  let changed = false;
  const content = result.content.map((block) => {
    const text = reencode(block, mode, tally);
    if (text === undefined || text === block.text) return block;
    changed = true;
    return { ...block, text };
  });
  return changed ? { ...result, content } : result;
}

/**
 * What re-encoding saved, summed over JSON blocks: how many were encoded as TOON or a sparse
 * table, and their estimated tokens as compact JSON and as sent. Measured where the encoding is
 * chosen, from the estimates that choice computes anyway (no second pass on the call path).
 */
export interface CompressionTally {
  blocks: number;
  jsonTokens: number;
  sentTokens: number;
}

/** Scripts written without spaces, where o200k spends about a token per character. */
const DENSE = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}`;

/**
 * The pieces estimateTokens prices, by capture group: 1 an ASCII letter run, 2 a run of other
 * letters, 3 a dense-script character, 4 an emoji; anything else (up to 3 digits, a punctuation
 * run with the whitespace before it, a whitespace run, a lone character) is one token.
 */
const WORD_PIECES =
  String.raw`( ?[A-Za-z]+)|( ?(?:(?![${DENSE}])[\p{L}\p{M}])+)|([${DENSE}])|(\p{Extended_Pictographic})` +
  String.raw`|\d{1,3}|\s*[^\s\p{L}\p{M}\d\p{Extended_Pictographic}]+|\s+|[^]`;
const PIECES = new RegExp(WORD_PIECES, "gu");

/**
 * {@link PIECES} after a first group: a long unbroken run of base64/hex/identifier characters,
 * priced apart when it mixes letters and digits (see estimateTokens).
 */
const RUN_PIECES = new RegExp(String.raw`( ?[A-Za-z0-9+/=_-]{${MIN_RUN},})|` + WORD_PIECES, "gu");

/** Estimated o200k token count, good enough to rank two encodings and to keep a budget. */
export function estimateTokens(text: string): number {
  // Calibrated against gpt-tokenizer on the github-mcp-server corpus and tabular samples (it
  // ranked TOON vs JSON the same way as the real tokenizer on all 121): a letter run is about one
  // token per 8 letters, a number one per 3 digits, a run of punctuation (JSON's `":"`, `"},{"`)
  // or of whitespace (TOON's indentation) one token. Raw character length favours TOON wrongly,
  // because JSON's quoting merges into few tokens while TOON's indentation is many characters.
  // Other scripts, so that a budget holds for text in any of them: a run of other letters
  // (Cyrillic, Greek, accented Latin) one token per 3 letters, a CJK or Thai character one token,
  // an emoji two.
  // Base64, hex digests, UUIDs and other random strings are no words: o200k spends a token per
  // 1.5 to 2 of their characters, four times what the letter rule says (a 32,000-character
  // base64 text is 21,900 tokens, the rule said 11,300). A long run that mixes letters and
  // digits is priced by its length instead.
  // The usual case, all ASCII (JSON, TOON), is counted in one pass over character codes.
  return isAscii(text) ? asciiTokens(text) : tokensByPattern(text);
}

/**
 * estimateTokens by the Unicode-aware pattern: any text (and the reference the ASCII count is
 * tested against).
 */
export function tokensByPattern(text: string): number {
  let tokens = 0;
  for (const [, run, ascii, letters, dense, emoji] of text.matchAll(RUN_PIECES)) {
    if (run !== undefined) tokens += runTokens(run);
    else tokens += pieceTokens(ascii, letters, dense, emoji);
  }
  return tokens;
}

function runTokens(run: string): number {
  if (/\d/.test(run) && /[A-Za-z]/.test(run)) return Math.ceil(run.length * RUN_TOKENS_PER_CHAR);
  // Words joined by `_` or `-` (snake_case, kebab-case): priced piece by piece.
  let tokens = 0;
  for (const [, ascii, letters, dense, emoji] of run.matchAll(PIECES))
    tokens += pieceTokens(ascii, letters, dense, emoji);
  return tokens;
}

const CAMEL_HUMP = /[a-z][A-Z]/g;

function pieceTokens(
  ascii: string | undefined,
  letters: string | undefined,
  dense: string | undefined,
  emoji: string | undefined,
): number {
  // camelCase is a token or more per word (getElementById is 4, not 2).
  if (ascii !== undefined)
    return Math.max(Math.ceil(ascii.length / 8), 1 + (ascii.match(CAMEL_HUMP)?.length ?? 0));
  if (letters !== undefined) return Math.ceil(letters.length / 3);
  if (dense !== undefined) return 1;
  if (emoji !== undefined) return 2;
  return 1;
}

/** TOON or a sparse table is chosen only when estimated at most this fraction of compact JSON. */
const TOON_MARGIN = 0.92;

function reencode(
  block: ContentBlock,
  mode: Exclude<ResultMode, "off">,
  tally: CompressionTally | undefined,
): string | undefined {
  if (block.type !== "text" || typeof block.text !== "string") return undefined;
  const json = jsonOfText(block.text);
  return json && encodeJson(json, mode, tally);
}

/** A text block's JSON: its parsed value and its trimmed text. */
export interface JsonText {
  value: unknown;
  text: string;
}

/**
 * The JSON a text holds when its whole (trimmed) text is a JSON object or array; undefined for
 * anything else (prose, a bare string or number, text that merely looks like JSON).
 */
export function jsonOfText(text: string): JsonText | undefined {
  const trimmed = text.trim();
  // Only whole objects and arrays: a bare string or number gains nothing from re-encoding.
  if (
    !(trimmed.startsWith("{") && trimmed.endsWith("}")) &&
    !(trimmed.startsWith("[") && trimmed.endsWith("]"))
  ) {
    return undefined;
  }
  try {
    return { value: JSON.parse(trimmed) as unknown, text: trimmed };
  } catch {
    // Text that merely looks like JSON (a log line, a Python repr) is passed through untouched.
    return undefined;
  }
}

/**
 * The cheapest faithful text for JSON: compact JSON, TOON or a sparse table in "auto" mode, one
 * of them when forced. `text` is the JSON as received, used when re-serializing would change it.
 */
export function encodeJson(
  json: JsonText,
  mode: Exclude<ResultMode, "off">,
  tally?: CompressionTally,
): string {
  // JSON.parse rounds integers past 2^53 (snowflake IDs); re-serialising would change them, so
  // such text is only minified, token by token.
  if (hasUnsafeInteger(json.value)) return minifyJson(json.text);
  return encodeValue(json.value, mode, tally);
}

/**
 * {@link encodeJson} for a value that came parsed (structuredContent, a selection, a page).
 * `tally`, when given, adds what a TOON or sparse encoding saved against compact JSON.
 */
export function encodeValue(
  value: unknown,
  mode: Exclude<ResultMode, "off">,
  tally?: CompressionTally,
): string {
  const json = JSON.stringify(value);
  if (mode === "json") return json;
  const toon = encodeToon(value);
  if (mode === "toon") {
    if (tally) count(tally, estimateTokens(json), estimateTokens(toon));
    return toon;
  }
  const sparse = encodeSparse(value);
  const toonTokens = estimateTokens(toon);
  const sparseTokens = sparse === undefined ? Infinity : estimateTokens(sparse);
  const [best, bestTokens] =
    sparseTokens < toonTokens ? [sparse!, sparseTokens] : [toon, toonTokens];
  const jsonTokens = estimateTokens(json);
  // The estimate can be a few percent off on deep, irregular trees (TOON's indentation), and a
  // wrong pick would break "never bigger than compact JSON": the pick must win by a clear margin.
  if (bestTokens > TOON_MARGIN * jsonTokens) return json;
  if (tally) count(tally, jsonTokens, bestTokens);
  return best;
}

function count(tally: CompressionTally, jsonTokens: number, sentTokens: number): void {
  tally.blocks += 1;
  tally.jsonTokens += jsonTokens;
  tally.sentTokens += sentTokens;
}

/** True when `value` holds an integer JSON.parse could not represent exactly. */
export function hasUnsafeInteger(value: unknown): boolean {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.some(hasUnsafeInteger);
  if (typeof value === "object" && value !== null)
    return Object.values(value).some(hasUnsafeInteger);
  return false;
}

/** Remove insignificant whitespace from valid JSON text without parsing its numbers. */
function minifyJson(text: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c !== " " && c !== "\n" && c !== "\r" && c !== "\t") {
      out += c;
    }
  }
  return out;
}
