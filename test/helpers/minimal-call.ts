import { isRecord } from "../../src/json.js";

/**
 * A tool's minimal valid call, built from its input schema: the properties a server needs
 * (required, without a default), each with the simplest value its schema allows.
 */
type Node = { [key: string]: unknown };

const FORMATS: Record<string, string> = {
  uri: "https://example.com/",
  url: "https://example.com/",
  email: "a@example.com",
  "date-time": "2024-01-01T00:00:00Z",
  date: "2024-01-01",
  uuid: "00000000-0000-4000-8000-000000000000",
};

/** The simplest value `schema` allows (undefined when this generator cannot tell). */
function minimal(schema: unknown, root: Node, depth = 0): unknown {
  if (!isRecord(schema) || depth > 12) return undefined;
  if (typeof schema.$ref === "string") {
    const [, kind, key] = /^#\/(\$defs|definitions)\/(.+)$/.exec(schema.$ref) ?? [];
    return minimal(
      kind && key ? (root[kind] as Node | undefined)?.[key] : undefined,
      root,
      depth + 1,
    );
  }
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const k of ["anyOf", "oneOf"]) {
    const members = schema[k];
    if (Array.isArray(members))
      return minimal(
        members.find((m) => isRecord(m) && m.type !== "null") ?? members[0],
        root,
        depth + 1,
      );
  }
  if (Array.isArray(schema.allOf)) return minimal(schema.allOf[0], root, depth + 1);
  const type: unknown = Array.isArray(schema.type) ? (schema.type as unknown[])[0] : schema.type;
  switch (type) {
    case "string": {
      if (typeof schema.format === "string" && FORMATS[schema.format])
        return FORMATS[schema.format];
      return "x".repeat(typeof schema.minLength === "number" ? Math.max(1, schema.minLength) : 1);
    }
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "array": {
      const n = typeof schema.minItems === "number" ? schema.minItems : 0;
      return Array.from({ length: n }, () => minimal(schema.items, root, depth + 1));
    }
    case "null":
      return null;
    default:
      return minimalObject(schema, root, depth);
  }
}

/** Required properties without a default, each minimal: what a server needs, nothing more. */
export function minimalObject(schema: Node, root: Node, depth: number): Node {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return Object.fromEntries(
    required
      .filter((name) => !(isRecord(properties[name]) && "default" in properties[name]))
      .map((name) => [name, minimal(properties[name] ?? {}, root, depth + 1)]),
  );
}
