/**
 * The pin files: what each server's tool and prompt definitions were when the user last approved
 * them, and what is waiting for approval. One file per server launch, `<dir>/pins/<key>.json`
 * (`launchKey`: env and header values enter only as their own hash), mode 0600 in a 0700 folder
 * under `$XDG_STATE_HOME/mcpx` (default `~/.local/state/mcpx`): pins are state the user built, not
 * a cache to be thrown away.
 *
 * Written whole and atomically (temp file + rename); read synchronously (a few small files, as the
 * registry is built). A file that does not parse is reported as corrupt: the caller rebuilds it
 * and treats every definition as new. `mcpx trust approve` writes the same files, and a running
 * mcpx watches the folder, so an approval lands without a restart.
 */
import { randomBytes } from "node:crypto";
import {
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from "node:fs";
import path from "node:path";
import { z } from "zod";

/** Bumped when the layout changes: a file of another format counts as corrupt (rebuilt). */
const FORMAT = 1;

/** The fields of a definition that are pinned (hashed and kept for `mcpx trust diff`). */
export type PinnedDef = Record<string, unknown>;

/**
 * One pinned or pending definition, by hash. The definitions themselves (for `mcpx trust diff`)
 * are in the entry's definitions file, `<key>.defs.json` (hash → definition), which start-up never
 * reads: the index alone is what each start compares against. A definition that quoted a config
 * secret is not kept there.
 */
export interface Pin {
  hash: string;
  /** Pending only: flagged when the server was first pinned (suspicious text), so not "new". */
  firstSight?: true;
}

/** A pending entry: a definition waiting for approval, or a pinned one the server no longer lists. */
export type PendingPin = Pin | { removed: true };

export interface PinSection {
  tools: Record<string, Pin>;
  prompts: Record<string, Pin>;
}

/** One server launch's pins. */
export interface PinEntry {
  format: 1;
  key: string;
  /** The server's name when last written (informative: the key is what matches). */
  server: string;
  pinned: PinSection;
  pending: { tools: Record<string, PendingPin>; prompts: Record<string, PendingPin> };
}

/**
 * Whether `v` is a pin file of this format. Checked by hand, not with zod: every start reads one
 * file per server, and this is the whole cost of reading a small one (see bench "trust").
 */
function isEntry(v: unknown): v is PinEntry {
  const obj = (x: unknown): x is Record<string, unknown> =>
    typeof x === "object" && x !== null && !Array.isArray(x);
  const pins = (x: unknown, removable: boolean) =>
    obj(x) &&
    Object.values(x).every(
      (p) => obj(p) && (typeof p.hash === "string" || (removable && p.removed === true)),
    );
  const section = (x: unknown, removable: boolean) =>
    obj(x) && pins(x.tools, removable) && pins(x.prompts, removable);
  return (
    obj(v) &&
    v.format === FORMAT &&
    typeof v.key === "string" &&
    typeof v.server === "string" &&
    section(v.pinned, false) &&
    section(v.pending, true)
  );
}

/** The state folder: `$XDG_STATE_HOME/mcpx`, else `~/.local/state/mcpx`. */
export { defaultStateDir } from "../state-dir.js";

/** An entry with nothing pinned and nothing pending. */
export function emptyEntry(key: string, server: string): PinEntry {
  return {
    format: FORMAT,
    key,
    server,
    pinned: { tools: {}, prompts: {} },
    pending: { tools: {}, prompts: {} },
  };
}

/** What a read found: the entry, none yet, or a file that is there but unusable. */
export type LoadResult =
  { entry: PinEntry } | { missing: true } | { corrupt: string /* why, for the log */ };

/** Reads, writes and watches pin files. Every write failure throws; reads never do. */
export class PinStore {
  readonly folder: string;
  private watcher: FSWatcher | undefined;
  /** Told the key of every entry `save` wrote (the Redis mirror: trust-shared.ts). */
  onSave: ((key: string) => void) | undefined;

  constructor(dir: string) {
    this.folder = path.join(dir, "pins");
  }

  file(key: string): string {
    return path.join(this.folder, `${key}.json`);
  }

  /** The definitions file of `key`: hash → definition. */
  defsFile(key: string): string {
    return path.join(this.folder, `${key}.defs.json`);
  }

  /** The kept definitions of `key` by hash (none when the file is missing or unusable). */
  loadDefs(key: string): Record<string, PinnedDef> {
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.defsFile(key), "utf8"));
      const defs = z.record(z.string(), z.record(z.string(), z.unknown())).safeParse(parsed);
      return defs.success ? defs.data : {};
    } catch {
      // Missing or not JSON: diffs show hashes only; the index is what matters.
      return {};
    }
  }

  load(key: string): LoadResult {
    let text: string;
    try {
      text = readFileSync(this.file(key), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
      return { corrupt: `unreadable (${(err as NodeJS.ErrnoException).code ?? "error"})` };
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isEntry(parsed)) return { corrupt: "not a pin file of this mcpx version" };
      if (parsed.key !== key) return { corrupt: "it holds another server's pins" };
      return { entry: parsed };
    } catch {
      return { corrupt: "not JSON" };
    }
  }

  /**
   * Write `entry` whole, and with `defs` (hash → definition) add those to its definitions file,
   * dropping the ones no pin refers to any more. Definitions first: an index never names a
   * definition that is not there yet.
   */
  save(entry: PinEntry, defs?: Record<string, PinnedDef>): void {
    this.makeFolder();
    if (defs) {
      const used = new Set(
        [entry.pinned, entry.pending].flatMap((section) =>
          [...Object.values(section.tools), ...Object.values(section.prompts)].flatMap((p) =>
            "hash" in p ? [p.hash] : [],
          ),
        ),
      );
      const all = { ...this.loadDefs(entry.key), ...defs };
      const kept = Object.fromEntries(Object.entries(all).filter(([hash]) => used.has(hash)));
      this.writeAtomic(this.defsFile(entry.key), JSON.stringify(kept));
    }
    this.writeAtomic(this.file(entry.key), `${JSON.stringify(entry, null, 1)}\n`);
    this.onSave?.(entry.key);
  }

  /** The files of `key` as text (undefined: missing), for copying them elsewhere whole. */
  readText(key: string): { index?: string; defs?: string } {
    const read = (file: string) => {
      try {
        return readFileSync(file, "utf8");
      } catch {
        return undefined; // missing (or unreadable: the next save writes it again)
      }
    };
    const index = read(this.file(key));
    const defs = read(this.defsFile(key));
    return { ...(index !== undefined && { index }), ...(defs !== undefined && { defs }) };
  }

  /**
   * Replace the files of `key` with text copied from elsewhere (another replica's approval);
   * `onSave` is not told (it came from there). Definitions first, as `save` does.
   */
  writeText(key: string, text: { index: string; defs?: string }): void {
    this.makeFolder();
    if (text.defs !== undefined) this.writeAtomic(this.defsFile(key), text.defs);
    this.writeAtomic(this.file(key), text.index);
  }

  /** Temp file 0600, then rename over the old one. */
  private writeAtomic(file: string, text: string): void {
    const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
      renameSync(temp, file);
    } catch (err) {
      rmSync(temp, { force: true });
      throw err;
    }
  }

  /**
   * Call `onChange(key)` when a pin file changes (another process approved, or the user removed
   * it). Events of our own writes come too: callers re-read and find nothing new.
   */
  watch(onChange: (key: string) => void): void {
    if (this.watcher) return;
    try {
      this.makeFolder();
    } catch {
      // No state folder (a read-only home): pins are written where they can be, never watched.
      return;
    }
    this.watcher = watch(this.folder, { persistent: false }, (_event, name) => {
      const file = name?.toString();
      if (file?.endsWith(".json") && !file.endsWith(".defs.json")) {
        onChange(file.slice(0, -".json".length));
      }
    });
    // A folder removed under us (tests, the user): stop watching; pins are read again at start.
    this.watcher.on("error", () => this.close());
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  /**
   * The pins folder, the state folder and its parent (`~/.local/state`), 0700, no further up: a
   * folder removed from under a running mcpx (a test's, a user's) is not brought back.
   */
  private makeFolder(): void {
    const state = path.dirname(this.folder);
    for (const dir of [path.dirname(state), state, this.folder]) {
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
  }
}
