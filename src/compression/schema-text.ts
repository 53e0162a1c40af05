/**
 * Stands for `*\/` inside descriptions while the library writes them into JSDoc blocks (it would
 * escape them as `* /`, which changes a cron expression like `*\/5 * * * *`). A private-use
 * character, so it does not occur in real descriptions.
 */
const COMMENT_END = "\uE000";

/** Hide `*\/` from the library; {@link compactDeclaration} restores it in `//` comments. */
export function hideCommentEnds(text: string): string {
  return text.replaceAll("*/", COMMENT_END);
}

/**
 * Shrink the library's output for a reader that is a model: JSDoc blocks on one line, no
 * `export`, no parentheses around a whole property type, `"a"|"b"` unions (the spaces cost a
 * token per member in o200k), no blank lines.
 */
export function compactDeclaration(raw: string): string {
  const collapsed = raw.replace(/\/\*\*\n([\s\S]*?)\n \*\//g, (_m, body: string) => {
    const text = body
      .split("\n")
      .map((line) => line.replace(/^ \* ?/, "").trim())
      .filter((line) => line.length > 0)
      .join(" ");
    return `/** ${text} */`;
  });
  return (
    collapsed
      .split("\n")
      .map((line) => line.trim())
      .map((line) =>
        line.startsWith("/**")
          ? line
          : tightenUnions(
              unwrapType(line.replace(/^export (?=interface |type |enum |const enum )/, "")),
            ),
      )
      .filter((line) => line.length > 0)
      .reduce<string[]>(trailingComments, [])
      // Comments left on a line of their own become `//` lines too, where `*\/` is plain text.
      .map((line) => line.replace(/^\/\*\* (.*) \*\/$/, "// $1").replaceAll(COMMENT_END, "*/"))
      .join("\n")
  );
}

/**
 * `/** text *\/` on its own line before a declaration line becomes a trailing `// text` on that
 * line: the same words, two to three tokens fewer per described property.
 */
function trailingComments(out: string[], line: string, index: number, lines: string[]): string[] {
  const previous = index > 0 ? lines[index - 1] : undefined;
  const comment = previous !== undefined ? /^\/\*\* (.*) \*\/$/.exec(previous) : null;
  if (line.startsWith("/**")) {
    // Kept for the next line, unless that line is a comment too (or there is none).
    const next = lines[index + 1];
    if (next === undefined || next.startsWith("/**") || next.startsWith("}")) out.push(line);
    return out;
  }
  out.push(comment ? `${line} // ${comment[1]}` : line);
  return out;
}

/** `key?: (A | B)` → `key?: A | B`, only when the parentheses enclose the whole type. */
function unwrapType(line: string): string {
  const m = /^((?:[\w$]+|"(?:[^"\\]|\\.)*")\??: |type [\w$]+ = )\(/.exec(line);
  if (!m || !line.endsWith(")")) return line;
  const start = m[1]!.length;
  return closingParen(line, start) === line.length - 1
    ? line.slice(0, start) + line.slice(start + 1, -1)
    : line;
}

/**
 * Outside string literals: `A | B` → `A|B` and `(T)[]` → `T[]`. Comments never reach here (the
 * library puts them on lines of their own).
 */
function tightenUnions(line: string): string {
  let out = "";
  let code = "";
  const flush = (): void => {
    out += code.replaceAll(" | ", "|").replace(/\(([\w$]+)\)/g, "$1");
    code = "";
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '"' || c === "'") {
      flush();
      const end = stringEnd(line, i);
      out += line.slice(i, end + 1);
      i = end;
    } else {
      code += c;
    }
  }
  flush();
  // `("pdf")[]` → `"pdf"[]`: a lone literal needs no parentheses.
  return out.replace(/\(("(?:[^"\\]|\\.)*")\)\[\]/g, "$1[]");
}

/** Index of the quote closing the string literal opened at `start` (or the last index). */
function stringEnd(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return i;
  }
  return text.length - 1;
}

/** Index of the parenthesis closing the one at `open`, skipping string literals; -1 if none. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      i = stringEnd(text, i);
    } else if (c === "(") {
      depth++;
    } else if (c === ")" && --depth === 0) {
      return i;
    }
  }
  return -1;
}
