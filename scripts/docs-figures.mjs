#!/usr/bin/env node
/**
 * Copies figures into docs/*.md from bench/RESULTS.md, never by hand (npm run docs:figures). A
 * block
 *
 *   <!-- figures: latency / Per case -->
 *   …
 *   <!-- end of figures -->
 *
 * holds the first table under the `### Per case` heading of RESULTS.md's `bench:latency` section
 * (`latency / 1`: the section's first table), and a line naming where it came from.
 * test/unit/docs-figures.test.ts fails when a block and RESULTS.md differ.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import prettier from "prettier";

const root = path.resolve(import.meta.dirname, "..");
export const BLOCK = /<!-- figures: ([a-z-]+) \/ ([^>]+?) -->\n[\s\S]*?<!-- end of figures -->/g;

/** The text between RESULTS.md's `<!-- bench:NAME:begin -->` and `:end` markers. */
function section(results, name) {
  const begin = `<!-- bench:${name}:begin -->`;
  const start = results.indexOf(begin);
  const end = results.indexOf(`<!-- bench:${name}:end -->`);
  if (start < 0 || end < start) throw new Error(`bench/RESULTS.md has no section ${name}`);
  return results.slice(start + begin.length, end);
}

/** The table a spec names: the n-th of the section (a number) or the first under `### heading`. */
export function table(results, name, which) {
  const text = section(results, name);
  const lines = text.split("\n");
  let from = 0;
  let skip = 0;
  if (/^\d+$/.test(which)) skip = Number(which) - 1;
  else {
    from = lines.indexOf(`### ${which}`);
    if (from < 0) throw new Error(`bench/RESULTS.md section ${name} has no heading "${which}"`);
  }
  const tables = [];
  let current = [];
  for (const line of lines.slice(from)) {
    if (line.startsWith("|")) current.push(line);
    else if (current.length > 0) {
      tables.push(current);
      current = [];
    }
  }
  if (current.length > 0) tables.push(current);
  const found = tables[skip];
  if (found === undefined)
    throw new Error(`bench/RESULTS.md section ${name} has no table ${which}`);
  const run = /^_Run (\d{4}-\d{2}-\d{2})/m.exec(text)?.[1];
  const heading = /^## (.+)$/m.exec(text)?.[1] ?? name;
  const anchor = heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
  return {
    rows: found,
    source: `_From [bench/RESULTS.md](../bench/RESULTS.md#${anchor})${run ? `, run ${run}` : ""}._`,
  };
}

/** One block's text, freshly copied. */
export function block(results, name, which) {
  const { rows, source } = table(results, name, which);
  return `<!-- figures: ${name} / ${which} -->\n\n${rows.join("\n")}\n\n${source}\n\n<!-- end of figures -->`;
}

/** A table's cells, trimmed, so a formatter's padding does not count as drift. */
export function cells(text) {
  return text
    .split("\n")
    .filter((l) => l.startsWith("|"))
    .map((l) =>
      l
        .split("|")
        .map((c) => c.trim().replace(/^:?-+:?$/, "---"))
        .join("|"),
    );
}

export function update(text, results) {
  return text.replace(BLOCK, (_, name, which) => block(results, name, which));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = readFileSync(path.join(root, "bench/RESULTS.md"), "utf8");
  for (const f of readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md"))) {
    const file = path.join(root, "docs", f);
    const before = readFileSync(file, "utf8");
    const after = update(before, results);
    if (after === before) continue;
    const options = (await prettier.resolveConfig(file)) ?? {};
    writeFileSync(file, await prettier.format(after, { ...options, filepath: file }));
    process.stderr.write(`updated docs/${f}\n`);
  }
}
