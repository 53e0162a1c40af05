/**
 * The statistics every benchmark reports: one percentile (src's nearest rank, which the
 * dashboard uses too) and one summary of a sample.
 */
import { percentile as nearestRank } from "../../src/percentile.js";

/**
 * Nearest-rank percentile (`p` in 0–100) of `values`, in any order; NaN when there are none, which
 * the reports print as "n/a".
 */
export function percentile(values: readonly number[], p: number): number {
  return nearestRank(values, p) ?? Number.NaN;
}

/** What a report says of a sample (latencies in ms, token ratios…); NaN fields when it is empty. */
export interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    max: sorted.at(-1) ?? Number.NaN,
  };
}
