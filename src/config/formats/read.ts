/**
 * Reading any config file people already have: mcpx's own, or a client's (Claude Code, Claude
 * Desktop, Cursor, VS Code, Gemini CLI, Codex), told apart by the file's name and shape, and
 * converted into an mcpx config object that parseConfig validates like any other.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { EXAMPLE_CONFIG } from "../../version.js";
import { parse as parseToml } from "smol-toml";
import { nestsDeeper } from "../../json.js";
import { formatPath, type KeyPath } from "../issues.js";
import type { Origin } from "../servers.js";
import { ConfigError } from "../types.js";
import { claudeCode, claudeDesktop } from "./claude.js";
import { codex } from "./codex.js";
import { mcpxName } from "./entries.js";
import { gemini } from "./gemini.js";
import type { ClientFormat, ConvertContext, FormatId, Scope, SourceEntry } from "./types.js";
import { cursor, vscode } from "./vscode.js";
import { isRecord } from "../../json.js";

export { FORMAT_IDS, type FormatId, type Scope } from "./types.js";

/** Every client format, in the order a file's name is matched against them. */
export const CLIENT_FORMATS: readonly ClientFormat[] = [
  claudeCode,
  claudeDesktop,
  vscode,
  cursor,
  gemini,
  codex,
];

/** The formats mcpx reads, for messages: one line. */
export const FORMATS_LINE = `mcpx ("mcpServers" plus mcpx settings), ${CLIENT_FORMATS.map((f) => f.label).join(", ")}`;

export interface ReadOptions {
  /** Skip detection: read the file as this format. */
  format?: FormatId;
  /** `${workspaceFolder}` and the `projects` entry of ~/.claude.json (default: the current folder). */
  project?: string;
  /** The user's home (default: os.homedir(), which honours $HOME). */
  home?: string;
  /** ~/.claude.json: only the user-scope or only the local-scope servers (default: both, local winning). */
  claudeScope?: "user" | "local";
  /** The file may not be the user's: variables that reveal local paths stay out of URLs and headers. */
  untrusted?: boolean;
}

/** A config file as read: its text, its format and the parsed document. */
export interface Source {
  file: string;
  text: string;
  format: FormatId;
  doc: Record<string, unknown>;
}

/** Read and parse `file`, and tell its format. Throws ConfigError. */
export function readSource(file: string, options: ReadOptions = {}): Source {
  const abs = path.resolve(file);
  const text = readText(abs);
  const toml = options.format === "codex" || path.extname(abs) === ".toml";
  const doc = parseNested(abs, () => (toml ? parseTomlText(abs, text) : parseJsonText(abs, text)));
  const format = options.format ?? detect(abs, doc);
  if (format === "mcpx") {
    // mcpx's own files are strict JSON: no comments, no trailing commas.
    const strict = strictJson(abs, text);
    if (!isRecord(strict)) {
      throw new ConfigError(abs, [
        '(root): must be a JSON object like { "mcpServers": { "name": { "command": "..." } } }.',
      ]);
    }
    return { file: abs, text, format, doc: strict };
  }
  if (!isRecord(doc)) {
    throw new ConfigError(abs, [`(root): must be an object, as a ${labelOf(format)} file is.`]);
  }
  return { file: abs, text, format, doc };
}

/** What converting a client's file gives parseConfig, and what `mcpx import` reports. */
export interface Conversion {
  format: FormatId;
  scope: Scope;
  /** An mcpx config object. */
  raw: Record<string, unknown>;
  origin?: Origin;
  /** Conversion problems (an unsupported variable, …), each naming its key path. */
  problems: string[];
  /** Keys left out, servers mcpx cannot run, notes. */
  warnings: string[];
  report: ImportReport;
}

export interface ImportReport {
  /** mcpx name ← the client's name, for every server moved. */
  kept: { name: string; from: string }[];
  renamed: { from: string; to: string }[];
  /** Servers mcpx cannot run as the client does; they are not in `raw`. */
  unsupported: { name: string; why: string }[];
  dropped: { name: string; key: string; why: string }[];
  /** Servers (client names) with conversion problems: in `problems`, never moved by install. */
  invalid: string[];
  notes: string[];
}

/** The context a conversion runs in. */
export function convertContext(file: string, options: ReadOptions = {}): ConvertContext {
  return {
    file: path.resolve(file),
    home: path.resolve(options.home ?? os.homedir()),
    project: path.resolve(options.project ?? process.cwd()),
    ...(options.claudeScope && { claudeScope: options.claudeScope }),
    ...(options.untrusted && { untrusted: true }),
  };
}

/** Convert a source into an mcpx config object (mcpx's own is returned as it is). */
export function convertSource(source: Source, options: ReadOptions = {}): Conversion {
  if (source.format === "mcpx") {
    const names = isRecord(source.doc.mcpServers) ? Object.keys(source.doc.mcpServers) : [];
    return {
      format: "mcpx",
      scope: "user",
      raw: source.doc,
      problems: [],
      warnings: [],
      report: {
        kept: names.map((n) => ({ name: n, from: n })),
        renamed: [],
        unsupported: [],
        dropped: [],
        invalid: [],
        notes: [],
      },
    };
  }
  const client = CLIENT_FORMATS.find((f) => f.id === source.format);
  if (!client) throw new Error(`no converter for ${source.format}`);
  const converted = client.convert(source.doc, convertContext(source.file, options));
  return assemble(converted.entries, converted.format, converted.scope, converted.hints, [
    ...converted.notes,
  ]);
}

