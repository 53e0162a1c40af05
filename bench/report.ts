/** What every benchmark returns, and the small formatting helpers they share. */

/** One section of the report: printed to stdout and written to bench/RESULTS.md. */
export interface BenchSection {
  /** Stable id, used on the command line (`npm run bench -- tokens`) and as RESULTS.md marker. */
  id: string;
  title: string;
  /** Body of the section (no heading); markdown that also reads well as plain text. */
  markdown: string;
}

export type Align = "left" | "right";

/**
 * A markdown table with padded columns, so it is as readable on a terminal as rendered. Columns
 * align right unless `align` says otherwise; the first column defaults to left.
 */
export function table(headers: string[], rows: (string | number)[][], align: Align[] = []): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(3, ...cells.map((r) => (r[i] ?? "").length)));
  const alignOf = (i: number): Align => align[i] ?? (i === 0 ? "left" : "right");
  const pad = (text: string, i: number) =>
    alignOf(i) === "left" ? text.padEnd(widths[i]!) : text.padStart(widths[i]!);
  const line = (r: string[]) => `| ${headers.map((_, i) => pad(r[i] ?? "", i)).join(" | ")} |`;
  const rule = `| ${widths
    .map((w, i) => (alignOf(i) === "left" ? `:${"-".repeat(w - 1)}` : `${"-".repeat(w - 1)}:`))
    .join(" | ")} |`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join("\n");
}

/** `n / d` with three decimals (a token ratio). */
export function ratio(n: number, d: number): string {
  return d === 0 ? "n/a" : (n / d).toFixed(3);
}

/** Thousands separators, for token counts. */
export function int(n: number): string {
  return n.toLocaleString("en-US");
}

/** "met" / "MISSED" for a value against an upper bound. */
export function verdict(value: number, max: number): string {
  return value <= max ? "met" : "MISSED";
}
