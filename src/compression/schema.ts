import { createHash } from "node:crypto";

import type { compile as Compile, Options as CompileOptions } from "json-schema-to-typescript";

import { canonicalJson } from "../json.js";
import type { JsonSchema } from "../types.js";

/**
 * The library is loaded on the first compile, not at startup: it costs ~23 MB of memory and
 * startup time, and a session that never describes a tool never needs it. (Node's module cache
 * would hold it anyway; this is that cache, not proxy state.)
 */
let library: Promise<typeof Compile> | undefined;
function loadCompiler(): Promise<typeof Compile> {
  library ??= import("json-schema-to-typescript").then((m) => m.compile);
  return library;
}

/** "typescript" compiles to a declaration (falling back to JSON when that is not smaller); "json" always emits compact JSON. */
export type SchemaMode = "typescript" | "json";

/** A tool's input schema in the text form shown to the model. */
export interface CompiledSchema {
  format: "typescript" | "json";
  text: string;
}

/** Options of {@link SchemaCompiler}. */
export interface SchemaCompilerOptions {
  mode?: SchemaMode;
  /** Budget for one compilation; past it the compact JSON is served. Default 2000 ms. */
  timeoutMs?: number;
  /** Cached entries kept; the oldest is evicted first. Default 2000. */
  maxEntries?: number;
}

type Node = { [key: string]: unknown };

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_MAX_ENTRIES = 2000;
/** Past this size a schema is served as JSON: the library's cost grows faster than the savings. */
const MAX_SCHEMA_CHARS = 200_000;

/**
 * Library options chosen for small, fast, offline output: no prettier pass, no banner, no tuple
 * explosion from maxItems, no `[k: string]: unknown` on every object, and a $ref parser with
 * every external resolver disabled so an upstream schema can never make us read a file or URL.
 */
const LIB_OPTIONS: Readonly<Partial<CompileOptions>> = Object.freeze({
  bannerComment: "",
  format: false,
  ignoreMinAndMaxItems: true,
  maxItems: -1,
  additionalProperties: false,
  declareExternallyReferenced: true,
  enableConstEnums: false,
  inferStringEnumKeysFromValues: false,
  strictIndexSignatures: false,
  unreachableDefinitions: false,
  unknownAny: true,
  $refOptions: { resolve: { external: false, file: false, http: false } },
});

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
 * Compiles tool schemas once, cached by a hash of (schema, typeName); never throws.
 *
 * The TypeScript form is a declaration such as `interface CreateIssue {owner: string ...}` with
 * every description, default and constraint kept as a one-line JSDoc comment.
 */
export class SchemaCompiler {
  readonly #mode: SchemaMode;
  readonly #timeoutMs: number;
  readonly #maxEntries: number;
  readonly #cache = new Map<string, Promise<CompiledSchema>>();

