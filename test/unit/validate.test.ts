import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

import { ArgumentValidator, type Validation } from "../../src/executor/validate.js";
import type { JsonSchema } from "../../src/types.js";
import { ROOT } from "../helpers/proxy.js";
import { tempDir } from "../helpers/temp.js";

const issueSchema: JsonSchema = {
  type: "object",
  properties: {
    owner: { type: "string" },
    repo: { type: "string" },
    count: { type: "number" },
    state: { type: "string", enum: ["open", "closed"] },
    labels: { type: "array", items: { type: "string" } },
  },
  required: ["owner", "repo"],
  additionalProperties: false,
};

function problems(result: Validation): string[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems;
}

describe("ArgumentValidator", () => {
  const validator = new ArgumentValidator();

  it("accepts valid arguments", () => {
    expect(validator.validate(issueSchema, { owner: "o", repo: "r" })).toEqual({ ok: true });
    expect(
      validator.validate(issueSchema, {
        owner: "o",
        repo: "r",
        count: 3,
        state: "open",
        labels: ["bug"],
      }),
    ).toEqual({ ok: true });
  });

  it("reports each missing required property by name", () => {
    const p = problems(validator.validate(issueSchema, {}));
    expect(p).toEqual(
      expect.arrayContaining([
        'missing required property "owner"',
        'missing required property "repo"',
      ]),
    );
    expect(p).toHaveLength(2);
  });

  it("reports a wrong type naming the property and the expected type", () => {
    const p = problems(validator.validate(issueSchema, { owner: "o", repo: "r", count: "3" }));
    expect(p).toHaveLength(1);
    expect(p[0]).toContain('"count"');
    expect(p[0]).toContain("number");
  });

  it("reports a nested wrong type with a dotted path", () => {
    const p = problems(validator.validate(issueSchema, { owner: "o", repo: "r", labels: [1] }));
    expect(p).toEqual(['"labels.0" must be string']);
  });

  it("reports an enum violation listing the allowed values", () => {
    const p = problems(validator.validate(issueSchema, { owner: "o", repo: "r", state: "merged" }));
    expect(p).toEqual(['"state" must be one of "open", "closed"']);
  });

  it("names an unknown property with the closest valid one when additionalProperties is false", () => {
    const p = problems(validator.validate(issueSchema, { owner: "o", repo: "r", ownr: "x" }));
    expect(p).toEqual(['"ownr" is not a parameter; did you mean "owner"?']);
    const far = problems(validator.validate(issueSchema, { owner: "o", repo: "r", zzz: 1 }));
    expect(far).toEqual(['"zzz" is not a parameter.']);
  });

  it("names a nested unknown property with its path and the closest valid one", () => {
    const schema = {
      type: "object",
      properties: {
        options: {
          type: "object",
          properties: { color: { type: "string" } },
          additionalProperties: false,
        },
      },
    };
    const p = problems(validator.validate(schema, { options: { colr: "red" } }));
    expect(p).toEqual(['"options.colr" is not a parameter; did you mean "options.color"?']);
  });

  it("names undeclared properties first when a schema that allows them fails", () => {
    const schema = {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    };
    expect(validator.validate(schema, { message: "hi", extra: 1 })).toEqual({ ok: true });
    expect(problems(validator.validate(schema, { msg: "hi" }))).toEqual([
      '"msg" is not a parameter; did you mean "message"?',
      'missing required property "message"',
    ]);
  });

  it("reports every problem at once", () => {
    const p = problems(validator.validate(issueSchema, { owner: 1, state: "x", extra: true }));
    expect(p.length).toBeGreaterThanOrEqual(4);
    const text = p.join("\n");
    for (const name of ["owner", "repo", "state", "extra"]) expect(text).toContain(`"${name}"`);
  });

  it("treats a required property with a default as optional, as servers do (playwright's scale)", () => {
    // browser_take_screenshot's shape: `scale` is required and has a default; playwright accepts {}.
    const schema: JsonSchema = {
      type: "object",
      properties: {
        type: { type: "string", enum: ["png", "jpeg"], default: "png" },
        scale: { type: "string", enum: ["css", "device"], default: "css" },
        filename: { type: "string" },
        clip: {
          type: "object",
          properties: { x: { type: "number", default: 0 }, y: { type: "number" } },
          required: ["x", "y"],
        },
      },
      required: ["type", "scale"],
      additionalProperties: false,
    };
    expect(validator.validate(schema, {})).toEqual({ ok: true });
    expect(validator.validate(schema, { clip: { y: 1 } })).toEqual({ ok: true });
    // Only the defaulted ones: y has none, and a value given is still checked.
    expect(problems(validator.validate(schema, { clip: { x: 1 } }))).toEqual([
      'missing required property "y" in "clip"',
    ]);
    expect(problems(validator.validate(schema, { scale: "big" }))).toEqual([
      '"scale" must be one of "css", "device"',
    ]);
    // The schema handed in is left as it was (the catalog keeps it for describe and search).
    expect(schema.required).toEqual(["type", "scale"]);
  });

  it("reports a non-object argument value", () => {
    const p = problems(validator.validate(issueSchema, "owner=o"));
    expect(p[0]).toMatch(/^arguments must be object/);
  });

  it("validates formats", () => {
    const schema = { type: "object", properties: { email: { type: "string", format: "email" } } };
    expect(validator.validate(schema, { email: "a@example.com" }).ok).toBe(true);
    const p = problems(validator.validate(schema, { email: "not an email" }));
    expect(p[0]).toContain('"email"');
    expect(p[0]).toContain("format");
  });

  it("uses draft 2020-12 keywords when $schema says so", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        pair: {
          type: "array",
          prefixItems: [{ type: "string" }, { type: "number" }],
          items: false,
        },
      },
      $defs: { unused: { type: "string" } },
    };
    expect(validator.validate(schema, { pair: ["a", 1] })).toEqual({ ok: true });
    const p = problems(validator.validate(schema, { pair: ["a", "b"] }));
    expect(p.join("\n")).toContain('"pair.1"');
    expect(validator.validate(schema, { pair: ["a", 1, "extra"] }).ok).toBe(false);
  });

  it("accepts a draft-07 $schema", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { n: { type: "integer" } },
      required: ["n"],
    };
    expect(validator.validate(schema, { n: 1 })).toEqual({ ok: true });
    expect(problems(validator.validate(schema, { n: 1.5 }))[0]).toContain('"n"');
  });

  it("skips local validation (ok) when ajv cannot compile the schema", () => {
    const broken = { type: "object", properties: { a: { $ref: "#/nope" } }, required: ["a"] };
    expect(validator.validate(broken, {})).toEqual({ ok: true });
    expect(validator.validate(broken, { a: 1 })).toEqual({ ok: true });
  });

  it("validates schemas from different servers that reuse one $id", () => {
    const a = {
      $id: "urn:shared",
      type: "object",
      properties: { x: { type: "string" } },
      required: ["x"],
    };
    const b = {
      $id: "urn:shared",
      type: "object",
      properties: { y: { type: "number" } },
      required: ["y"],
    };
    expect(validator.validate(a, {}).ok).toBe(false);
    expect(problems(validator.validate(b, {}))).toEqual(['missing required property "y"']);
  });

  it("gives the same answer for a schema validated twice (cached validator)", () => {
    const v = new ArgumentValidator();
    expect(v.validate(issueSchema, {}).ok).toBe(false);
    expect(v.validate(issueSchema, { owner: "o", repo: "r" }).ok).toBe(true);
    expect(problems(v.validate(issueSchema, { repo: "r" }))).toEqual([
      'missing required property "owner"',
    ]);
  });
});

