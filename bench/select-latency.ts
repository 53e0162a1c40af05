/**
 * What moving `select` off the main thread costs a common small select: `npx tsx
 * bench/select-latency.ts` prints p50/p90 of one select on a 40-issue result, evaluated on this
 * thread (as before issue 24) and through the Selector's warm worker thread (as now).
 */
import { search } from "@jmespath-community/jmespath";
import { Selector } from "../src/compression/selector.js";
import { percentile } from "./lib/stats.js";

const value = {
  items: Array.from({ length: 40 }, (_, i) => ({
    id: i,
    title: `Issue ${i}`,
    state: i % 3 === 0 ? "closed" : "open",
    body: "x".repeat(200),
  })),
  total_count: 40,
};
const expression = "items[?state=='closed'].{id: id, title: title}";
const RUNS = 300;

function quantile(xs: number[], p: number): string {
  return percentile(xs, p).toFixed(3);
}

const inline: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const started = performance.now();
  JSON.stringify(search(value, expression));
  inline.push(performance.now() - started);
}
const selector = new Selector();
await selector.apply(value, "@"); // the worker is up
const worker: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const started = performance.now();
  await selector.apply(value, expression);
  worker.push(performance.now() - started);
}
await selector.close();
console.log(`main thread: p50 ${quantile(inline, 50)} ms, p90 ${quantile(inline, 90)} ms`);
console.log(`worker:      p50 ${quantile(worker, 50)} ms, p90 ${quantile(worker, 90)} ms`);
