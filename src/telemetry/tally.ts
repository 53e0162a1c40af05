/**
 * What metrics.ts counts in plain numbers from the start and prom.ts reads once prom-client is
 * loaded: the contract between the two (neither imports the other's module).
 */
import type { CompressionTally } from "../compression/result.js";
import type { CallOutcome } from "../executor/context.js";

/** One ended call or script, labelled as it ended (a later reload cannot relabel it). */
export type CallCount =
  | { script: true; outcome: CallOutcome; seconds: number }
  | {
      script: false;
      server: string;
      tool: string;
      outcome: CallOutcome;
      seconds: number;
      compression?: CompressionTally;
    };

/** Counts kept without prom-client, read when scraped. */
export interface MetricsTally {
  /** Calls and scripts running now. */
  readonly inFlight: number;
  /** Times each server came back (down, then ready). */
  readonly restarts: ReadonlyMap<string, number>;
}
