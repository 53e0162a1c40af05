/**
 * A tool result seen as the parts a budget counts: JSON (from a text block, or structuredContent
 * no text block repeats), text, and media that pass through uncounted (images, audio, resource
 * links, embedded resources).
 */
import { isDeepStrictEqual } from "node:util";
import { jsonOfText, type JsonText } from "../compression/result.js";
import type { ContentBlock, ToolResult } from "../types.js";

export type Part =
  | { kind: "json"; json: JsonText; label: string }
  | { kind: "text"; text: string; label: string }
  | { kind: "media"; block: ContentBlock };

/** The result's parts in order; structuredContent comes last when no text block carries it. */
export function partsOf(result: ToolResult): Part[] {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const texts = blocks.filter((b) => b.type === "text" && typeof b.text === "string").length;
  let n = 0;
  const parts: Part[] = blocks.map((block): Part => {
    if (block.type !== "text" || typeof block.text !== "string") return { kind: "media", block };
    const label = texts > 1 ? `text block ${++n}` : "the result";
    const json = jsonOfText(block.text);
    return json ? { kind: "json", json, label } : { kind: "text", text: block.text, label };
  });
  const structured = result.structuredContent;
  if (structured !== undefined && !repeated(structured, parts)) {
    parts.push({
      kind: "json",
      json: { value: structured, text: JSON.stringify(structured) },
      label: texts > 0 ? "structuredContent" : "the result",
    });
  }
  return parts;
}

/**
 * True when a text block already carries `structured`: the same value, or the value of its only
 * key (tools wrap an array as `{rows: [...]}` because structuredContent must be an object).
 */
export function repeated(structured: unknown, parts: readonly Part[]): boolean {
  const values = parts.flatMap((p) => (p.kind === "json" ? [p.json.value] : []));
  if (values.length === 0) return false;
  const inner: unknown =
    typeof structured === "object" && structured !== null && Object.keys(structured).length === 1
      ? (Object.values(structured) as unknown[])[0]
      : undefined;
  return values.some(
    (v) => isDeepStrictEqual(v, structured) || (inner !== undefined && isDeepStrictEqual(v, inner)),
  );
}

/** Parts a budget counts: everything but media. */
export function counted(parts: readonly Part[]): Exclude<Part, { kind: "media" }>[] {
  return parts.filter((p): p is Exclude<Part, { kind: "media" }> => p.kind !== "media");
}
