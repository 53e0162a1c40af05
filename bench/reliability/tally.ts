/** Counting answers in the reliability runs, and the verdict on a run. */

/** What a run's answers came to. Every kind but `ok` fails the run. */
export interface Tally {
  sent: number;
  /** Answers carrying their request's id and payload. */
  ok: number;
  /** Requests without exactly one answer of their own (none, a timeout, several, another id). */
  lost: number;
  /** Answers to an id already answered (stdio). */
  duplicates: number;
  /** Answers to an id never sent (stdio). */
  strays: number;
  /** stdout lines that are not JSON-RPC (stdio). */
  garbage: number;
  /** Answers carrying another request's payload. */
  crossed: number;
  /** JSON-RPC errors and isError results. */
  failed: number;
  latencies: number[];
  /** A few of the bad answers, for the report. */
  samples: string[];
}

export function newTally(): Tally {
  return {
    sent: 0,
    ok: 0,
    lost: 0,
    duplicates: 0,
    strays: 0,
    garbage: 0,
    crossed: 0,
    failed: 0,
    latencies: [],
    samples: [],
  };
}

/** What went wrong in a run, one line each; empty when nothing did. */
export function problems(
  name: string,
  t: Tally,
  calls: number,
  survivors: number,
  grew: boolean,
): string[] {
  const bad: string[] = [];
  const count = (n: number, what: string) => n > 0 && bad.push(`${name}: ${n} ${what}`);
  count(calls - t.sent, "calls not sent");
  count(t.lost, "lost answers");
  count(t.duplicates, "duplicated answers");
  count(t.strays, "answers to ids never sent");
  count(t.garbage, "non-JSON-RPC lines on stdout");
  count(t.crossed, "crossed answers (another request's payload)");
  count(t.failed, "errors");
  count(survivors, "upstream processes left after mcpx stopped");
  if (grew) bad.push(`${name}: more upstream processes after the run than before`);
  if (bad.length > 0) for (const s of t.samples) bad.push(`  e.g. ${s}`);
  return bad;
}

/**
 * Read `count()` until it is at most `target` or `ms` pass; returns the last reading. For a
 * number that settles after a run (processes exiting once their sessions closed).
 */
export async function untilCount(count: () => number, target: number, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  let n = count();
  while (n > target && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    n = count();
  }
  return n;
}
