/**
 * describe("server.tool") is lossless: for every tool of every real catalog we have (the github
 * corpus, six other recorded servers, the example servers run live), the JSON schema is walked and
 * each fact looked for in the answer — property names in order with their required markers and
 * scalar types, enum and const values, defaults, formats, patterns, bounds and other constraints,
 * titles, and every description (union members, items and referenced $defs included). Only
 * JSON-Schema no-ops may be missing (see NO-OPS below).
 */
import { encode as countTokens } from "gpt-tokenizer";
import { beforeAll, describe, expect, it } from "vitest";

import { SchemaCompiler } from "../../src/compression/schema.js";
import { signature } from "../../src/compression/signature.js";
import { renderTool, schemaTypeName } from "../../src/server/catalog.js";
import type { JsonSchema, ToolDef } from "../../src/types.js";
import { exampleCatalogs, recordedCatalogs, type Catalog } from "../helpers/catalogs.js";
import { isRecord } from "../../src/json.js";

type Node = { [key: string]: unknown };
const norm = (text: string): string => text.replace(/\s+/g, " ").trim();

/** "Page Size" and page_size name the same thing: such a title is a no-op. */
const sameWords = (a: string, b: string): boolean => {
  const w = (t: string) =>
    t
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "");
  return w(a) === w(b);
};

const BOUNDS: Record<string, string> = {
  minimum: ">=",
  maximum: "<=",
  exclusiveMinimum: ">",
  exclusiveMaximum: "<",
};
const RAW = ["format", "pattern", "contentMediaType", "contentEncoding"];
const NOTED = [
  "minLength",
  "maxLength",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "default",
  "examples",
];
const SCALARS: Record<string, string> = {
  string: "string",
  integer: "int",
  number: "number",
  boolean: "boolean",
  null: "null",
};

/** The TypeScript a scalar-typed schema must print as, or undefined when it is not that simple. */
function scalarType(schema: unknown): string | undefined {
  if (!isRecord(schema) || "$ref" in schema || "anyOf" in schema || "oneOf" in schema) return;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v !== "object" || v === null))
    return schema.enum.map((v) => JSON.stringify(v)).join("|");
  if ("const" in schema) return JSON.stringify(schema.const);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.every((t) => typeof t === "string" && t in SCALARS))
    return types.map((t) => SCALARS[t as string]).join("|");
  if (schema.type === "array" && isRecord(schema.items)) {
    const item = scalarType(schema.items);
    if (item === undefined) return;
    return item.includes("|") && !/^"[^"]*"$/.test(item) ? `(${item})[]` : `${item}[]`;
  }
  return undefined;
}

interface Facts {
  /** Substrings of the whitespace-normalised answer. */
  needles: string[];
  /** Per object: its property lines' expected starts, in schema order. */
  objects: { where: string; lines: { start: string; type?: string }[] }[];
}