/** Schemas ajv holds compiled (its private cache, where the leak was), meta-schemas included. */
function ajvEntries(v: ArgumentValidator): number {
  const inner = v as unknown as Record<"draft7" | "draft2020", { _cache: Map<unknown, unknown> }>;
  return inner.draft7._cache.size + inner.draft2020._cache.size;
}

describe("ArgumentValidator memory", () => {
  it("compiles a refreshed schema (new object, same content) once", () => {
    const v = new ArgumentValidator();
    const baseline = ajvEntries(v);
    const text = JSON.stringify(issueSchema);
    for (let i = 0; i < 1000; i++) {
      // Every list_changed or reload parses a new object with the same content.
      expect(v.validate(JSON.parse(text) as JsonSchema, { owner: "o" }).ok).toBe(false);
    }
    expect(ajvEntries(v) - baseline).toBe(1);
  });

  it("keeps at most maxValidators schemas compiled when every refresh changes them", () => {
    const v = new ArgumentValidator({ maxValidators: 50 });
    const baseline = ajvEntries(v);
    for (let i = 0; i < 1000; i++) {
      const schema = { ...issueSchema, description: `generation ${i}` };
      expect(v.validate(schema, { owner: "o", repo: "r" }).ok).toBe(true);
    }
    expect(ajvEntries(v) - baseline).toBeLessThanOrEqual(50);
    // A validator dropped from the cache is compiled again, and still right.
    expect(problems(v.validate({ ...issueSchema, description: "generation 0" }, {}))).toHaveLength(
      2,
    );
  });

  it("keeps nothing in ajv for a schema it cannot compile", () => {
    const v = new ArgumentValidator();
    const baseline = ajvEntries(v);
    for (let i = 0; i < 100; i++) {
      const broken = { type: "object", properties: { a: { $ref: `#/nope${i}` } } };
      expect(v.validate(broken, {})).toEqual({ ok: true });
    }
    expect(ajvEntries(v)).toBe(baseline);
  });

  it("keeps the heap flat across 1,000 catalog refreshes (node --expose-gc)", () => {
    const script = path.join(import.meta.dirname, "../fixtures/heap/validator-refreshes.ts");
    const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", script, "1000"], {
      cwd: ROOT,
      encoding: "utf8",
      // tsx keeps a compile cache in TMPDIR: give it a folder this test removes.
      env: { ...process.env, TMPDIR: tempDir() },
    });
    const { before, after } = JSON.parse(out) as { before: number; after: number };
    // 10 real schemas x 1,000 refreshes: each leaked compile costs kilobytes, so a leak shows
    // as tens of MB; a bounded cache leaves only GC noise.
    expect(after - before).toBeLessThan(2 * 1024 * 1024);
  });
});
