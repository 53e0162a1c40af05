/**
 * `mcpx uninstall <client>`: undo install. When the client's file is exactly as install left it,
 * the newest backup is copied back byte for byte; when it changed since (a server added with the
 * client's own command), the `mcpx` entry is removed and the moved servers are put back, keeping
 * the changes. The mcpx config stays where it is.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { createTwoFilesPatch } from "diff";
import type { UninstallOptions } from "../cli.js";
import { editServers, parseDocument, serversAt } from "./client-file.js";
import { clientTarget } from "./clients.js";
import { backupFile, ENTRY, writeAtomic } from "./install.js";
import { fail } from "./output.js";

export function uninstall(o: UninstallOptions): number {
  const t = clientTarget(o);
  if (!existsSync(t.file))
    return fail(1, `no ${t.label} config at ${t.file}.`, "Pass --file <path> if it is elsewhere.");
  const text = readFileSync(t.file, "utf8");
  const doc = parseDocument(text, t.kind);
  if (!doc) {
    return fail(
      1,
      `${t.file} does not parse as ${t.kind.toUpperCase()}; mcpx leaves it untouched.`,
      "Fix the file, then run uninstall again.",
    );
  }
  const current = serversAt(doc, t.at);
  if (!(ENTRY in current)) {
    return fail(
      1,
      `${t.file} has no "${ENTRY}" entry: mcpx is not installed there.`,
      "Nothing to undo.",
    );
  }
  const backups = backupsOf(t.file);
  const newest = backups[0];
  if (!newest) {
    return fail(
      1,
      `no backup of ${t.file} from mcpx install beside it.`,
      `Remove the "${ENTRY}" entry by hand, and add your servers back from the mcpx config it names.`,
    );
  }
  const saved = readFileSync(newest);
  const savedDoc = parseDocument(saved.toString("utf8"), t.kind);
  if (!savedDoc)
    return fail(
      1,
      `the backup ${newest} does not parse.`,
      "Restore it by hand if it is the right file.",
    );
  const savedServers = serversAt(savedDoc, t.at);
  const moved = Object.keys(savedServers).filter((n) => !(n in current));

  // What install would have written from this backup: if that is the file now, nothing changed since.
  const replay = editServers(saved.toString("utf8"), t.kind, {
    at: t.at,
    remove: moved,
    add: { [ENTRY]: current[ENTRY] },
  });
  const untouched = typeof replay === "string" && replay === text;
  const next = untouched
    ? saved
    : editServers(text, t.kind, {
        at: t.at,
        remove: [ENTRY],
        add: Object.fromEntries(moved.map((n) => [n, savedServers[n]])),
      });
  if (next instanceof Error) {
    return fail(
      1,
      `cannot edit ${t.file} safely: ${next.message}. Nothing was changed.`,
      `The backup is ${newest}.`,
    );
  }

  if (o.dryRun) {
    process.stdout.write(createTwoFilesPatch(t.file, t.file, text, next.toString()));
    process.stderr.write("mcpx: dry run: nothing written.\n");
    return 0;
  }
  if (untouched) {
    writeAtomic(t.file, saved, statSync(newest).mode);
    rmSync(newest);
    process.stderr.write(
      `mcpx: restored ${t.file} from ${path.basename(newest)} (byte for byte); the backup is removed.\n`,
    );
  } else {
    const before = backupFile(t.file);
    writeAtomic(t.file, next, statSync(t.file).mode);
    process.stderr.write(
      [
        `mcpx: ${t.file} changed since install, so it was edited instead of restored: the "${ENTRY}" entry is gone and ${moved.length > 0 ? moved.join(", ") : "no server"} ${moved.length === 1 ? "is" : "are"} back; later changes are kept.`,
        `  the file as it was: ${before}; install's backup: ${newest}`,
      ].join("\n") + "\n",
    );
  }
  process.stderr.write(`  restart ${t.label} to use it. The mcpx config is left in place.\n`);
  return 0;
}

/** Backups install wrote beside `file`, newest first. */
function backupsOf(file: string): string[] {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.mcpx-backup-`;
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .sort()
    .reverse()
    .map((f) => path.join(dir, f));
}