/** Walk a schema the way a reader would, following local $refs once. */
function collectFacts(schema: JsonSchema): Facts {
  const facts: Facts = { needles: [], objects: [] };
  const seenRefs = new Set<string>();
  const visit = (node: unknown, where: string, name?: string, parentDesc?: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}[${i}]`));
    if (!isRecord(node)) return;
    const desc = typeof node.description === "string" ? norm(node.description) : "";
    // NO-OP: a description repeated verbatim from the parent (a union member, an item).
    if (desc && desc !== parentDesc) facts.needles.push(desc);
    const title = typeof node.title === "string" ? norm(node.title) : "";
    // NO-OP: a title equal to the property name.
    if (title && title !== desc && (name === undefined || !sameWords(title, name)))
      facts.needles.push(title);
    if (Array.isArray(node.enum))
      for (const v of node.enum)
        if (typeof v !== "object" || v === null) facts.needles.push(JSON.stringify(v));
    if ("const" in node) facts.needles.push(JSON.stringify(node.const));
    for (const k of RAW)
      if (typeof node[k] === "string") facts.needles.push(`@${k} ${norm(node[k])}`);
    for (const [k, op] of Object.entries(BOUNDS))
      if (typeof node[k] === "number") facts.needles.push(`${op}${node[k]}`);
    for (const k of NOTED) if (k in node) facts.needles.push(`@${k} ${JSON.stringify(node[k])}`);

    if (typeof node.$ref === "string" && !seenRefs.has(node.$ref)) {
      seenRefs.add(node.$ref);
      const [, kind, key] = /^#\/(\$defs|definitions)\/(.+)$/.exec(node.$ref) ?? [];
      const target = kind && key ? (schema[kind] as Node | undefined)?.[key] : undefined;
      expect(target, `${where}: unresolvable ${node.$ref}`).toBeDefined();
      visit(target, node.$ref);
    }
    if (isRecord(node.properties)) {
      const required = Array.isArray(node.required) ? node.required : [];
      const lines = Object.entries(node.properties).map(([key, sub]) => {
        const id = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
        // Required with a default is optional: the server fills it (validation agrees).
        const optional = !required.includes(key) || (isRecord(sub) && "default" in sub);
        return { start: `${id}${optional ? "?" : ""}: `, type: scalarType(sub) };
      });
      if (lines.length > 0) facts.objects.push({ where, lines });
      for (const [key, sub] of Object.entries(node.properties)) visit(sub, `${where}.${key}`, key);
    }
    for (const k of ["anyOf", "oneOf", "allOf", "prefixItems"])
      if (Array.isArray(node[k]))
        node[k].forEach((m, i) => visit(m, `${where}.${k}[${i}]`, undefined, desc));
    for (const k of [
      "items",
      "additionalItems",
      "additionalProperties",
      "not",
      "if",
      "then",
      "else",
    ])
      if (isRecord(node[k])) visit(node[k], `${where}.${k}`, undefined, desc);
    if (isRecord(node.patternProperties))
      for (const [p, sub] of Object.entries(node.patternProperties)) visit(sub, `${where}/${p}/`);
  };
  visit(schema, "#");
  return facts;
}

/** What of `schema`'s facts the answer lacks; empty when it is all there. */
function missingFacts(schema: JsonSchema, answer: string): string[] {
  const facts = collectFacts(schema);
  const text = norm(answer);
  const missing = facts.needles.filter((n) => !text.includes(n));
  const lines = answer.split("\n");
  for (const object of facts.objects) {
    // The object's property lines, in order, each with its required marker and scalar type.
    let at = 0;
    for (const { start, type } of object.lines) {
      const found = lines.findIndex(
        (l, i) =>
          i >= at &&
          l.startsWith(start) &&
          (type === undefined ||
            l.slice(start.length) === type ||
            l.slice(start.length).startsWith(`${type} //`)),
      );
      if (found < 0) missing.push(`${object.where}: line "${start}${type ?? "…"}"`);
      else at = found + 1;
    }
  }
  return missing;
}

const compiler = new SchemaCompiler();

async function answerFor(server: string, tool: ToolDef): Promise<string> {
  const input = await compiler.compile(tool.inputSchema, schemaTypeName(tool.name, "Input"));
  const output = tool.outputSchema
    ? await compiler.compile(tool.outputSchema, schemaTypeName(tool.name, "Output"))
    : undefined;
  return renderTool(server, tool, input, output);
}

/** The tool's JSON definition the answer is weighed against (as bench/tokens/ does). */
function definition(tool: ToolDef): string {
  const { name, description, inputSchema, outputSchema } = tool;
  return JSON.stringify(
    outputSchema
      ? { name, description, inputSchema, outputSchema }
      : { name, description, inputSchema },
  );
}

let catalogs: Catalog[] = [];
beforeAll(async () => {
  catalogs = [...recordedCatalogs(), ...(await exampleCatalogs())];
});

