import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { encode as countTokens } from "gpt-tokenizer";
import { compile } from "json-schema-to-typescript";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";

import { SchemaCompiler } from "../../src/compression/schema.js";
import type { CompiledSchema } from "../../src/compression/schema.js";
import type * as Lib from "json-schema-to-typescript";
import type { JsonSchema, ToolDef } from "../../src/types.js";
import { isRecord } from "../../src/json.js";

// Wrap the real compile in a spy so the cache tests can count library calls.
vi.mock("json-schema-to-typescript", async (importOriginal) => {
  const mod = await importOriginal<typeof Lib>();
  return { ...mod, compile: vi.fn(mod.compile) };
});

const CORPUS_DIR = fileURLToPath(new URL("../fixtures/corpus/github-mcp-server/", import.meta.url));

/** Every tool of the corpus (the directory also holds a LICENSE, which is skipped). */
function loadCorpus(): ToolDef[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(CORPUS_DIR + f, "utf8")) as ToolDef);
}

/** Keywords the compiler must keep as `@keyword value` notes (numeric bounds as `>=1`, see BOUNDS). */
const CONSTRAINT_KEYWORDS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minItems",
  "maxItems",
  "default",
] as const;
const RAW_KEYWORDS = new Set(["pattern", "format"]);
const BOUNDS: Partial<Record<string, string>> = {
  minimum: ">=",
  maximum: "<=",
  exclusiveMinimum: ">",
  exclusiveMaximum: "<",
};

const normalize = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Substrings the normalised declaration of `schema` must contain. */
function expectedNeedles(schema: JsonSchema): string[] {
  const needles: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isRecord(node)) return;
    if (typeof node.description === "string" && node.description.trim()) {
      needles.push(normalize(node.description));
    }
    if (Array.isArray(node.enum)) for (const v of node.enum) needles.push(JSON.stringify(v));
    if ("const" in node) needles.push(JSON.stringify(node.const));
    for (const k of CONSTRAINT_KEYWORDS) {
      if (!(k in node)) continue;
      const v = node[k];
      const bound = BOUNDS[k];
      needles.push(
        bound && typeof v === "number"
          ? `${bound}${v}`
          : `@${k} ${RAW_KEYWORDS.has(k) && typeof v === "string" ? v : JSON.stringify(v)}`,
      );
    }
    if (isRecord(node.properties)) {
      const required = Array.isArray(node.required) ? node.required : [];
      for (const [name, sub] of Object.entries(node.properties)) {
        // Required with a default is optional: the server fills it.
        const optional = !required.includes(name) || (isRecord(sub) && "default" in sub);
        needles.push(`${name}${optional ? "?" : ""}:`);
        visit(sub);
      }
    }
    for (const k of ["items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"]) {
      visit(node[k]);
    }
    for (const k of ["$defs", "definitions"]) {
      if (isRecord(node[k])) Object.values(node[k]).forEach(visit);
    }
  };
  visit(schema);
  return needles;
}

/** Top-level property → required, as the schema says. */
function expectedTopLevel(schema: JsonSchema): Map<string, boolean> {
  const required = Array.isArray(schema.required) ? schema.required : [];
  return new Map(
    Object.keys(isRecord(schema.properties) ? schema.properties : {}).map((name) => [
      name,
      required.includes(name),
    ]),
  );
}

/** Property lines directly inside the declaration's braces: name → required. */
function declaredTopLevel(declaration: string): Map<string, boolean> {
  const found = new Map<string, boolean>();
  let depth = 0;
  for (const line of declaration.split("\n")) {
    if (line.startsWith("/**")) continue;
    const m = /^([\w$]+|"(?:[^"\\]|\\.)*")(\??): /.exec(line);
    if (depth === 1 && m) {
      const name = m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : m[1]!;
      found.set(name, m[2] !== "?");
    }
    // Braces inside string literals and trailing `//` comments are not structure.
    const code = line.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\/\/.*$/, "");
    for (const c of code) {
      if (c === "{") depth++;
      else if (c === "}") depth--;
    }
  }
  return found;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Compile and assert it is a TypeScript declaration. */
async function compileTs(schema: JsonSchema, name = "Input"): Promise<string> {
  const result = await new SchemaCompiler().compile(schema, name);
  expect(result.format).toBe("typescript");
  return result.text;
}