  constructor(options: SchemaCompilerOptions = {}) {
    this.#mode = options.mode ?? "typescript";
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /**
   * Compile `schema` to text; concurrent calls with the same input share one compilation. A
   * compilation that failed or ran out of time stays cached as JSON: retrying would fail again.
   */
  compile(schema: JsonSchema, typeName: string): Promise<CompiledSchema> {
    let json: string;
    let key: string;
    try {
      json = JSON.stringify(schema);
      key = createHash("sha1").update(canonicalJson({ schema, typeName })).digest("hex");
    } catch {
      // Cycles and BigInts cannot come over the wire; an empty schema is the honest rendering.
      return Promise.resolve({ format: "json", text: "{}" });
    }
    if (this.#mode === "json") return Promise.resolve({ format: "json", text: json });

    const cached = this.#cache.get(key);
    if (cached) return cached;
    const pending = this.#compileTypescript(schema, typeName, json);
    if (this.#cache.size >= this.#maxEntries) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(key, pending);
    return pending;
  }

  async #compileTypescript(
    schema: JsonSchema,
    typeName: string,
    json: string,
  ): Promise<CompiledSchema> {
    const fallback: CompiledSchema = { format: "json", text: json };
    if (json.length > MAX_SCHEMA_CHARS || hasExternalRef(schema)) return fallback;
    let timer: NodeJS.Timeout | undefined;
    try {
      // The library mutates its input (normalizer, $ref dereferencing): give it a private copy.
      const compile = await loadCompiler();
      const work = compile(prepareSchema(structuredClone(schema)), typeName, LIB_OPTIONS);
      // The library is mostly synchronous and cannot be cancelled; the budget only bounds how long a caller waits.
      const budget = new Promise<undefined>((resolve) => {
        timer = setTimeout(resolve, this.#timeoutMs, undefined);
        timer.unref();
      });
      const raw = await Promise.race([work, budget]);
      if (raw === undefined) {
        // Late failures of the abandoned compilation have nowhere to go.
        void work.catch(() => undefined);
        return fallback;
      }
      const text = compactDeclaration(raw);
      return text.length > 0 && text.length < json.length
        ? { format: "typescript", text }
        : fallback;
    } catch {
      // A schema the library rejects is still a valid thing to show the model: serve it as JSON.
      return fallback;
    } finally {
      clearTimeout(timer);
    }
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasExternalRef(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasExternalRef);
  if (!isNode(value)) return false;
  for (const [k, v] of Object.entries(value)) {
    if (k === "$ref" && typeof v === "string" && !v.startsWith("#")) return true;
    if (k !== "enum" && k !== "const" && k !== "default" && k !== "examples" && hasExternalRef(v))
      return true;
  }
  return false;
}

/**
 * Rewrite a schema so the library's output keeps everything a model needs: constraints,
 * defaults and the descriptions of union members and array items (which the library drops)
 * are moved into the description of the nearest property or named type.
 */
function prepareSchema(schema: JsonSchema): Node {
  const { node, notes } = prepareNode(schema);
  const root = isNode(node) ? node : {};
  if (notes.length > 0) root.description = notes.join(" ");
  return root;
}

/**
 * Returns a rewritten copy of `input` without its description, plus the notes (description,
 * constraints, hoisted member notes) that belong in its comment; the caller decides whether the
 * node keeps them or hoists them further up.
 */
function prepareNode(input: unknown): { node: unknown; notes: string[] } {
  if (!isNode(input)) return { node: input, notes: [] };
  const node: Node = { ...input };
  const notes: string[] = [];

  const description = typeof node.description === "string" ? node.description.trim() : "";
  if (description) notes.push(description);
  else if (typeof node.title === "string" && node.title.trim()) notes.push(node.title.trim());
  delete node.description;
  for (const k of DROPPED_KEYWORDS) delete node[k];

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
    if (!isNode(map)) continue;
    const out: Node = {};
    for (const [name, sub] of Object.entries(map)) out[name] = withDescription(prepareNode(sub));
    node[k] = out;
  }

  // Index signatures keep their comment.
  if (isNode(node.additionalProperties))
    node.additionalProperties = withDescription(prepareNode(node.additionalProperties));

  for (const k of MEMBER_LISTS) {
    const members = node[k];
    if (!Array.isArray(members)) continue;
    const prepared = members.map(prepareNode);
    node[k] = prepared.map((p) => p.node);
    const labels = memberLabels(members);
    prepared.forEach((p, i) => {
      if (p.notes.length > 0) notes.push(`${k}[${labels[i]}]: ${p.notes.join(" ")}`);
    });
  }

  if (Array.isArray(node.prefixItems)) {
    // Draft 2020-12 tuples, rewritten to the draft-07 form the library renders as `[A, B, ...C[]]`.
    if (node.items !== undefined) node.additionalItems = node.items;
    node.items = node.prefixItems;
    delete node.prefixItems;
  }
  if (Array.isArray(node.items)) {
    const prepared = node.items.map(prepareNode);
    node.items = prepared.map((p) => p.node);
    prepared.forEach((p, i) => {
      if (p.notes.length > 0) notes.push(`Item ${i}: ${p.notes.join(" ")}`);
    });
  }
  for (const k of ["items", "additionalItems"]) {
    if (!isNode(node[k])) continue;
    const p = prepareNode(node[k]);
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
  // `{type: "object"}` alone accepts any keys; without this the library's additionalProperties
  // default would print it as `{}`, which reads as "no fields".
  if (
    node.type === "object" &&
    !("properties" in node) &&
    !("patternProperties" in node) &&
    !("additionalProperties" in node)
  ) {
    node.additionalProperties = true;
  }
  return { node, notes };
}

function withDescription({ node, notes }: { node: unknown; notes: string[] }): unknown {
  if (isNode(node) && notes.length > 0) node.description = notes.join(" ");
  return node;
}

/** Label union members by their const value, else their type when unambiguous, else position. */
function memberLabels(members: unknown[]): string[] {
  const types = members.map((m) => (isNode(m) && typeof m.type === "string" ? m.type : undefined));
  return members.map((m, i) => {
    if (isNode(m) && "const" in m) return JSON.stringify(m.const);
    const t = types[i];
    return t !== undefined && types.indexOf(t) === types.lastIndexOf(t) ? t : String(i);
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

/**
 * Shrink the library's output for a reader that is a model: JSDoc blocks on one line, no
 * `export`, no parentheses around a whole property type, `"a"|"b"` unions (the spaces cost a
 * token per member in o200k), no blank lines.
 */
function compactDeclaration(raw: string): string {
  const collapsed = raw.replace(/\/\*\*\n([\s\S]*?)\n \*\//g, (_m, body: string) => {
    const text = body
      .split("\n")
      .map((line) => line.replace(/^ \* ?/, "").trim())
      .filter((line) => line.length > 0)
      .join(" ");
    return `/** ${text} */`;
  });
  return collapsed
    .split("\n")
    .map((line) => line.trim())
    .map((line) =>
      line.startsWith("/**")
        ? line
        : tightenUnions(
            unwrapType(line.replace(/^export (?=interface |type |enum |const enum )/, "")),
          ),
    )
    .filter((line) => line.length > 0)
    .reduce<string[]>(trailingComments, [])
    .join("\n");
}

/**
 * `/** text *\/` on its own line before a declaration line becomes a trailing `// text` on that
 * line: the same words, two to three tokens fewer per described property.
 */
function trailingComments(out: string[], line: string, index: number, lines: string[]): string[] {
  const previous = index > 0 ? lines[index - 1] : undefined;
  const comment = previous !== undefined ? /^\/\*\* (.*) \*\/$/.exec(previous) : null;
  if (line.startsWith("/**")) {
    // Kept for the next line, unless that line is a comment too (or there is none).
    const next = lines[index + 1];
    if (next === undefined || next.startsWith("/**") || next.startsWith("}")) out.push(line);
    return out;
  }
  out.push(comment ? `${line} // ${comment[1]}` : line);
  return out;
}

/** `key?: (A | B)` → `key?: A | B`, only when the parentheses enclose the whole type. */
function unwrapType(line: string): string {
  const m = /^((?:[\w$]+|"(?:[^"\\]|\\.)*")\??: |type [\w$]+ = )\(/.exec(line);
  if (!m || !line.endsWith(")")) return line;
  const start = m[1]!.length;
  return closingParen(line, start) === line.length - 1
    ? line.slice(0, start) + line.slice(start + 1, -1)
    : line;
}

/**
 * Outside string literals: `A | B` → `A|B` and `(T)[]` → `T[]`. Comments never reach here (the
 * library puts them on lines of their own).
 */
function tightenUnions(line: string): string {
  let out = "";
  let code = "";
  const flush = (): void => {
    out += code.replaceAll(" | ", "|").replace(/\(([\w$]+)\)/g, "$1");
    code = "";
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '"' || c === "'") {
      flush();
      const end = stringEnd(line, i);
      out += line.slice(i, end + 1);
      i = end;
    } else {
      code += c;
    }
  }
  flush();
  return out;
}

/** Index of the quote closing the string literal opened at `start` (or the last index). */
function stringEnd(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return i;
  }
  return text.length - 1;
}

/** Index of the parenthesis closing the one at `open`, skipping string literals; -1 if none. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      i = stringEnd(text, i);
    } else if (c === "(") {
      depth++;
    } else if (c === ")" && --depth === 0) {
      return i;
    }
  }
  return -1;
}
