/**
 * README is the front page and docs/ holds the rest: README stays small, and every relative link
 * in README, docs/ and SECURITY.md reaches a file that exists and, for `#anchor`, a heading there.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PAGES = [
  "README.md",
  "SECURITY.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** Markdown outside fenced code blocks and inline code spans, where links are links. */
function prose(text: string): string {
  let fenced = false;
  const kept: string[] = [];
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) kept.push(line.replace(/`[^`]*`/g, ""));
  }
  return kept.join("\n");
}

/** The anchors GitHub gives a page's headings (lower case, punctuation dropped, `-1` for repeats). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text.replace(/`([^`]*)`/g, "$1")).split("\n")) {
    const m = /^#{1,6} (.+?)\s*#*$/.exec(line);
    if (m === null) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative link targets of a page: `[text](target)` and `![alt](target)`. */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe("docs", () => {
  it("README.md is the front page: at most 25 KB, with a table of contents into docs/", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    expect(statSync(path.join(ROOT, "README.md")).size).toBeLessThanOrEqual(25 * 1024);
    const intoDocs = new Set(links(readme).map((l) => l.split("#")[0]!));
    for (const page of PAGES.filter((p) => p.startsWith("docs/")))
      expect(intoDocs, `README.md links to ${page}`).toContain(page);
  });

  it.each(PAGES)("every relative link in %s resolves, file and #anchor", (page) => {
    const text = readFileSync(path.join(ROOT, page), "utf8");
    const broken: string[] = [];
    for (const link of links(text)) {
      const [file = "", anchor] = link.split("#");
      const target =
        file === "" ? path.join(ROOT, page) : path.resolve(ROOT, path.dirname(page), file);
      if (!existsSync(target)) {
        broken.push(`${link}: no file ${path.relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && target.endsWith(".md")) {
        if (!anchors(readFileSync(target, "utf8")).has(decodeURIComponent(anchor)))
          broken.push(`${link}: no heading #${anchor} in ${path.relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