describe("SchemaCompiler on the github-mcp-server corpus", () => {
  const corpus = loadCorpus();
  const compiled = new Map<string, CompiledSchema>();

  beforeAll(async () => {
    const compiler = new SchemaCompiler();
    for (const tool of corpus)
      compiled.set(tool.name, await compiler.compile(tool.inputSchema, tool.name));
  });

  it("has the whole corpus", () => {
    expect(corpus.length).toBe(117);
  });

  it("keeps every property, required flag, enum value, description and constraint", () => {
    let fallbacks = 0;
    for (const tool of corpus) {
      const result = compiled.get(tool.name)!;
      if (result.format === "json") {
        fallbacks++;
        expect(JSON.parse(result.text)).toEqual(tool.inputSchema);
        continue;
      }
      const text = normalize(result.text);
      const missing = expectedNeedles(tool.inputSchema).filter((n) => !text.includes(n));
      expect(missing, `${tool.name}:\n${result.text}`).toEqual([]);
      expect(declaredTopLevel(result.text), tool.name).toEqual(expectedTopLevel(tool.inputSchema));
    }
    console.log(`schema fidelity: ${corpus.length} tools, ${fallbacks} JSON fallbacks`);
    expect(fallbacks).toBeLessThan(corpus.length / 10);
  });

  it("is never larger than compact JSON, and much smaller at the median", () => {
    const ratios = corpus.map((tool) => {
      const json = JSON.stringify(tool.inputSchema);
      const text = compiled.get(tool.name)!.text;
      expect(text.length, tool.name).toBeLessThanOrEqual(json.length);
      return text.length / json.length;
    });
    console.log(
      `schema chars decl/json: median ${quantile(ratios, 0.5).toFixed(3)}, p90 ${quantile(ratios, 0.9).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}`,
    );
    expect(quantile(ratios, 0.5)).toBeLessThan(0.85);
  });

  it("measures o200k tokens against the tool definition in API form", () => {
    const decl: number[] = [];
    const withDescription: number[] = [];
    const ofSchema: number[] = [];
    for (const tool of corpus) {
      const text = compiled.get(tool.name)!.text;
      const api = countTokens(
        JSON.stringify({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema,
        }),
      ).length;
      decl.push(countTokens(text).length / api);
      withDescription.push(countTokens(`${tool.description ?? ""}\n${text}`).length / api);
      ofSchema.push(
        countTokens(text).length / countTokens(JSON.stringify(tool.inputSchema)).length,
      );
    }
    const report = (label: string, r: number[]): string =>
      `${label}: median ${quantile(r, 0.5).toFixed(3)}, p90 ${quantile(r, 0.9).toFixed(3)}, max ${Math.max(...r).toFixed(3)}`;
    console.log(
      [
        report("tokens decl / tool JSON", decl),
        report("tokens (description + decl) / tool JSON", withDescription),
        report("tokens decl / schema JSON", ofSchema),
      ].join("\n"),
    );
    expect(quantile(decl, 0.5)).toBeLessThanOrEqual(0.7);
    expect(Math.max(...decl)).toBeLessThanOrEqual(1);
    expect(Math.max(...withDescription)).toBeLessThanOrEqual(1);
  });
});

