/**
 * Figures in README and docs/ come from bench/RESULTS.md, copied by `npm run docs:figures`, never
 * typed by hand: each `<!-- figures: SECTION / TABLE -->` block holds exactly that table of
 * RESULTS.md (a formatter's padding aside) and the line naming its run.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script, no declarations
import { BLOCK, block, cells } from "../../scripts/docs-figures.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");
const RESULTS = readFileSync(path.join(ROOT, "bench/RESULTS.md"), "utf8");
const PAGES = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const copy = block as (results: string, name: string, which: string) => string;
const tableCells = cells as (text: string) => string[];

/** Every figures block of a page: its spec and its text. */
function blocks(text: string): { name: string; which: string; shown: string }[] {
  return [...text.matchAll(BLOCK as RegExp)].map((m) => ({
    name: m[1]!,
    which: m[2]!,
    shown: m[0],
  }));
}

describe("docs figures", () => {
  it("the measured tables of docs/ are figures blocks", () => {
    const all = PAGES.flatMap((p) => blocks(readFileSync(path.join(ROOT, p), "utf8")));
    expect(all.map((b) => b.name)).toEqual(
      expect.arrayContaining(["tokens", "latency", "speed", "load", "soak", "eras", "startup"]),
    );
  });

  it.each(PAGES)("every figures block in %s is what bench/RESULTS.md holds", (page) => {
    for (const { name, which, shown } of blocks(readFileSync(path.join(ROOT, page), "utf8"))) {
      const fresh = copy(RESULTS, name, which);
      const where = `${page}: figures ${name} / ${which} (run npm run docs:figures)`;
      expect(tableCells(shown), where).toEqual(tableCells(fresh));
      const source = (t: string) => t.split("\n").find((l) => l.startsWith("_From "));
      expect(source(shown), where).toBe(source(fresh));
    }
  });

  it("a block whose table differs from RESULTS.md is found", () => {
    const fresh = copy(RESULTS, "load", "1");
    const stale = fresh.replace(/\| +5000 \|/, "| 4999 |");
    expect(stale).not.toBe(fresh);
    expect(tableCells(stale)).not.toEqual(tableCells(fresh));
  });
});
