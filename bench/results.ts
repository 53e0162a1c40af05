/**
 * bench/RESULTS.md, one block per section between `<!-- bench:<id>:begin/end -->` markers. Any
 * run writes only its own sections and keeps every other block as it was: `npm run bench` its
 * benchmarks, `npm run load` / `soak` / `fuzz` theirs (bench/reliability/).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BenchSection } from "./report.js";
import { ROOT } from "./upstreams.js";

export const RESULTS = path.join(ROOT, "bench/RESULTS.md");

/** Blocks in this order; a block of an id not listed (an older section) follows them. */
const ORDER = [
  "tokens",
  "latency",
  "speed",
  "eras",
  "startup",
  "daemon",
  "memory",
  "sandbox",
  "dashboard",
  "codemode",
  "load",
  "soak",
  "fuzz",
] as const;

const begin = (id: string) => `<!-- bench:${id}:begin -->`;
const end = (id: string) => `<!-- bench:${id}:end -->`;

function sectionBlock(s: BenchSection, at: Date): string {
  const stamp = `_Run ${at.toISOString()} on Node ${process.version}._`;
  return `${begin(s.id)}\n## ${s.title}\n\n${stamp}\n\n${s.markdown}\n${end(s.id)}`;
}

/** Every block of the previous RESULTS.md, by id, in file order. */
function previousBlocks(text: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const m of text.matchAll(/<!-- bench:([\w-]+):begin -->[\s\S]*?<!-- bench:\1:end -->/g)) {
    blocks.set(m[1]!, m[0]);
  }
  return blocks;
}

function header(ran: string[]): string {
  const cpus = os.cpus();
  const machine = `${cpus[0]?.model.trim() ?? "unknown CPU"}, ${cpus.length} cores, ${os.platform()} ${os.release()}`;
  return [
    "# mcpx benchmarks",
    "",
    "Reproduce with `npm run bench` (one section: `npm run bench -- tokens`); the reliability runs with `npm run load`, `npm run soak` and `npm run fuzz`.",
    "",
    `- Date: ${new Date().toISOString()} (sections run: ${ran.join(", ")})`,
    `- Node: ${process.version}`,
    `- Machine: ${machine}`,
  ].join("\n");
}

/** Write `fresh` into RESULTS.md, keeping every other section's previous block. */
export function writeSections(fresh: readonly BenchSection[], at = new Date()): void {
  const previous = previousBlocks(existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "");
  const blocks = new Map(previous);
  for (const s of fresh) blocks.set(s.id, sectionBlock(s, at));
  const known: readonly string[] = ORDER;
  const ids = [
    ...known.filter((id) => blocks.has(id)),
    ...[...blocks.keys()].filter((id) => !known.includes(id)),
  ];
  const text = `${header(fresh.map((s) => s.id))}\n\n${ids.map((id) => blocks.get(id)).join("\n\n")}\n`;
  writeFileSync(RESULTS, text);
}
