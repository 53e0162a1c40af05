/** `mcpx import <file>`: write an mcpx config from any config mcpx reads, and say what happened. */
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ImportOptions } from "../cli.js";
import {
  convertSource,
  labelOf,
  readSource,
  type Conversion,
  type Source,
} from "../config/formats/read.js";
import { ConfigError, parseConfig } from "../config/load.js";
import { fail } from "./output.js";

export function importConfig(o: ImportOptions): number {
  const read = { ...(o.format && { format: o.format }), ...(o.project && { project: o.project }) };
  let source: Source;
  try {
    source = readSource(o.file, read);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return fail(2, err.message);
  }
  const conversion = convertSource(source, read);
  if (conversion.problems.length > 0) {
    return fail(
      2,
      new ConfigError(source.file, conversion.problems).message,
      "Fix these in the source file, then import again.",
    );
  }
  const toStdout = o.output === "-";
  const out = toStdout ? "-" : path.resolve(o.output);
  if (!toStdout && existsSync(out) && !o.force) {
    return fail(2, `${out} already exists.`, "Pass --force to overwrite it, or -o another file.");
  }
  const text = `${JSON.stringify(conversion.raw, null, 2)}\n`;
  // The written file may hold the source's literal secrets: readable by the user only.
  if (toStdout) process.stdout.write(text);
  else {
    // mode applies only to a new file: an overwritten one (--force) is narrowed first.
    if (existsSync(out)) chmodSync(out, 0o600);
    writeFileSync(out, text, { mode: 0o600 });
  }
  const problems = checkWritten(conversion.raw, toStdout ? source.file : out);
  process.stderr.write(`${summary(source, conversion, out).join("\n")}\n`);
  if (problems.length > 0) {
    return fail(
      1,
      `the imported config has problems mcpx will refuse at start:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
      `Fix them in ${toStdout ? "the output" : out}, then run mcpx validate on it.`,
    );
  }
  return 0;
}

/**
 * Problems the written config has, except unset variables: those are set where mcpx runs, not
 * necessarily here.
 */
export function checkWritten(raw: Record<string, unknown>, file: string): string[] {
  return readWritten(raw, file).problems;
}

/**
 * The literal secrets a config document holds (env and header values, URL credentials…), as the
 * config collects them, to redact output that shows the document. `${VAR}` references are not
 * secrets: they stay visible.
 */
export function secretsOf(raw: Record<string, unknown>, file: string): readonly string[] {
  return readWritten(raw, file).secrets;
}

function readWritten(raw: Record<string, unknown>, file: string) {
  // Every variable reads as "set" (too short to be taken for a secret): the references stay.
  const everySet = new Proxy(
    {},
    { get: (_t, key) => (typeof key === "string" ? "set" : undefined) },
  );
  try {
    return { problems: [], secrets: parseConfig(raw, file, everySet).secrets };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { problems: err.problems, secrets: err.secrets };
  }
}

/** What was kept, renamed, left out, and what to do next: lines for stderr. */
export function summary(source: Source, c: Conversion, out: string): string[] {
  const r = c.report;
  const lines = [
    `mcpx: read ${r.kept.length + r.unsupported.length} servers from ${source.file} (${labelOf(c.format)}${c.format === "mcpx" ? "" : ` format, ${c.scope} scope`})${out === "-" ? "" : `, wrote ${out}`}`,
  ];
  const list = (title: string, items: string[]) => {
    if (items.length > 0) lines.push(`  ${title.padEnd(12)}${items.join(", ")}`);
  };
  list(
    "kept:",
    r.kept.map((k) => k.name),
  );
  list(
    "renamed:",
    r.renamed.map((x) => `"${x.from}" → ${x.to}`),
  );
  list(
    "not moved:",
    r.unsupported.map((u) => `${u.name} (${u.why})`),
  );
  list(
    "left out:",
    r.dropped.map((d) => `${d.name}.${d.key} (${d.why})`),
  );
  for (const note of r.notes) lines.push(`  note: ${note}`);
  const signIns = remoteWithoutCredentials(c.raw);
  if (signIns.length > 0 && out !== "-") {
    lines.push(
      "  sign in:    remote servers without credentials in the file; if one is protected by OAuth, mcpx shows it as needing sign-in until you run:",
      ...signIns.map((name) => `                mcpx login ${out} ${name}`),
    );
  }
  if (c.scope === "project") {
    lines.push(
      `  ${source.file} is a project-scope file: it came with the repository and may not be yours.`,
      "  Review its servers before you run them, or serve it with mcpx --untrusted.",
    );
  }
  if (
    c.format === "claude-code" ||
    c.format === "cursor" ||
    c.format === "vscode" ||
    c.format === "gemini"
  ) {
    lines.push(
      '  note: stdio servers under mcpx get only HOME, PATH, SHELL, TERM, USER, LOGNAME and their env; add "inheritEnv": true to one that needs more.',
    );
  }
  if (out !== "-") lines.push(`  next: mcpx validate ${out} --connect`);
  return lines;
}

/** Remote (http, sse) servers of an mcpx config object without an Authorization header. */
function remoteWithoutCredentials(raw: Record<string, unknown>): string[] {
  const servers = raw.mcpServers;
  if (typeof servers !== "object" || servers === null) return [];
  return Object.entries(servers as Record<string, unknown>)
    .filter(([, entry]) => {
      if (typeof entry !== "object" || entry === null) return false;
      const e = entry as { url?: unknown; headers?: unknown };
      if (typeof e.url !== "string" || /^[a-z]+:\/\/[^/]*@/i.test(e.url)) return false;
      const headers = typeof e.headers === "object" && e.headers !== null ? e.headers : {};
      return !Object.keys(headers).some((h) => h.toLowerCase() === "authorization");
    })
    .map(([name]) => name);
}
