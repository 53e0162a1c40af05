/**
 * Whitespace clean-up for prose a model reads (tool descriptions). Only whitespace changes: every
 * word and every line break that separates content stays.
 */

/**
 * Dedent and tidy a multi-line description. Some upstreams build descriptions from indented
 * template literals (24 spaces before every line); the indentation most lines share is removed,
 * deeper indentation (nested list items, code) keeps its extra depth, trailing spaces and runs of
 * spaces inside a line go, and blank lines collapse to one.
 */
export function tidyText(text: string): string {
  const lines = text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.replace(/\s+$/, ""));
  const common = commonIndent(lines);
  const out: string[] = [];
  for (const line of lines) {
    if (line === "") {
      if (out.length > 0 && out[out.length - 1] !== "") out.push("");
      continue;
    }
    const indent = /^[ \t]*/.exec(line)![0].length;
    const kept = indent >= common ? indent - common : 0;
    out.push(" ".repeat(kept) + line.slice(indent).replace(/[ \t]{2,}/g, " "));
  }
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out.join("\n");
}

/**
 * The indentation most non-blank lines share: the most frequent indent among lines other than
 * the first (a template literal's first line usually starts right after the quote).
 */
function commonIndent(lines: readonly string[]): number {
  const counts = new Map<number, number>();
  lines.forEach((line, i) => {
    if (line === "" || (i === 0 && lines.length > 1)) return;
    const indent = /^[ \t]*/.exec(line)![0].length;
    counts.set(indent, (counts.get(indent) ?? 0) + 1);
  });
  let best = 0;
  let bestCount = 0;
  for (const [indent, count] of counts) {
    if (count > bestCount || (count === bestCount && indent < best)) {
      best = indent;
      bestCount = count;
    }
  }
  return best;
}
