/**
 * Validation never refuses what the server accepts, on the real catalogs of
 * test/fixtures/corpus (playwright-mcp, kubernetes, github-mcp-server, …): each tool's minimal
 * valid call — the properties a server needs (required, without a default), each with the
 * simplest value its schema allows — passes mcpx's check. playwright's `browser_take_screenshot`
 * and six kubernetes tools require properties with a default; their servers accept calls without
 * them, and so must mcpx.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ArgumentValidator } from "../../src/executor/validate.js";
import type { JsonSchema } from "../../src/types.js";
import { ROOT } from "../helpers/proxy.js";

import { minimalObject } from "../helpers/minimal-call.js";

const CORPUS = path.join(ROOT, "test/fixtures/corpus");

function catalogs(): { server: string; tools: { name: string; inputSchema: JsonSchema }[] }[] {
  return readdirSync(CORPUS).map((server) => ({
    server,
    tools: readdirSync(path.join(CORPUS, server))
      .filter((f) => f.endsWith(".json"))
      .map((f) => JSON.parse(readFileSync(path.join(CORPUS, server, f), "utf8")) as never),
  }));
}

describe("validation on every real catalog", () => {
  it("accepts each tool's minimal valid call (required properties with a default left out)", () => {
    const validator = new ArgumentValidator();
    const refused: string[] = [];
    let tools = 0;
    let defaulted = 0;
    for (const { server, tools: list } of catalogs()) {
      for (const tool of list) {
        const schema = tool.inputSchema;
        const args = minimalObject(schema, schema, 0);
        const required = Array.isArray(schema.required) ? schema.required.length : 0;
        if (Object.keys(args).length < required) defaulted += 1;
        tools += 1;
        const check = validator.validate(schema, args);
        if (!check.ok)
          refused.push(
            `${server}.${tool.name} ${JSON.stringify(args)}: ${check.problems.join("; ")}`,
          );
      }
    }
    expect(refused).toEqual([]);
    expect(tools).toBeGreaterThan(250);
    // The pattern the check must leave to the server is really there.
    expect(defaulted).toBeGreaterThanOrEqual(9);
  });
});
