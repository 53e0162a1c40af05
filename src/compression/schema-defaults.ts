import type { JsonSchema } from "../types.js";
import { isRecord } from "../json.js";

type Node = { [key: string]: unknown };

/** Keywords whose value is one sub-schema. */
const ONE = [
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
  "items",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
];
/** Keywords whose value is a list of sub-schemas (`items` in its draft-07 tuple form too). */
const LISTS = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/** Keywords whose value maps names to sub-schemas. */
const MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/**
 * The schema with every property that is both required and has a `default` made optional, at
 * every depth. Servers fill such a property when it is left out (playwright-mcp's
 * `browser_take_screenshot` requires `scale`, default "css", and accepts `{}`): a check that
 * demanded it would refuse calls the server accepts. Nodes without such a property are shared
 * with the input, which is never mutated; a schema with none is returned as is.
 */
export function defaultsOptional<T extends JsonSchema | Node>(schema: T): T {
  return rewrite(schema) as T;
}

function rewrite(input: unknown): unknown {
  if (Array.isArray(input)) {
    let changed = false;
    const out = input.map((m) => {
      const r = rewrite(m);
      if (r !== m) changed = true;
      return r;
    });
    return changed ? out : input;
  }
  if (!isRecord(input)) return input;
  let node: Node | undefined;
  const set = (k: string, v: unknown) => {
    node ??= { ...input };
    node[k] = v;
  };
  const source = input;
  const maybeSet = (k: string) => {
    const v = rewrite(source[k]);
    if (v !== source[k]) set(k, v);
  };
  for (const k of ONE) if (isRecord(input[k])) maybeSet(k);
  for (const k of LISTS) if (Array.isArray(input[k])) maybeSet(k);
  for (const k of MAPS) {
    const map = input[k];
    if (!isRecord(map)) continue;
    let out: Node | undefined;
    for (const [name, sub] of Object.entries(map)) {
      const r = rewrite(sub);
      if (r === sub) continue;
      out ??= { ...map };
      out[name] = r;
    }
    if (out) set(k, out);
  }
  const properties = input.properties;
  if (Array.isArray(input.required) && isRecord(properties)) {
    const required = input.required.filter(
      (name) =>
        !(typeof name === "string" && isRecord(properties[name]) && "default" in properties[name]),
    );
    if (required.length < input.required.length) {
      if (required.length > 0) set("required", required);
      else {
        node ??= { ...input };
        delete node.required;
      }
    }
  }
  return node ?? input;
}
