/**
 * A TOON-shaped text for JSON whose arrays of records are not uniform (optional keys, nested
 * objects): GitHub issues, search hits, log lines. TOON tables need every row to have the same
 * primitive fields and fall back to one `key: value` block per record otherwise; here such an
 * array is still one table, over the union of the records' keys:
 *
 * ```
 * # empty cell = key absent; a.b = key b inside object a
 * issues[2]{number,title,user.login,closed_at}:
 *   1,Fix crash,octocat,2025-01-02T10:00:00Z
 *   2,"Add ""x""",hubot,
 * ```
 *
 * Objects are `key: value` lines and indented blocks as in TOON; arrays of primitives are
 * `key[N]: a,b`. A cell or value is `null`, `true`, `false`, a JSON number, a bare string when it
 * cannot be read as anything else, a JSON string otherwise, or compact JSON for an array or
 * object (a table cell holding a list of labels). Keys are bare when they are plain identifiers,
 * JSON strings otherwise, so `"a.b"` (one key with a dot) differs from `a.b` (a path).
 * {@link decodeSparse} reads it back; the tests prove the round trip.
 */

import { isRecord } from "../json.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Record_ = { [key: string]: Json };

const INDENT = "  ";
const BARE_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** What the header line explains; only what the text uses is explained. */
interface Notes {
  absent: boolean;
  paths: boolean;
  tables: number;
}

/**
 * Encode `value` (already parsed JSON) as sparse-table text, or undefined when it has no array
 * of records worth a table (TOON or JSON serve it as well).
 */
export function encodeSparse(value: unknown): string | undefined {
  const notes: Notes = { absent: false, paths: false, tables: 0 };
  const lines: string[] = [];
  if (isRecordArray(value)) lines.push(...table("", value as Record_[], 0, notes));
  else if (isRecord(value) && Object.keys(value).length > 0)
    lines.push(...block(value as Record_, 0, notes));
  else return undefined;
  if (notes.tables === 0) return undefined;
  const header = [
    notes.absent ? "empty cell = key absent" : "",
    notes.paths ? "a.b = key b inside object a" : "",
  ].filter(Boolean);
  return [...(header.length > 0 ? [`# ${header.join("; ")}`] : []), ...lines].join("\n");
}

function isRecordArray(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(isRecord) &&
    value.some((r) => Object.keys(r).length > 0)
  );
}

function key(k: string): string {
  return BARE_KEY.test(k) ? k : JSON.stringify(k);
}

