/**
 * What the fuzz tests (test/fuzz/) share: how many cases to run, the hostile JSON they build, and
 * what an answer must never hold. `npm test` runs a bounded number of cases; `npm run fuzz` sets
 * MCPX_FUZZ_RUNS for a larger run.
 */
import fc from "fast-check";

/** Cases per property: MCPX_FUZZ_RUNS when set, else `bounded` (what CI runs). */
export function fuzzRuns(bounded: number): number {
  const n = Number(process.env.MCPX_FUZZ_RUNS);
  return Number.isInteger(n) && n > 0 ? n : bounded;
}

/** A test's timeout for `runs` cases of about `msPerCase` each, never under 2 minutes. */
export function fuzzTimeout(runs: number, msPerCase: number): number {
  return Math.max(120_000, runs * msPerCase);
}

/**
 * A stack trace or an internal path in text meant for a client: mcpx answers with messages, never
 * with its insides.
 */
export function leaksInternals(text: string): boolean {
  return (
    /^\s+at .+(\(|:\d+:\d+)/m.test(text) ||
    /node:internal|node_modules\/|\/dist\/[\w/-]+\.js|\/src\/[\w/-]+\.ts/.test(text)
  );
}

/** Keys that have bitten JavaScript object handling. */
const NASTY_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", ""];

/** A string a fuzzer should try: empty, huge, odd Unicode, JSON-ish, path-ish, dotted. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string(), weight: 4 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 50 }), weight: 2 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 50 }), weight: 2 },
  fc.constantFrom(
    "",
    ".",
    "..",
    "everything.",
    ".echo",
    "fixture.echo",
    "fixture..echo",
    "fixture.__proto__",
    "__proto__.echo",
    "constructor.prototype",
    "\u0000",
    "\ud800",
    "../../etc/passwd",
    "${HOME}",
    "%s%n",
    "<script>",
  ),
  fc.nat({ max: 20_000 }).map((n) => "x".repeat(n)),
  fc.constantFrom(600, 9000, 2 * 1024 * 1024).map((n) => "y".repeat(n)),
);

/** A key, often one of the nasty ones. */
const key = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_KEYS), weight: 1 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
);

/**
 * JSON text of a value, built by hand so `__proto__` and friends are real own keys of the parsed
 * object (a JS object literal would set the prototype instead) and keys may repeat.
 */
export const rawJson: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    nastyString.map((s) => JSON.stringify(s)),
    fc.constantFrom("1e400", "-0", "1.7976931348623157e308", "12345678901234567890123"),
    fc.array(tie("value"), { maxLength: 5 }).map((items) => `[${items.join(",")}]`),
    fc
      .array(fc.tuple(key, tie("value")), { maxLength: 5 })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
  ),
})).value;

/** `[[[…1…]]]` or `{"a":{"a":…}}` nested `depth` deep, as JSON text. */
export function deepJson(depth: number, kind: "array" | "object"): string {
  return kind === "array"
    ? `${"[".repeat(depth)}1${"]".repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** Deeply nested JSON text, around the limits (64 for arguments, 100 for bodies) and far past. */
export const deepRawJson: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(63, 64, 65, 99, 100, 101, 1000, 100_000),
    fc.constantFrom<"array" | "object">("array", "object"),
  )
  .map(([depth, kind]) => deepJson(depth, kind));
