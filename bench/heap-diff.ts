/**
 * Compare V8 heap snapshots by constructor: `node --import tsx bench/heap-diff.ts a.heapsnapshot
 * b.heapsnapshot [more…]` prints, per (node type, constructor or name), the object count and
 * self size in each snapshot, the largest changes first. Growth that continues from one
 * snapshot to the next under the same load is a leak; growth once is a cache or a warm-up.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Tally {
  count: number;
  size: number;
}

/** Count and self size per "type:name" (an object's name is its constructor's). */
export function tally(file: string): Map<string, Tally> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const out = new Map<string, Tally>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!] ?? "?";
    // Strings and code are keyed by type only: their "names" are their contents.
    const name =
      type === "object" || type === "closure" || type === "native"
        ? (snap.strings[snap.nodes[i + nameAt]!] ?? "?")
        : "";
    const key = `${type}:${name}`;
    const t = out.get(key) ?? { count: 0, size: 0 };
    t.count += 1;
    t.size += snap.nodes[i + sizeAt]!;
    out.set(key, t);
  }
  return out;
}

function main(files: string[]): void {
  if (files.length < 2) {
    console.error("usage: heap-diff.ts <a.heapsnapshot> <b.heapsnapshot> [more…]");
    process.exitCode = 2;
    return;
  }
  const tallies = files.map(tally);
  const keys = new Set(tallies.flatMap((t) => [...t.keys()]));
  const first = tallies[0]!;
  const last = tallies.at(-1)!;
  const rows = [...keys]
    .map((k) => ({
      key: k,
      per: tallies.map((t) => t.get(k) ?? { count: 0, size: 0 }),
      grew: (last.get(k)?.size ?? 0) - (first.get(k)?.size ?? 0),
    }))
    .sort((a, b) => Math.abs(b.grew) - Math.abs(a.grew))
    .slice(0, Number(process.env.TOP ?? 40));
  const total = (t: Map<string, Tally>) => [...t.values()].reduce((s, v) => s + v.size, 0);
  console.log(`snapshots: ${files.map((f) => path.basename(f)).join(" → ")}`);
  console.log(
    `total self size (MB): ${tallies.map((t) => (total(t) / 1e6).toFixed(2)).join(" → ")}`,
  );
  for (const r of rows) {
    const cells = r.per.map((p) => `${p.count} / ${(p.size / 1024).toFixed(0)} kB`).join(" → ");
    console.log(`${(r.grew / 1024).toFixed(0).padStart(7)} kB  ${r.key.padEnd(50)} ${cells}`);
  }
}

main(process.argv.slice(2));