/** One value in a cell or after `key: `. */
function scalar(v: Json): string {
  if (v === null || typeof v === "boolean" || typeof v === "number") return JSON.stringify(v);
  if (typeof v === "string") return bareString(v) ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

/** A string that cannot be read as a literal, a number, JSON or an empty cell goes unquoted. */
function bareString(s: string): boolean {
  return (
    s !== "" &&
    !/^\s|\s$/.test(s) &&
    // eslint-disable-next-line no-control-regex -- control characters must stay escaped
    !/[,"\\\u0000-\u001f\u007f]/.test(s) &&
    !/^[[{#]/.test(s) &&
    // Anything number-like stays quoted, so "01" and "1.0" are never read as numbers.
    !/^[-+.]?\d[\d.eE+-]*$/.test(s) &&
    s !== "true" &&
    s !== "false" &&
    s !== "null"
  );
}

function block(obj: Record_, depth: number, notes: Notes): string[] {
  const pad = INDENT.repeat(depth);
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (isRecordArray(v)) out.push(...table(key(k), v as Record_[], depth, notes));
    else if (isRecord(v) && Object.keys(v).length > 0)
      out.push(`${pad}${key(k)}:`, ...block(v, depth + 1, notes));
    else if (Array.isArray(v) && v.length > 0 && v.every((x) => !isRecord(x) && !Array.isArray(x)))
      out.push(`${pad}${key(k)}[${v.length}]: ${v.map(scalar).join(",")}`);
    else out.push(`${pad}${key(k)}: ${scalar(v)}`);
  }
  return out;
}

/** A column: the path of keys from the record down to the cell's value. */
type Column = string[];

function table(name: string, rows: Record_[], depth: number, notes: Notes): string[] {
  notes.tables++;
  const columns = flatten(rows, []);
  const pad = INDENT.repeat(depth + 1);
  const body = rows.map((row) => {
    const cells = columns.map((path) => {
      const found = lookup(row, path);
      if (!found.present) notes.absent = true;
      return found.present ? scalar(found.value) : "";
    });
    return pad + cells.join(",");
  });
  if (columns.some((c) => c.length > 1)) notes.paths = true;
  const head = columns.map((c) => c.map(key).join(".")).join(",");
  return [`${INDENT.repeat(depth)}${name}[${rows.length}]{${head}}:`, ...body];
}

/**
 * The union of the records' keys in first-seen order; a key whose value is, in every record that
 * has it, a non-empty object becomes that object's columns (`user.login`), recursively.
 */
function flatten(rows: Record_[], prefix: Column): Column[] {
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const r of rows)
    for (const k of Object.keys(r))
      if (!seen.has(k)) {
        seen.add(k);
        keys.push(k);
      }
  return keys.flatMap((k) => {
    const values = rows.filter((r) => k in r).map((r) => r[k]);
    const nested = values.every((v) => isRecord(v) && Object.keys(v).length > 0);
    return nested ? flatten(values as Record_[], [...prefix, k]) : [[...prefix, k]];
  });
}

function lookup(row: Record_, path: Column): { present: boolean; value: Json } {
  let at: Json = row;
  for (const k of path) {
    if (!isRecord(at) || !(k in at)) return { present: false, value: null };
    at = at[k]!;
  }
  return { present: true, value: at };
}

// ---------------------------------------------------------------------------------------------
// Decoder: the exact inverse of encodeSparse.

/** Parse sparse-table text back to the JSON value it encodes. Throws on malformed text. */
export function decodeSparse(text: string): unknown {
  const lines = text.split("\n").filter((l, i) => !(i === 0 && l.startsWith("# ")));
  const reader = { lines, at: 0 };
  const first = lines[0] ?? "";
  if (first.startsWith("[")) {
    const { name, value } = parseEntry(reader, 0);
    if (name !== "") throw new SyntaxError("root array with a name");
    return value;
  }
  return parseBlock(reader, 0);
}

interface Reader {
  lines: string[];
  at: number;
}

function indentOf(line: string): number {
  return /^ */.exec(line)![0].length / INDENT.length;
}

function parseBlock(reader: Reader, depth: number): Record_ {
  const obj: Record_ = {};
  while (reader.at < reader.lines.length && indentOf(reader.lines[reader.at]!) === depth) {
    const { name, value } = parseEntry(reader, depth);
    obj[name] = value;
  }
  return obj;
}

/** One `key: v`, `key:` + block, `key[N]: cells` or `key[N]{cols}:` + rows. */
function parseEntry(reader: Reader, depth: number): { name: string; value: Json } {
  const line = reader.lines[reader.at++]!.slice(depth * INDENT.length);
  let i = 0;
  let name = "";
  if (line[0] === '"') {
    i = stringEnd(line, 0) + 1;
    name = JSON.parse(line.slice(0, i)) as string;
  } else if (line[0] !== "[") {
    i = /^[A-Za-z0-9_-]*/.exec(line)![0].length;
    name = line.slice(0, i);
  }
  const rest = line.slice(i);
  if (rest === ":") return { name, value: parseBlock(reader, depth + 1) };
  if (rest.startsWith(": ")) {
    const [value] = cells(rest.slice(2), 1);
    if (value === undefined) throw new SyntaxError(`no value for ${name}`);
    return { name, value };
  }
  const m = /^\[(\d+)\](?:\{(.*)\})?:(?: (.*))?$/.exec(rest);
  if (!m) throw new SyntaxError(`cannot read line: ${line}`);
  const count = Number(m[1]);
  if (m[2] === undefined) return { name, value: cells(m[3] ?? "", count) as Json[] };
  const columns = splitColumns(m[2]);
  const rows: Record_[] = [];
  for (let r = 0; r < count; r++) {
    const row = reader.lines[reader.at++];
    if (row === undefined) throw new SyntaxError(`table ${name} ends after ${r} rows`);
    const values = cells(row.slice((depth + 1) * INDENT.length), columns.length);
    const record: Record_ = {};
    columns.forEach((path, c) => {
      if (values[c] !== undefined) assign(record, path, values[c]);
    });
    rows.push(record);
  }
  return { name, value: rows };
}

function assign(record: Record_, path: Column, value: Json): void {
  let at = record;
  path.slice(0, -1).forEach((k) => {
    if (!isRecord(at[k])) at[k] = {};
    at = at[k];
  });
  at[path[path.length - 1]!] = value;
}

/** `a,user.login,"x.y"` → [["a"], ["user", "login"], ["x.y"]]. */
function splitColumns(head: string): Column[] {
  const columns: Column[] = [];
  let path: string[] = [];
  for (let i = 0; i < head.length;) {
    if (head[i] === '"') {
      const end = stringEnd(head, i);
      path.push(JSON.parse(head.slice(i, end + 1)) as string);
      i = end + 1;
    } else {
      const seg = /^[A-Za-z0-9_-]*/.exec(head.slice(i))![0];
      path.push(seg);
      i += seg.length;
    }
    if (head[i] === ".") i++;
    else {
      columns.push(path);
      path = [];
      i++; // the comma
    }
  }
  return columns;
}

/** Exactly `count` cells; an absent (empty) cell is undefined. */
function cells(text: string, count: number): (Json | undefined)[] {
  const out: (Json | undefined)[] = [];
  let i = 0;
  for (let c = 0; c < count; c++) {
    let end: number;
    let value: Json | undefined;
    const ch = text[i];
    if (ch === '"' || ch === "[" || ch === "{") {
      end = (ch === '"' ? stringEnd(text, i) : bracketEnd(text, i)) + 1;
      value = JSON.parse(text.slice(i, end)) as Json;
    } else {
      end = text.indexOf(",", i);
      if (end < 0) end = text.length;
      const token = text.slice(i, end);
      value = token === "" ? undefined : literal(token);
    }
    out.push(value);
    i = end + 1;
    if (c < count - 1 && text[end] !== ",") throw new SyntaxError(`expected ${count} cells`);
  }
  if (count === 0 ? text !== "" : i !== text.length + 1) throw new SyntaxError("extra cells");
  return out;
}

function literal(token: string): Json {
  if (token === "null") return null;
  if (token === "true") return true;
  if (token === "false") return false;
  if (NUMBER.test(token)) return Number(token);
  return token;
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  throw new SyntaxError("unterminated string");
}

function bracketEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringEnd(text, i);
    else if (c === "[" || c === "{") depth++;
    else if ((c === "]" || c === "}") && --depth === 0) return i;
  }
  throw new SyntaxError("unbalanced JSON");
}