describe("SchemaCompiler on targeted schemas", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("keeps descriptions of anyOf / oneOf members", async () => {
    const text = await compileTs({
      type: "object",
      properties: {
        who: {
          description: "Who to assign",
          oneOf: [
            { type: "string", description: "A login name" },
            { type: "integer", description: "A numeric user id" },
          ],
        },
        when: {
          anyOf: [
            { type: "string", format: "date-time", description: "An ISO timestamp" },
            { type: "null", description: "Clears the date" },
          ],
        },
        tags: {
          type: "array",
          items: {
            anyOf: [
              { const: "a", description: "First" },
              { const: "b", description: "Second" },
            ],
          },
        },
      },
      required: ["who"],
    });
    for (const needle of [
      "Who to assign",
      "A login name",
      "A numeric user id",
      "An ISO timestamp",
      "@format date-time",
      "Clears the date",
      "First",
      "Second",
      '"a": First',
      '"b": Second',
      "(string) A login name",
      "(integer) A numeric user id",
    ]) {
      expect(text).toContain(needle);
    }
    expect(text).toMatch(/^who: string\|int(?: \/\/.*)?$/m);
    expect(text).toMatch(/^when\?: string\|null(?: \/\/.*)?$/m);
  });

  it("keeps numeric, string and array constraints", async () => {
    const text = await compileTs({
      type: "object",
      properties: {
        n: { type: "number", minimum: 0, maximum: 10, exclusiveMaximum: 11, multipleOf: 0.5 },
        s: { type: "string", minLength: 2, maxLength: 5, pattern: "^[a-z]+\\d*$", format: "email" },
        a: {
          type: "array",
          items: { type: "string", maxLength: 3 },
          minItems: 1,
          maxItems: 50,
          uniqueItems: true,
        },
      },
    });
    for (const needle of [
      ">=0",
      "<=10",
      "<11",
      "@multipleOf 0.5",
      "@minLength 2",
      "@maxLength 5",
      "@pattern ^[a-z]+\\d*$",
      "@format email",
      "@minItems 1",
      "@maxItems 50",
      "@uniqueItems true",
      "Items: @maxLength 3",
    ]) {
      expect(text).toContain(needle);
    }
    // maxItems must not explode into tuple unions.
    expect(text).toMatch(/^a\?: string\[\](?: \/\/.*)?$/m);
  });

  it("keeps defaults, examples and integer types", async () => {
    const text = await compileTs({
      type: "object",
      properties: {
        branch: { type: "string", default: "main", description: "Branch name" },
        page: { type: "integer", default: 1 },
        opts: {
          type: "object",
          default: { deep: true },
          properties: { deep: { type: "boolean" } },
        },
        q: { type: "string", examples: ["is:open label:bug"] },
      },
    });
    expect(text).toContain('// Branch name @default "main"');
    expect(text).toContain("@default 1");
    expect(text).toMatch(/^page\?: int(?: \/\/.*)?$/m);
    expect(text).toContain('@default {"deep":true}');
    expect(text).toContain('@examples ["is:open label:bug"]');
  });

  it("declares a required property with a default as optional (the server fills it)", async () => {
    const text = await compileTs({
      type: "object",
      properties: {
        scale: { type: "string", enum: ["css", "device"], default: "css" },
        url: { type: "string" },
      },
      required: ["scale", "url"],
    });
    expect(text).toMatch(/^scale\?: "css" ?\| ?"device"(?: \/\/.*)?$/m);
    expect(text).toMatch(/^url: string(?: \/\/.*)?$/m);
  });

  it("prints an untyped property as unknown and a property-less object as object", async () => {
    const text = await compileTs({
      type: "object",
      properties: {
        value: { description: "Any JSON value" },
        meta: { type: "object", description: "Free-form metadata" },
        closed: {
          type: "object",
          additionalProperties: false,
          properties: { x: { type: "string" } },
        },
      },
    });
    expect(text).toMatch(/^value\?: unknown(?: \/\/.*)?$/m);
    expect(text).toContain("meta?: object // Free-form metadata");
    expect(text).not.toContain("[k: string]");
  });

  it("drops JSON-Schema no-ops: additionalProperties true, string propertyNames, name-like titles", async () => {
    const text = await compileTs({
      type: "object",
      $schema: "http://json-schema.org/draft-07/schema#",
      properties: {
        page_size: { type: "integer", title: "Page Size" },
        labels: {
          type: "object",
          propertyNames: { type: "string" },
          additionalProperties: { type: "string" },
        },
        filter: {
          type: "object",
          additionalProperties: true,
          properties: { value: { type: "string", title: "Filter value" } },
        },
      },
    });
    expect(text).not.toMatch(/Page Size|propertyNames|\[k: string\]: unknown|\$schema/);
    expect(text).toContain("Filter value");
    expect(text).toContain("[k: string]: string");
  });

  it("keeps `*/` inside descriptions as written", async () => {
    const text = await compileTs({
      type: "object",
      description: "Runs on a */5 schedule",
      properties: { schedule: { type: "string", description: 'Cron, e.g. "*/5 * * * *"' } },
    });
    expect(text).toContain('Cron, e.g. "*/5 * * * *"');
    expect(text).toContain("Runs on a */5 schedule");
  });

  it("inlines local $refs and keeps their descriptions", async () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { a: { $ref: "#/$defs/Point" }, b: { $ref: "#/$defs/Point" } },
      $defs: {
        Point: {
          type: "object",
          description: "A point",
          properties: { x: { type: "number", description: "Horizontal" } },
          required: ["x"],
        },
      },
    };
    const result = await new SchemaCompiler().compile(schema, "Input");
    expect(result.text).toContain("A point");
    expect(result.text).toContain("Horizontal");
    expect(result.text).toMatch(/x: number/);
  });

  it("falls back to JSON, without network, for a remote $ref", async () => {
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const calls = vi.mocked(compile).mock.calls.length;
    const schema: JsonSchema = {
      type: "object",
      properties: { a: { $ref: "https://example.invalid/schema.json#/definitions/A" } },
    };
    const result = await new SchemaCompiler().compile(schema, "Input");
    expect(result).toEqual({ format: "json", text: JSON.stringify(schema) });
    expect(fetchSpy).not.toHaveBeenCalled();
    // Rejected before the library (and its $ref resolver) ever sees it.
    expect(vi.mocked(compile).mock.calls.length).toBe(calls);
  });

  it("falls back to JSON when the library throws", async () => {
    const schema: JsonSchema = { type: "object", properties: { a: { $ref: "#/$defs/Missing" } } };
    const result = await new SchemaCompiler().compile(schema, "Input");
    expect(result).toEqual({ format: "json", text: JSON.stringify(schema) });
  });

  it("falls back to JSON when the declaration would not be smaller", async () => {
    const schema: JsonSchema = { type: "string" };
    const result = await new SchemaCompiler().compile(
      schema,
      "AVeryLongTypeNameThatCostsMoreThanTheSchema",
    );
    expect(result).toEqual({ format: "json", text: '{"type":"string"}' });
  });

  it("serves very large schemas as JSON without compiling them", async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 5000 }, (_, i) => [
        `p${i}`,
        { type: "string", description: `Field ${i} of many` },
      ]),
    );
    const schema: JsonSchema = { type: "object", properties };
    const calls = vi.mocked(compile).mock.calls.length;
    const result = await new SchemaCompiler().compile(schema, "Input");
    expect(result.format).toBe("json");
    expect(vi.mocked(compile).mock.calls.length).toBe(calls);
  });

  it("always returns compact JSON in json mode", async () => {
    const schema: JsonSchema = { type: "object", properties: { a: { type: "string" } } };
    const result = await new SchemaCompiler({ mode: "json" }).compile(schema, "Input");
    expect(result).toEqual({
      format: "json",
      text: '{"type":"object","properties":{"a":{"type":"string"}}}',
    });
  });

  it("does not mutate the input schema", async () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        a: { type: "integer", minimum: 1, description: "x" },
        b: { oneOf: [{ type: "string" }] },
      },
    };
    const before = structuredClone(schema);
    await compileTs(schema);
    expect(schema).toEqual(before);
  });

  it("compiles once per (schema, typeName) and shares concurrent compilations", async () => {
    const compiler = new SchemaCompiler();
    const schema: JsonSchema = {
      type: "object",
      properties: {
        owner: { type: "string", description: "Repository owner" },
        repo: { type: "string" },
      },
      required: ["owner"],
    };
    const reordered: JsonSchema = {
      required: ["owner"],
      properties: schema.properties,
      type: "object",
    };
    const calls = vi.mocked(compile).mock.calls.length;
    const [first, second] = await Promise.all([
      compiler.compile(schema, "Input"),
      compiler.compile(schema, "Input"),
    ]);
    const third = await compiler.compile(reordered, "Input");
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(vi.mocked(compile).mock.calls.length).toBe(calls + 1);
    await compiler.compile(schema, "Other");
    expect(vi.mocked(compile).mock.calls.length).toBe(calls + 2);
  });

  it("drops library-specific keywords an upstream could abuse", async () => {
    const text = await compileTs({
      type: "object",
      properties: { a: { type: "string", tsType: "() => void", description: "An A" } },
    });
    expect(text).toMatch(/^a\?: string(?: \/\/.*)?$/m);
    expect(text).not.toContain("=>");
  });
});
