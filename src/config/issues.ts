/**
 * Zod issues → config problems. Every problem names its key path, what is wrong and the fix;
 * unknown keys (reported by `z.strictObject`) get the closest known key of their object.
 */
import { z } from "zod";
import { suggest } from "./suggest.js";

/** A key path inside the config file, e.g. `["mcpServers", "github", "args", 1]`. */
export type KeyPath = readonly (string | number)[];

/** What our error map says for an unknown key, so a schema's own message can be told apart. */
const UNKNOWN_KEY = "unknown key";

/**
 * Validate `input` against `schema`. On failure, push one problem per issue (prefixed with
 * `at`, where `input` sits in the file) and return undefined.
 */
export function check<S extends z.ZodType>(
  schema: S,
  input: unknown,
  at: KeyPath,
  problems: string[],
): z.output<S> | undefined {
  const result = schema.safeParse(input, { error: message });
  if (result.success) return result.data;
  for (const issue of result.error.issues) problems.push(...problemsOf(issue, schema, at));
  return undefined;
}

/** `a.b[1].c`, or `(root)` for the empty path. */
export function formatPath(parts: KeyPath): string {
  const text = parts.reduce<string>(
    (acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p),
    "",
  );
  return text || "(root)";
}

/** `at: unknown key.` with the closest known key, or the list of known keys. */
export function unknownKey(at: string, key: string, known: readonly string[]): string {
  const guess = suggest(key, known);
  if (guess) return `${at}: unknown key. Did you mean "${guess}"?`;
  return known.length > 0
    ? `${at}: unknown key. Known keys here: ${known.join(", ")}.`
    : `${at}: unknown key. Remove it.`;
}

/** Our wording for the issues whose fix is the same everywhere; zod's for the rest. */
function message(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined
        ? `missing. Add ${article(issue.expected)}`
        : `must be ${article(issue.expected)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "unrecognized_keys":
      return UNKNOWN_KEY;
    default:
      return undefined;
  }
}

function problemsOf(issue: z.core.$ZodIssue, schema: z.ZodType, at: KeyPath): string[] {
  const path = [...at, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
  if (issue.code !== "unrecognized_keys") return [`${formatPath(path)}: ${issue.message}.`];
  return issue.keys.map((key) => {
    const keyAt = formatPath([...path, key]);
    // A schema's own message (e.g. a key of the other transport) explains more than a guess.
    if (issue.message !== UNKNOWN_KEY) return `${keyAt}: "${key}" ${issue.message}.`;
    return unknownKey(keyAt, key, keysAt(schema, issue.path));
  });
}

/** The keys the object schema at `path` inside `schema` declares. */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.ZodType | undefined = schema;
  for (const key of path) {
    node = unwrap(node);
    if (node instanceof z.ZodObject) node = (node.shape as Record<PropertyKey, z.ZodType>)[key];
    else if (node instanceof z.ZodRecord) node = node.valueType as z.ZodType;
    else if (node instanceof z.ZodArray) node = node.element as z.ZodType;
    else return [];
  }
  node = unwrap(node);
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

function unwrap(node: z.ZodType | undefined): z.ZodType | undefined {
  return node instanceof z.ZodOptional ? unwrap(node.unwrap() as z.ZodType) : node;
}

function article(type: string): string {
  if (type === "record" || type === "object") return "an object";
  if (type === "array") return "an array";
  if (type === "int") return "an integer";
  return `a ${type}`;
}

/** What the steps of `parseConfig` collect as they go. */
export interface Findings {
  /** Fatal: each names a key path, what is wrong and the fix. */
  problems: string[];
  /** Said once at startup (foreign keys ignored, disabled servers). */
  warnings: string[];
  /** Values that must never be logged. */
  secrets: string[];
}