/** Entries → `mcpServers` with valid, distinct names; the rest into the report. */
function assemble(
  entries: SourceEntry[],
  format: FormatId,
  scope: Scope,
  hints: Record<string, string>,
  notes: string[],
): Conversion {
  const mcpServers: Record<string, unknown> = {};
  const paths = new Map<string, KeyPath>();
  const report: ImportReport = {
    kept: [],
    renamed: [],
    unsupported: [],
    dropped: [],
    invalid: [],
    notes,
  };
  const problems: string[] = [];
  const warnings: string[] = [];
  const taken = new Set<string>();
  for (const entry of entries) {
    const at = formatPath(entry.at);
    problems.push(...entry.problems);
    if (entry.problems.length > 0) report.invalid.push(entry.name);
    for (const [key, why] of Object.entries(entry.dropped)) {
      report.dropped.push({ name: entry.name, key, why });
      warnings.push(`${at}.${key}: left out (${why}).`);
    }
    // A client entry that is not an object stays as it is, for parseConfig to report.
    if (isRecord(entry.server) && "unsupported" in entry.server) {
      const why = String(entry.server.unsupported);
      report.unsupported.push({ name: entry.name, why });
      warnings.push(`${at}: not served by mcpx: ${why}.`);
      continue;
    }
    const name = mcpxName(entry.name, taken);
    taken.add(name);
    if (name !== entry.name) {
      report.renamed.push({ from: entry.name, to: name });
      warnings.push(
        `${at}: renamed "${name}" (server names may use only letters, digits, "_" and "-").`,
      );
    }
    report.kept.push({ name, from: entry.name });
    mcpServers[name] = entry.server;
    paths.set(name, entry.at);
  }
  warnings.push(...notes);
  return {
    format,
    scope,
    raw: { mcpServers },
    origin: {
      keyPath: (name) => paths.get(name) ?? ["mcpServers", name],
      hint: (variable) => hints[variable],
    },
    problems,
    warnings,
    report,
  };
}

/** The format of a parsed file: by its name, then by its shape; mcpx's own otherwise. */
function detect(file: string, doc: unknown): FormatId {
  const byName = CLIENT_FORMATS.find((f) => f.byName(file, doc));
  if (byName) return byName.id;
  if (!isRecord(doc)) return "mcpx";
  const byShape = CLIENT_FORMATS.find((f) => f.byShape(doc));
  return byShape?.id ?? "mcpx";
}

export function labelOf(format: FormatId): string {
  return CLIENT_FORMATS.find((f) => f.id === format)?.label ?? "mcpx";
}

function readText(abs: string): string {
  try {
    return readFileSync(abs, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(abs, [
      code === "ENOENT"
        ? `file not found. Pass the path of a JSON file with an "mcpServers" object (e.g. ${EXAMPLE_CONFIG}, shipped with mcpx), or a client's config file.`
        : code === "EISDIR"
          ? "is a folder, not a file. Pass the config file inside it (e.g. mcpx.json or .mcp.json in that folder)."
          : `cannot read the file (${code ?? "unknown error"}). Check its permissions.`,
    ]);
  }
}

/**
 * Objects and arrays a config may nest. A real one needs a handful of levels; the parsers and
 * every check after them recurse, and a hostile file thousands deep would overflow their stack.
 */
export const CONFIG_DEPTH = 64;

/** Parse with `parse`; a file nested past CONFIG_DEPTH is a ConfigError, not a stack overflow. */
function parseNested(abs: string, parse: () => unknown): unknown {
  const tooDeep = () =>
    new ConfigError(abs, [
      `(root): nested more than ${CONFIG_DEPTH} levels deep. A config needs a few; check that this is the file you meant.`,
    ]);
  let doc: unknown;
  try {
    doc = parse();
  } catch (err) {
    if (err instanceof RangeError) throw tooDeep();
    throw err;
  }
  if (nestsDeeper(doc, CONFIG_DEPTH)) throw tooDeep();
  return doc;
}

/** Client JSON files may have comments and trailing commas (VS Code, Gemini write JSONC). */
function parseJsonText(abs: string, text: string): unknown {
  const errors: ParseError[] = [];
  const doc: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length === 0) return doc;
  // Name the first mistake in the file, as JSON.parse would: a trailing comma early on is often
  // the one that made the rest go wrong, while the lenient parser first trips at the end.
  const strict: ParseError[] = [];
  parseJsonc(text, strict, { allowTrailingComma: false });
  const first = [...strict, ...errors].reduce((a, b) => (b.offset < a.offset ? b : a));
  const lenient = errors[0]!;
  const then =
    lenient.offset === first.offset
      ? ""
      : ` (${printParseErrorCode(first.error)}; then ${printParseErrorCode(lenient.error)} at ${lineColumn(text, lenient.offset)})`;
  throw new ConfigError(abs, [
    `not valid JSON at ${lineColumn(text, first.offset)}${then}. Fix the syntax.`,
  ]);
}

function strictJson(abs: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    // Only the place: V8's message may quote a snippet of the file, and the file may hold a token.
    const where = position === undefined ? "" : ` at ${lineColumn(text, Number(position))}`;
    throw new ConfigError(abs, [
      `not valid JSON${where}. Fix the syntax (comments and trailing commas are not allowed).`,
    ]);
  }
}

function parseTomlText(abs: string, text: string): unknown {
  try {
    // A JSON round trip: plain objects (smol-toml's have no prototype), dates as strings.
    return JSON.parse(JSON.stringify(parseToml(text))) as unknown;
  } catch (err) {
    const { line, column } = err as { line?: number; column?: number };
    // Only the place: the parser's message quotes the file, which may hold a token.
    const where = line === undefined ? "" : ` at line ${line}, column ${column ?? 0}`;
    throw new ConfigError(abs, [`not valid TOML${where}. Fix the syntax.`]);
  }
}

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}
