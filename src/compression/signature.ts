import type { JsonSchema } from "../types.js";

const DEFAULT_MAX_CHARS = 120;
const ELLIPSIS = "…";

/** `name(owner, repo, title, body?, labels?)` — required params first in schema order, `?` for optional. */
export function signature(name: string, inputSchema: JsonSchema): string {
  const properties = inputSchema.properties;
  const names =
    typeof properties === "object" && properties !== null && !Array.isArray(properties)
      ? Object.keys(properties)
      : [];
  const required = new Set(
    Array.isArray(inputSchema.required)
      ? inputSchema.required.filter((r): r is string => typeof r === "string")
      : [],
  );
  const params = [
    ...names.filter((n) => required.has(n)),
    ...names.filter((n) => !required.has(n)).map((n) => `${n}?`),
  ];
  return `${name}(${params.join(", ")})`;
}

/** First sentence of a description, whitespace-collapsed, max ~120 chars with an ellipsis. */
export function firstSentence(text: string | undefined, maxChars = DEFAULT_MAX_CHARS): string {
  if (!text) return "";
  // A blank line ends a paragraph even when its last sentence has no full stop.
  const paragraph = (text.trim().split(/\n\s*\n/)[0] ?? "").replace(/\s+/g, " ");
  // A sentence ends at . ! ? followed by a capital (or the end), so "e.g. ci.yaml" does not cut.
  const end = /[.!?](?=\s+[A-Z"'`([]|$)/.exec(paragraph);
  const sentence = end ? paragraph.slice(0, end.index + 1) : paragraph;
  if (sentence.length <= maxChars) return sentence;
  const cut = sentence.slice(0, Math.max(0, maxChars - ELLIPSIS.length));
  // Prefer a word boundary, unless that would throw away most of the text.
  const space = sentence[cut.length] === " " ? cut.length : cut.lastIndexOf(" ");
  const head = space > cut.length / 2 ? cut.slice(0, space) : cut;
  return `${head.replace(/[\s,;:.]+$/, "")}${ELLIPSIS}`;
}
