/** Nearest-rank percentiles (a leaf: the dashboard uses it, and bench/ may). */

/** The p-th percentile (0–100) of `values` by nearest rank; undefined when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}
