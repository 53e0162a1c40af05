/**
 * V8 heap sizing for a long-running proxy (issue 30). By default V8 grows the young generation to
 * 16 MB semi-spaces as soon as startup allocates, and lets the old generation grow to several
 * times what is live before a full GC: mcpx's live heap stays near 30 MB under load, yet its RSS
 * climbed to 250 MB. Two flags, set before the proxy loads, bound that (measured with
 * `npm run bench -- cpu`): semi-spaces stay at their initial 1 MB (idle RSS ~115 → ~90 MB with
 * three upstreams), and the old generation may grow 20 % past what the last full GC kept (RSS
 * after 5,500 calls ~255 → ~113 MB). The price is CPU: more of each call's garbage reaches the old
 * generation, which is collected more often (~+0.6 ms per call in that bench; its "V8 defaults"
 * arm shows both, and `NODE_OPTIONS=--heap-growing-percent=0` gives the CPU back for ~180 MB).
 *
 * `--max-semi-space-size` cannot be changed once V8 runs, so the growth factor is the lever.
 * A user's own choice wins: nothing is set when node's options (command line or NODE_OPTIONS)
 * already name either setting.
 */
import { setFlagsFromString } from "node:v8";

/** The flags, with the settings they replace when the user gave none. */
export const HEAP_FLAGS: readonly { flag: string; unless: readonly string[] }[] = [
  { flag: "--semi-space-growth-factor=1", unless: ["semi-space", "semi_space"] },
  { flag: "--heap-growing-percent=20", unless: ["heap-growing", "heap_growing"] },
];

/** Apply {@link HEAP_FLAGS} the user did not set; returns the flags applied. */
export function tuneHeap(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string[] {
  const given = [...execArgv, nodeOptions].join(" ");
  const applied: string[] = [];
  for (const { flag, unless } of HEAP_FLAGS) {
    if (unless.some((u) => given.includes(u))) continue;
    setFlagsFromString(flag);
    applied.push(flag);
  }
  return applied;
}
