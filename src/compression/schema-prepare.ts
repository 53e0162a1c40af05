import type { JsonSchema } from "../types.js";
import { defaultsOptional } from "./schema-defaults.js";
import { hideCommentEnds } from "./schema-text.js";
import { isRecord } from "../json.js";

type Node = { [key: string]: unknown };

/**
 * Keywords json-schema-to-typescript does not render (or renders only partly); they are written
 * into the comment of the nearest place the library keeps comments for. Raw keywords are shown
 * as is, the others as JSON.
 */
const NOTED_KEYWORDS = [
  "format",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "propertyNames",
  "contentMediaType",
  "contentEncoding",
  "readOnly",
  "writeOnly",
  "default",
  "examples",
  "not",
  "if",
  "then",
  "else",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "contains",
  "minContains",
  "maxContains",
  "unevaluatedProperties",
  "unevaluatedItems",
] as const;
const RAW_KEYWORDS: ReadonlySet<string> = new Set([
  "format",
  "pattern",
  "contentMediaType",
  "contentEncoding",
]);

/** Numeric bounds, written as the comparison a value must satisfy. */
const BOUNDS: Readonly<Partial<Record<string, string>>> = {
  minimum: ">=",
  maximum: "<=",
  exclusiveMinimum: ">",
  exclusiveMaximum: "<",
};

/** Keywords that only steer the library's naming or typing; an upstream must not drive them. */
const DROPPED_KEYWORDS = ["tsType", "tsEnumNames", "$id", "id", "title", "$schema", "$comment"];

/** Keywords from which the library derives a type; a schema with none of them accepts anything. */
const TYPING_KEYWORDS = [
  "type",
  "enum",
  "const",
  "$ref",
  "anyOf",
  "oneOf",
  "allOf",
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
  "tsType",
];

/** Sub-schema maps whose members keep their own comment in the output (properties, named types). */
const COMMENTED_MAPS = ["properties", "patternProperties", "$defs", "definitions"];
/** Unions and intersections: the library renders members inline and drops their descriptions. */
const MEMBER_LISTS = ["anyOf", "oneOf", "allOf"];

/**
 * Rewrite a schema so the library's output keeps everything a model needs: constraints,
 * defaults and the descriptions of union members and array items (which the library drops)
 * are moved into the description of the nearest property or named type.
 */
export function prepareSchema(schema: JsonSchema): Node {
  // Required with a default reads as optional, as the server treats it (it fills the default).
  const { node, notes } = prepareNode(defaultsOptional(schema));
  const root = isRecord(node) ? node : {};
  // The root stays a declaration with fields, even with none: "(no arguments)", not `object`.
  if (root.tsType === "object") {
    delete root.tsType;
    root.properties = {};
  }
  if (notes.length > 0) root.description = hideCommentEnds(notes.join(" "));
  return root;
}

/**
 * Returns a rewritten copy of `input` without its description, plus the notes (description,
 * constraints, hoisted member notes) that belong in its comment; the caller decides whether the
 * node keeps them or hoists them further up.
 */
