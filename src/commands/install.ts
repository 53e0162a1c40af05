/**
 * `mcpx install <client>`: move a client's servers into an mcpx config and put one `mcpx` entry
 * in their place, after a timestamped backup of the client's file. Nothing is written when the
 * client's file cannot be parsed, when an edit would not parse back to exactly what was meant,
 * or with --dry-run (which prints the diff).
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  renameSync,
  constants,
} from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { createTwoFilesPatch } from "diff";
import type { InstallOptions } from "../cli.js";
import { convertSource, readSource, type Conversion } from "../config/formats/read.js";
import { ConfigError } from "../config/load.js";
import { editServers, parseDocument, serversAt } from "./client-file.js";
import {
  clientTarget,
  defaultMcpxConfig,
  inputPassThrough,
  mcpxEntry,
  type ClientTarget,
} from "./clients.js";
import { checkWritten, secretsOf, summary } from "./import.js";
import { fail, redactor } from "./output.js";

/** The name of the one entry install leaves in the client's file. */
export const ENTRY = "mcpx";

export function install(o: InstallOptions): number {
  const t = clientTarget(o);
  const project = path.resolve(o.project ?? process.cwd());
  if (!existsSync(t.file)) {
    return fail(
      1,
      `no ${t.label} config at ${t.file}: nothing to move.`,
      "Pass --file <path> if it is elsewhere, or --scope to pick another scope.",
    );
  }
  const text = readFileSync(t.file, "utf8");
  const doc = parseDocument(text, t.kind);
  if (!doc) {
    return fail(
      1,
      `${t.file} does not parse as ${t.kind.toUpperCase()}; mcpx leaves it untouched.`,
      `Fix the file (or check ${t.label} reads it), then run install again.`,
    );
  }
  const servers = serversAt(doc, t.at);
  if (ENTRY in servers) {
    return fail(
      1,
      `${t.file} already has an "${ENTRY}" entry.`,
      `Run mcpx uninstall ${t.client}${scopeFlag(t)} first, or edit the file.`,
    );
  }
  let conversion: Conversion;
  try {
    const read = {
      format: t.format,
      project,
      // ~/.claude.json holds two scopes: move only the one asked for.
      ...(t.client === "claude-code" && t.scope !== "project" && { claudeScope: t.scope }),
    } as const;
    conversion = convertSource(readSource(t.file, read), read);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return fail(1, err.message);
  }
  const moving = movable(conversion, t, servers);
  if (moving.length === 0) {
    return fail(
      1,
      `no server in ${t.file} that mcpx can run.`,
      "mcpx validate the file to see why.",
    );
  }

  const configFile = path.resolve(o.config ?? defaultMcpxConfig(t, project));
  const merged = mergeInto(configFile, moving);
  if (merged instanceof Error)
    return fail(1, merged.message, "Fix or remove that file, or pass --config <another file>.");
  const problems = checkWritten(merged.doc, configFile);
  if (problems.length > 0) {
    return fail(
      1,
      `the moved servers would not load in mcpx, so nothing was changed:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
      `Fix them in ${t.file}, then run install again.`,
    );
  }
  const env =
    t.client === "vscode"
      ? inputPassThrough(
          doc,
          moving.map((m) => m.entry),
        )
      : {};
  const entry = mcpxEntry(t.client, configFile, env, undefined, o.daemon);
  const edited = editServers(text, t.kind, {
    at: t.at,
    remove: moving.map((m) => m.from),
    add: { [ENTRY]: entry },
  });
  if (edited instanceof Error) {
    return fail(
      1,
      `cannot edit ${t.file} safely: ${edited.message}. Nothing was changed.`,
      `Add the mcpx entry by hand: ${JSON.stringify(entry)}`,
    );
  }

  if (o.dryRun) {
    // Values are shown as validate shows them: every secret of either file is ***.
    const redact = redactor([
      ...secretsOf(conversion.raw, t.file),
      ...secretsOf(merged.doc, configFile),
    ]);
    process.stdout.write(
      redact(createTwoFilesPatch(configFile, configFile, merged.before, merged.text)),
    );
    process.stdout.write(redact(createTwoFilesPatch(t.file, t.file, text, edited)));
    process.stderr.write(`mcpx: dry run: nothing written.\n`);
    return 0;
  }
  const backup = backupFile(t.file);
  mkdirSync(path.dirname(configFile), { recursive: true });
  writeAtomic(configFile, merged.text, 0o600);
  writeAtomic(t.file, edited, statSync(t.file).mode);
  const source = { file: t.file, text, format: conversion.format, doc };
  process.stderr.write(
    [
      ...summary(source, conversion, configFile).filter((l) => !/^ {2}(next|kept):/.test(l)),
      `  moved:      ${moving.map((m) => (m.from === m.name ? m.name : `${m.from} → ${m.name}`)).join(", ")}`,
      ...(conversion.report.invalid.length > 0
        ? [
            `  left in place (fix them, then install again): ${conversion.report.invalid.join(", ")}`,
            ...conversion.problems.map((p) => `    - ${p}`),
          ]
        : []),
      ...(merged.renamed.length > 0
        ? [`  renamed in ${configFile}: ${merged.renamed.join(", ")} (the names were taken)`]
        : []),
      `  backup:     ${backup}`,
      `  ${t.file} now starts mcpx (entry "${ENTRY}"); restart ${t.label} to use it.`,
      `  undo:       mcpx uninstall ${t.client}${scopeFlag(t)}${o.file ? ` --file ${t.file}` : ""}`,
    ].join("\n") + "\n",
  );
  return 0;
}

/** A server install moves: its name in the client's file and in the mcpx config. */
interface Moving {
  from: string;
  name: string;
  entry: Record<string, unknown>;
}

/** The servers of the target's map that mcpx can run (the rest stays in the client's file). */
function movable(c: Conversion, t: ClientTarget, servers: Record<string, unknown>): Moving[] {
  return c.report.kept.flatMap(({ name, from }) => {
    const entry = (c.raw.mcpServers as Record<string, Record<string, unknown>>)[name];
    const at = c.origin?.keyPath(name) ?? [];
    const here = at.length === t.at.length + 1 && t.at.every((k, i) => at[i] === k);
    const ok = !c.report.invalid.includes(from);
    return entry && here && ok && from in servers ? [{ from, name, entry }] : [];
  });
}

interface Merged {
  doc: Record<string, unknown>;
  before: string;
  text: string;
  renamed: string[];
}

/** The mcpx config with the moved servers added (a name taken by a different server gets a suffix). */
function mergeInto(file: string, moving: Moving[]): Merged | Error {
  let doc: Record<string, unknown> = { mcpServers: {} };
  let before = "";
  if (existsSync(file)) {
    before = readFileSync(file, "utf8");
    const existing = parseDocument(before, "json");
    if (!existing || typeof existing.mcpServers !== "object" || existing.mcpServers === null) {
      return new Error(`${file} exists but is not an mcpx config with "mcpServers".`);
    }
    doc = existing;
  }
  const servers = doc.mcpServers as Record<string, unknown>;
  const add: Record<string, unknown> = {};
  const renamed: string[] = [];
  for (const m of moving) {
    if (isDeepStrictEqual(servers[m.name], m.entry)) continue;
    let name = m.name;
    for (let i = 2; name in servers || name in add; i++) name = `${m.name}-${i}`;
    if (name !== m.name) renamed.push(`${m.name} → ${name}`);
    m.name = name;
    add[name] = m.entry;
  }
  const text =
    before === ""
      ? `${JSON.stringify({ mcpServers: add }, null, 2)}\n`
      : editServers(before, "json", { at: ["mcpServers"], remove: [], add });
  if (text instanceof Error) return new Error(`cannot add the servers to ${file}: ${text.message}`);
  return { doc: { ...doc, mcpServers: { ...servers, ...add } }, before, text, renamed };
}

/** Copy the file to `<file>.mcpx-backup-<UTC timestamp>` beside it; never overwrites one. */
export function backupFile(file: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  let backup = `${file}.mcpx-backup-${stamp}`;
  for (let i = 2; existsSync(backup); i++) backup = `${file}.mcpx-backup-${stamp}-${i}`;
  copyFileSync(file, backup, constants.COPYFILE_EXCL);
  return backup;
}

/** Write through a temporary file and a rename, so a crash never leaves half a config. */
export function writeAtomic(file: string, text: string | Buffer, mode: number): void {
  const tmp = `${file}.mcpx-tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: mode & 0o777 });
  renameSync(tmp, file);
}

export function scopeFlag(t: ClientTarget): string {
  return t.scope === "user" ? "" : ` --scope ${t.scope}`;
}
