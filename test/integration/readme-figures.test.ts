/**
 * README's figures come from the commands that make them: the `mcpx stats` block is the output
 * of `mcpx stats config.example.json` (regenerate with `npm run readme:stats`).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runMcpx } from "../helpers/proxy.js";
// @ts-expect-error: a plain .mjs script, no declarations
import { BEGIN, END, block } from "../../scripts/readme-stats.mjs";

describe("README figures", () => {
  it("the mcpx stats block is what mcpx stats prints on config.example.json", async () => {
    const r = await runMcpx(["stats", path.join(ROOT, "config.example.json")], 120_000);
    expect(r.code).toBe(0);
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const b = BEGIN as string;
    const e = END as string;
    const shown = readme.slice(readme.indexOf(b), readme.indexOf(e) + e.length);
    expect(shown, "README.md is stale: run npm run readme:stats").toBe(
      (block as (o: string) => string)(r.stdout),
    );
  });
});
