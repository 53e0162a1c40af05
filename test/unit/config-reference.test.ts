/**
 * docs/config-reference.md and schema/mcpx.schema.json are generated from src/config/schema.ts
 * (`npm run docs:config`): they fail here when they drift, every key carries a description, the
 * JSON Schema accepts the configs mcpx ships and refuses a misspelled key as mcpx does, and a
 * config naming it with `$schema` loads.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { SCHEMA_FILE, configJsonSchema, configKeys } from "../../src/config/json-schema.js";
import { loadConfig } from "../../src/config/load.js";
import { REFERENCE_FILE, configReference } from "../../src/config/reference.js";
import { SERVER_KEYS, TOP_KEYS } from "../../src/config/schema.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const SHIPPED = ["config.example.json", "examples/npx.json"];

function validator() {
  return new Ajv2020({ allErrors: true, strict: false }).compile(configJsonSchema());
}

describe("the generated config reference", () => {
  it(`${SCHEMA_FILE} is what npm run docs:config writes`, () => {
    expect(JSON.parse(read(SCHEMA_FILE)), "stale: run npm run docs:config").toEqual(
      configJsonSchema(),
    );
  });

  it(`${REFERENCE_FILE} is what npm run docs:config writes`, () => {
    expect(read(REFERENCE_FILE), "stale: run npm run docs:config").toBe(configReference());
  });

  it("names every key of ours, each with a description", () => {
    const keys = configKeys();
    const at = new Set(keys.map((k) => k.at));
    for (const key of TOP_KEYS) expect(at).toContain(key);
    for (const key of SERVER_KEYS) expect(at).toContain(`mcpServers.*.${key}`);
    expect(keys.filter((k) => !k.schema.description).map((k) => k.at)).toEqual([]);
    const reference = configReference();
    for (const { at: key } of keys)
      expect(reference).toContain(`\`${key.replace(/^(mcpServers|profiles)\.\*\./, "")}\``);
  });

  it("accepts the configs mcpx ships and refuses what mcpx refuses", () => {
    const validate = validator();
    for (const file of SHIPPED) {
      expect(validate(JSON.parse(read(file))), `${file}: ${JSON.stringify(validate.errors)}`).toBe(
        true,
      );
    }
    const misspelled = { mcpServers: { a: { command: "x", timout: 5 } } };
    expect(validate(misspelled)).toBe(false);
    expect(validate({ mcpServers: {}, callTimeot: 5 })).toBe(false);
    expect(validate({ mcpServers: { a: { args: [] } } }), "no command and no url").toBe(false);
    expect(validate({ mcpServers: { a: { command: "x", session: "sticky" } } })).toBe(false);
  });

  it("the shipped configs name the shipped schema with $schema, and load", () => {
    for (const file of SHIPPED) {
      const raw = JSON.parse(read(file)) as { $schema?: string };
      expect(raw.$schema, file).toBeDefined();
      expect(path.resolve(ROOT, path.dirname(file), raw.$schema!)).toBe(
        path.join(ROOT, SCHEMA_FILE),
      );
      const config = loadConfig(path.join(ROOT, file), { PATH: process.env.PATH });
      expect(config.servers.length, file).toBeGreaterThan(0);
    }
  });
});