describe("describe(server.tool) on every real catalog", () => {
  it("covers the github corpus, six recorded servers and the three example servers", () => {
    expect(catalogs.map((c) => c.server)).toEqual([
      "github",
      "playwright",
      "chrome-devtools",
      "desktop-commander",
      "kubernetes",
      "notion",
      "firecrawl",
      "everything",
      "filesystem",
      "memory",
    ]);
    expect(catalogs[0]!.tools).toHaveLength(117);
    for (const c of catalogs) expect(c.tools.length, c.server).toBeGreaterThan(5);
  });

  it("keeps every fact of every schema, as TypeScript", async () => {
    const failures: string[] = [];
    for (const { server, tools } of catalogs) {
      for (const tool of tools) {
        const answer = await answerFor(server, tool);
        // A JSON fallback would be lossless trivially; the corpus must all compile.
        expect(answer, `${server}.${tool.name}`).not.toContain("JSON Schema: ");
        const missing = [
          ...(tool.description ? [norm(tool.description)] : []).filter(
            (d) => !norm(answer).includes(d),
          ),
          ...missingFacts(tool.inputSchema, answer),
          ...(tool.outputSchema ? missingFacts(tool.outputSchema, answer) : []),
        ];
        if (missing.length > 0)
          failures.push(`${server}.${tool.name}:\n  ${missing.join("\n  ")}\n---\n${answer}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("is never above 0.95 of the tool's JSON definition", async () => {
    const above: string[] = [];
    for (const { server, tools } of catalogs) {
      for (const tool of tools) {
        const ratio =
          countTokens(await answerFor(server, tool)).length / countTokens(definition(tool)).length;
        if (ratio > 0.95) above.push(`${server}.${tool.name} ${ratio.toFixed(3)}`);
      }
    }
    expect(above).toEqual([]);
  });
});

describe('describe("server") signatures on every real catalog', () => {
  it("name every parameter once with its required marker, required ones first", () => {
    const failures: string[] = [];
    for (const { server, tools } of catalogs) {
      for (const tool of tools) {
        const sig = signature(tool.name, tool.inputSchema);
        const properties = isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
        const required = (
          Array.isArray(tool.inputSchema.required) ? tool.inputSchema.required : []
        ).filter((n: string) => !(isRecord(properties[n]) && "default" in properties[n]));
        const names = Object.keys(properties);
        const expected = [
          ...names.filter((n) => required.includes(n)),
          ...names.filter((n) => !required.includes(n)).map((n) => `${n}?`),
        ];
        const head = `${tool.name}(`;
        const body = sig.startsWith(head) && sig.endsWith(")") ? sig.slice(head.length, -1) : "";
        const params = body === "" ? [] : body.split(", ").map((p) => p.replace(/: .*$/, ""));
        if (JSON.stringify(params) !== JSON.stringify(expected))
          failures.push(`${server}.${sig} ≠ (${expected.join(", ")})`);
        // A type, when shown, is the property's own scalar type.
        for (const p of body === "" ? [] : body.split(", ")) {
          const [, name, type] = /^(.+?)\??: (.+)$/.exec(p) ?? [];
          if (name !== undefined && scalarType(properties[name]) !== type)
            failures.push(`${server}.${tool.name}: ${p}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe("the lossless check itself", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      owner: { type: "string", description: "Repository owner" },
      state: { type: "string", enum: ["open", "closed"], default: "open" },
      page: { type: "integer", minimum: 1 },
    },
    required: ["owner"],
  };

  it("accepts a faithful answer", async () => {
    expect(missingFacts(schema, await answerFor("s", { name: "t", inputSchema: schema }))).toEqual(
      [],
    );
  });

  it.each([
    ["a lost description", (a: string) => a.replace("Repository owner", "")],
    ["a lost required marker", (a: string) => a.replace("owner: ", "owner?: ")],
    ["a wrong type", (a: string) => a.replace("page?: int", "page?: number")],
    ["a lost enum value", (a: string) => a.replace('|"closed"', "")],
    ["a lost default", (a: string) => a.replace('@default "open"', "")],
    ["a lost bound", (a: string) => a.replace(">=1", "")],
    ["a lost property", (a: string) => a.replace(/^page.*$/m, "")],
    ["properties out of order", (a: string) => a.replace(/^(owner.*)\n(state.*)$/m, "$2\n$1")],
  ])("rejects %s", async (_what, spoil) => {
    const answer = await answerFor("s", { name: "t", inputSchema: schema });
    const spoiled = spoil(answer);
    expect(spoiled).not.toBe(answer);
    expect(missingFacts(schema, spoiled)).not.toEqual([]);
  });
});
