/**
 * V8 heap sizing for a long-running proxy (issue 30). By default V8 lets the old generation grow
 * to several times what is live before a full GC: mcpx's live heap stays near 30 MB under load,
 * yet its RSS climbed to ~250 MB. One flag, set once the proxy serves (src/index.ts), bounds that: the old
 * generation may grow 20 % past what the last full GC kept (RSS after load ~240 → ~143 MB in
 * `npm run bench -- cpu`, at no CPU cost that bench could see).
 *
 * Left out on purpose: keeping the young generation at 1 MB (`--semi-space-growth-factor=1`)
 * saves ~20 MB more idle and reaches ~113 MB after load, but costs ~0.7 ms of CPU per call
 * (~30 %), as more of each call's garbage is promoted and collected with the old generation.
 * A user who prefers memory can keep it small with `NODE_OPTIONS=--max-semi-space-size=1` (node
 * refuses most V8 flags in NODE_OPTIONS, this one included among the few it accepts). A user's own
 * choice wins: nothing is set when node's command line already names the setting
 * (`node --heap-growing-percent=0 …/mcpx.cjs`).
 */
import { setFlagsFromString } from "node:v8";

/** The flags, with the settings they replace when the user gave none. */
export const HEAP_FLAGS: readonly { flag: string; unless: readonly string[] }[] = [
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
