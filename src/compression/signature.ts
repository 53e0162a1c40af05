import type { JsonSchema } from "../types.js";
import { defaultsOptional } from "./schema-defaults.js";
import { isRecord } from "../json.js";

const DEFAULT_MAX_CHARS = 120;
const ELLIPSIS = "…";

/**
 * `create_issue(owner: string, repo: string, title: string, body?: string, labels?: string[])`:
 * required params first in schema order, then optional ones with `?`. Short scalar types are
 * shown (`string`, `int`, `number`, `boolean`, and arrays of them); objects, unions and enums are
 * left for describe("server.tool"). A required param with a default is optional (the server fills it).
 */
export function signature(name: string, schema: JsonSchema): string {
  const inputSchema = defaultsOptional(schema);
  const properties = isRecord(inputSchema.properties) ? inputSchema.properties : {};
  const names = Object.keys(properties);
  const required = new Set(
    Array.isArray(inputSchema.required)
      ? inputSchema.required.filter((r): r is string => typeof r === "string")
      : [],
  );
  const param = (n: string, optional: boolean) => {
    const type = shortType(properties[n]);
    return `${n}${optional ? "?" : ""}${type ? `: ${type}` : ""}`;
  };
  const params = [
    ...names.filter((n) => required.has(n)).map((n) => param(n, false)),
    ...names.filter((n) => !required.has(n)).map((n) => param(n, true)),
  ];
  return `${name}(${params.join(", ")})`;
}

const SCALARS: Readonly<Record<string, string>> = {
  string: "string",
  integer: "int",
  number: "number",
  boolean: "boolean",
};

/** A scalar type name (or an array of one), else undefined. Enums and literals are not short. */
function shortType(schema: unknown): string | undefined {
  if (!isRecord(schema) || "enum" in schema || "const" in schema) return undefined;
  if (typeof schema.type !== "string") return undefined;
  if (schema.type === "array") {
    const item = shortType(schema.items);
    return item === undefined ? undefined : `${item}[]`;
  }
  return SCALARS[schema.type];
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
