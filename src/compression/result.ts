import { encode as encodeToon } from "@toon-format/toon";

import type { ResultCompression as ResultMode } from "../config/types.js";
import type { ContentBlock, ToolResult } from "../types.js";
import { encodeSparse } from "./sparse.js";

/**
 * Re-encode JSON in a tool result to the cheapest faithful text. Never makes a result bigger than
 * compact JSON (except in "toon" mode, which forces TOON by request).
 *
 * Only `text` blocks whose whole (trimmed) text is a JSON object or array are rewritten; other
 * blocks, `structuredContent`, `isError` and any other field are kept. The input is not mutated;
 * when nothing changes the same object is returned.
 */
export function compressResult(result: ToolResult, mode: ResultMode): ToolResult {
  if (mode === "off" || !Array.isArray(result.content)) return result;
  let changed = false;
  const content = result.content.map((block) => {
    const text = reencode(block, mode);
    if (text === undefined || text === block.text) return block;
    changed = true;
    return { ...block, text };
  });
  return changed ? { ...result, content } : result;
}

/** Estimated o200k token count, good enough to rank two encodings of the same data. */
export function estimateTokens(text: string): number {
  // Calibrated against gpt-tokenizer on the github-mcp-server corpus and tabular samples (it
  // ranked TOON vs JSON the same way as the real tokenizer on all 121): a letter run is about one
  // token per 8 letters, a number one per 3 digits, a run of punctuation (JSON's `":"`, `"},{"`)
  // or of whitespace (TOON's indentation) one token. Raw character length favours TOON wrongly,
  // because JSON's quoting merges into few tokens while TOON's indentation is many characters.
  let tokens = 0;
  for (const [piece] of text.matchAll(/ ?[A-Za-z]+|\d{1,3}|\s*[^\sA-Za-z\d]+|\s+/g)) {
    tokens += /[A-Za-z]/.test(piece) ? Math.ceil(piece.length / 8) : 1;
  }
  return tokens;
}

/** TOON or a sparse table is chosen only when estimated at most this fraction of compact JSON. */
const TOON_MARGIN = 0.92;

function reencode(block: ContentBlock, mode: Exclude<ResultMode, "off">): string | undefined {
  if (block.type !== "text" || typeof block.text !== "string") return undefined;
  const trimmed = block.text.trim();
  // Only whole objects and arrays: a bare string or number gains nothing from re-encoding.
  if (
    !(trimmed.startsWith("{") && trimmed.endsWith("}")) &&
    !(trimmed.startsWith("[") && trimmed.endsWith("]"))
  ) {
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // Text that merely looks like JSON (a log line, a Python repr) is passed through untouched.
    return undefined;
  }
  // JSON.parse rounds integers past 2^53 (snowflake IDs); re-serialising would change them, so
  // such text is only minified, token by token.
  if (hasUnsafeInteger(value)) return minifyJson(trimmed);
  const json = JSON.stringify(value);
  if (mode === "json") return json;
  const toon = encodeToon(value);
  if (mode === "toon") return toon;
  const sparse = encodeSparse(value);
  const best =
    sparse !== undefined && estimateTokens(sparse) < estimateTokens(toon) ? sparse : toon;
  // The estimate can be a few percent off on deep, irregular trees (TOON's indentation), and a
  // wrong pick would break "never bigger than compact JSON": the pick must win by a clear margin.
  return estimateTokens(best) <= TOON_MARGIN * estimateTokens(json) ? best : json;
}

function hasUnsafeInteger(value: unknown): boolean {
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