function prepareNode(
  input: unknown,
  name?: string,
  parentDescription?: string,
): { node: unknown; notes: string[] } {
  if (!isRecord(input)) return { node: input, notes: [] };
  const node: Node = { ...input };
  const notes: string[] = [];

  const title = typeof node.title === "string" ? oneLine(node.title) : "";
  let description = typeof node.description === "string" ? oneLine(node.description) : "";
  // A member or item that repeats its parent's description verbatim says nothing new.
  if (description === parentDescription) description = "";
  // A title is a fact unless it only restates the property name ("Page Size" for page_size).
  if (title && title !== description && (name === undefined || !sameWords(title, name)))
    notes.push(description ? `${title}:` : title);
  if (description) notes.push(description);
  delete node.description;
  for (const k of DROPPED_KEYWORDS) delete node[k];
  // Property names are strings in any JSON object: zod's records say it anyway.
  if (isRecord(node.propertyNames) && isStringOnly(node.propertyNames)) delete node.propertyNames;

  for (const k of NOTED_KEYWORDS) {
    if (!(k in node)) continue;
    const v = node[k];
    const bound = BOUNDS[k];
    // Numeric bounds read as comparisons (`>=1 <=100`): the same fact in half the tokens.
    if (bound && typeof v === "number") notes.push(`${bound}${v}`);
    else
      notes.push(`@${k} ${RAW_KEYWORDS.has(k) && typeof v === "string" ? v : JSON.stringify(v)}`);
    delete node[k];
  }

  // A map of named sub-schemas: each member keeps its own notes as its description.
  for (const k of COMMENTED_MAPS) {
    const map = node[k];
    if (!isRecord(map)) continue;
    const out: Node = {};
    for (const [key, sub] of Object.entries(map))
      out[key] = withDescription(prepareNode(sub, k === "properties" ? key : undefined));
    node[k] = out;
  }

  // Index signatures keep their comment.
  if (isRecord(node.additionalProperties))
    node.additionalProperties = withDescription(prepareNode(node.additionalProperties));

  for (const k of MEMBER_LISTS) {
    const members = node[k];
    if (!Array.isArray(members)) continue;
    const prepared = members.map((m) => prepareNode(m, undefined, description));
    node[k] = prepared.map((p) => p.node);
    const labels = memberLabels(members);
    prepared.forEach((p, i) => {
      if (p.notes.length > 0) notes.push(`${labels[i]} ${p.notes.join(" ")}`);
    });
  }

  if (Array.isArray(node.prefixItems)) {
    // Draft 2020-12 tuples, rewritten to the draft-07 form the library renders as `[A, B, ...C[]]`.
    if (node.items !== undefined) node.additionalItems = node.items;
    node.items = node.prefixItems;
    delete node.prefixItems;
  }
  if (Array.isArray(node.items)) {
    const prepared = node.items.map((m) => prepareNode(m, undefined, description));
    node.items = prepared.map((p) => p.node);
    prepared.forEach((p, i) => {
      if (p.notes.length > 0) notes.push(`Item ${i}: ${p.notes.join(" ")}`);
    });
  }
  for (const k of ["items", "additionalItems"]) {
    if (!isRecord(node[k])) continue;
    const p = prepareNode(node[k], undefined, description);
    node[k] = p.node;
    if (p.notes.length > 0)
      notes.push(`${k === "items" ? "Items" : "Additional items"}: ${p.notes.join(" ")}`);
  }

  // A property that is a $ref prints as the named type, and the library then drops the
  // property's own comment; `allOf: [ref]` prints the same name but keeps the comment.
  if (typeof node.$ref === "string" && notes.length > 0) {
    node.allOf = [
      { $ref: node.$ref },
      ...(Array.isArray(node.allOf) ? (node.allOf as unknown[]) : []),
    ];
    delete node.$ref;
  }
  typeIntegers(node);
  // A schema with no type keyword accepts any value, but the library would print an open object.
  if (!TYPING_KEYWORDS.some((k) => k in node)) node.tsType = "unknown";
  openObjects(node);
  return { node, notes };
}

/**
 * `additionalProperties: true` restates JSON Schema's default: it goes, instead of printing
 * `[k: string]: unknown` in every open object. An object that names no property and accepts any
 * is a plain `object` (the library would print `{}`, which reads as "no fields").
 */
function openObjects(node: Node): void {
  if (node.additionalProperties === true) delete node.additionalProperties;
  const named = isRecord(node.properties) && Object.keys(node.properties).length > 0;
  if (
    node.type === "object" &&
    !named &&
    !("patternProperties" in node) &&
    !("additionalProperties" in node) &&
    // Members, refs and literals say more than `object`.
    !["tsType", "$ref", "enum", "const", ...MEMBER_LISTS].some((k) => k in node)
  ) {
    delete node.properties;
    node.tsType = "object";
  }
}

/** Whitespace runs (newlines, indentation) to one space: comments are one line. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** "Page Size" and page_size, "owner" and Owner: the same words. */
function sameWords(a: string, b: string): boolean {
  const words = (t: string) =>
    t
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "");
  return words(a) === words(b);
}

function isStringOnly(schema: Node): boolean {
  return Object.keys(schema).every((k) => k === "type") && schema.type === "string";
}

function withDescription({ node, notes }: { node: unknown; notes: string[] }): unknown {
  if (isRecord(node) && notes.length > 0) node.description = hideCommentEnds(notes.join(" "));
  return node;
}

/**
 * Label union members for their hoisted notes: `"a":` by const value, else `(object)` by type when
 * no other member has it, else `(#2)` by position (1-based). The union itself shows in the type.
 */
function memberLabels(members: unknown[]): string[] {
  const types = members.map((m) =>
    isRecord(m) && typeof m.type === "string" ? m.type : undefined,
  );
  return members.map((m, i) => {
    if (isRecord(m) && "const" in m) return `${JSON.stringify(m.const)}:`;
    const t = types[i];
    return t !== undefined && types.indexOf(t) === types.lastIndexOf(t) ? `(${t})` : `(#${i + 1})`;
  });
}

/**
 * The library prints `integer` as `number`; a model that is told `int` will not send 1.5.
 * Enums keep their literal union, so only plain integer types are rewritten.
 */
function typeIntegers(node: Node): void {
  if ("enum" in node || "const" in node) return;
  const names: Record<string, string> = {
    integer: "int",
    number: "number",
    string: "string",
    boolean: "boolean",
    null: "null",
  };
  if (node.type === "integer") {
    node.tsType = "int";
  } else if (
    Array.isArray(node.type) &&
    node.type.includes("integer") &&
    node.type.every((t) => typeof t === "string" && t in names)
  ) {
    node.tsType = (node.type as string[]).map((t) => names[t]).join(" | ");
  }
}
