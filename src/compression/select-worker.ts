/**
 * Entry of a select worker thread (see selector.ts): evaluates one JMESPath expression at a time
 * and answers its value's JSON text, or why there is none. The thread's own heap limit and the
 * host's timer bound what an expression can cost; the size of its value is measured here before
 * it is encoded, so a value that repeats its data exponentially is refused without being built.
 */
import { parentPort } from "node:worker_threads";
import { errorMessage } from "../errors.js";
import { applySelect, selectedNothing } from "./select.js";
import type { FromSelectWorker, ToSelectWorker } from "./selector.js";

const port = parentPort;
if (!port) throw new Error("src/compression/select-worker.ts runs only as a worker thread.");
const post = (msg: FromSelectWorker) => port.postMessage(msg);

port.on("message", (job: ToSelectWorker) => {
  try {
    post({ id: job.id, ...select(job) });
  } catch (err) {
    post({ id: job.id, error: errorMessage(err) });
  }
});
post({ ready: true });

/** A worker's answer to one job, before its id is added. */
type Answer =
  { text: string; nothing: boolean } | { error: string } | { tooLarge: number; max: number };

function select(job: ToSelectWorker): Answer {
  const applied = applySelect(job.value, job.expression);
  if ("error" in applied) return { error: applied.error };
  const value = applied.value;
  const sizes = new WeakMap<object, number>();
  const max = Math.max(job.floorChars, jsonLength(job.value, sizes));
  const chars = typeof value === "string" ? value.length : jsonLength(value, sizes);
  if (chars > max) return { tooLarge: chars, max };
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
  return { text, nothing: selectedNothing(value) };
}

/**
 * The length of `value`'s JSON text, without making it. Sizes are remembered per object, so a
 * value that holds the same array many times over (`[@, @]`, repeated) costs one visit per
 * distinct object, however long its text would be.
 */
function jsonLength(value: unknown, sizes: WeakMap<object, number>): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === "string") return JSON.stringify(value).length;
  if (typeof value !== "object") return (JSON.stringify(value) ?? "null").length;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  let n = 2;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) n += jsonLength(item, sizes) + 1;
  } else {
    for (const [k, v] of Object.entries(value))
      n += JSON.stringify(k).length + 2 + jsonLength(v, sizes);
  }
  sizes.set(value, n);
  return n;
}
