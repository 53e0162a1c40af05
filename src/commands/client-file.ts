/**
 * Editing a client's config file in place: remove some server entries, add others, keep every
 * other byte where the format allows (comments, key order, indentation, unrelated keys). JSON and
 * JSONC are edited through jsonc-parser's syntax tree; Codex's TOML by whole `[mcp_servers.*]`
 * tables, since no TOML library edits in place. Every edit is checked by parsing the result: a
 * file whose edit does not parse back to exactly the intended document is never written.
 */
import { isDeepStrictEqual } from "node:util";
import {
  findNodeAtLocation,
  modify,
  applyEdits,
  parse as parseJsonc,
  parseTree,
  type Node,
  type ParseError,
} from "jsonc-parser";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { isRecord } from "../json.js";

export type FileKind = "json" | "toml";

/** The edit to make to one map of servers. */
export interface ServersEdit {
  /** Where the map of servers is, e.g. ["mcpServers"] or ["projects", "/abs", "mcpServers"]. */
  at: readonly string[];
  remove: readonly string[];
  /** Entries to add (or replace), in order. */
  add: Readonly<Record<string, unknown>>;
}

/** The document in `text`, or undefined when it does not parse (then it must not be touched). */
export function parseDocument(text: string, kind: FileKind): Record<string, unknown> | undefined {
  try {
    if (kind === "toml")
      return JSON.parse(JSON.stringify(parseToml(text))) as Record<string, unknown>;
    const errors: ParseError[] = [];
    const doc: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
    return errors.length === 0 && isRecord(doc) ? doc : undefined;
  } catch {
    // Not TOML: the caller refuses to touch the file.
    return undefined;
  }
}

/** The map of servers at `at` (an empty object when missing). */
export function serversAt(
  doc: Record<string, unknown>,
  at: readonly string[],
): Record<string, unknown> {
  let node: unknown = doc;
  for (const key of at) {
    node =
      typeof node === "object" && node !== null
        ? (node as Record<string, unknown>)[key]
        : undefined;
  }
  return isRecord(node) ? node : {};
}

/**
 * `text` with the edit applied, or an Error saying why it cannot be done safely (the result
 * would not parse back to the intended document).
 */
export function editServers(text: string, kind: FileKind, edit: ServersEdit): string | Error {
  const before = parseDocument(text, kind);
  if (!before) return new Error("the file does not parse");
  let after: string;
  try {
    after = kind === "json" ? editJson(text, edit) : editToml(text, edit);
  } catch (err) {
    return err as Error;
  }
  const parsed = parseDocument(after, kind);
  if (!parsed || !isDeepStrictEqual(parsed, intended(before, edit))) {
    return new Error(
      kind === "toml"
        ? "its [mcp_servers] entries are not all written as [mcp_servers.<name>] tables; edit it by hand"
        : "the edited file would not hold exactly the intended servers",
    );
  }
  return after;
}

/** The document the edit should produce: only the map of servers changes. */
function intended(doc: Record<string, unknown>, edit: ServersEdit): Record<string, unknown> {
  const copy = structuredClone(doc);
  let node = copy;
  for (const key of edit.at) {
    const next = node[key];
    if (typeof next !== "object" || next === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  for (const name of edit.remove) delete node[name];
  for (const [name, value] of Object.entries(edit.add)) {
    node[name] = JSON.parse(JSON.stringify(value)) as unknown;
  }
  return copy;
}

// --- JSON / JSONC ---------------------------------------------------------------------------

function editJson(text: string, edit: ServersEdit): string {
  let out = text;
  for (const name of edit.remove) out = removeProperty(out, [...edit.at, name]);
  for (const [name, value] of Object.entries(edit.add)) {
    out = setProperty(out, [...edit.at], name, value);
  }
  return out;
}

/** Remove one property, with its comma and, when it has lines of its own, those lines. */
function removeProperty(text: string, path: string[]): string {
  const value = findNodeAtLocation(tree(text), path);
  const prop = value?.parent;
  if (!prop || prop.type !== "property" || !prop.parent) return text;
  const siblings = prop.parent.children ?? [];
  const i = siblings.indexOf(prop);
  let start = prop.offset;
  let end = prop.offset + prop.length;
  const comma = /^[ \t]*,/.exec(text.slice(end));
  if (comma) {
    end += comma[0].length;
  } else if (i > 0) {
    // The last property: the comma to remove is the one after the previous property.
    const prev = siblings[i - 1]!;
    start = prev.offset + prev.length;
    return text.slice(0, start) + text.slice(end);
  }
  // Whole lines when the property stands on its own lines (a trailing // comment goes with it).
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const rest = /^[ \t]*(\/\/[^\n]*)?\r?\n/.exec(text.slice(end));
  if (/^[ \t]*$/.test(text.slice(lineStart, start)) && rest) {
    start = lineStart;
    end += rest[0].length;
  }
  return text.slice(0, start) + text.slice(end);
}

/** Add `name` at the end of the object at `path` (replace it if present), indented like its siblings. */
function setProperty(text: string, path: string[], name: string, value: unknown): string {
  const root = tree(text);
  const object = findNodeAtLocation(root, path);
  if (!object || object.type !== "object" || findNodeAtLocation(root, [...path, name])) {
    // No object to append to (or a value to replace): jsonc-parser's own edit, formatted.
    const fmt = {
      insertSpaces: !indentUnit(text).includes("\t"),
      tabSize: indentUnit(text).length,
      eol: eolOf(text),
    };
    return applyEdits(text, modify(text, [...path, name], value, { formattingOptions: fmt }));
  }
  const eol = eolOf(text);
  const unit = indentUnit(text);
  const props = object.children ?? [];
  const last = props.at(-1);
  const indent = last
    ? (indentOf(text, last.offset) ?? lineIndent(text, object.offset) + unit)
    : lineIndent(text, object.offset) + unit;
  const body = JSON.stringify(value, null, unit)
    .split("\n")
    .join(eol + indent);
  const entry = `${JSON.stringify(name)}: ${body}`;
  if (last) {
    const at = last.offset + last.length;
    return `${text.slice(0, at)},${eol}${indent}${entry}${text.slice(at)}`;
  }
  // An empty object: the entry on its own line, the closing brace on the object's indentation.
  const open = object.offset + 1;
  const close = object.offset + object.length - 1;
  const inner = text.slice(open, close);
  const closing = /\n/.test(inner)
    ? inner.slice(inner.lastIndexOf("\n") + 1)
    : lineIndent(text, object.offset);
  return `${text.slice(0, open)}${eol}${indent}${entry}${eol}${closing}${text.slice(close)}`;
}

function tree(text: string): Node {
  const root = parseTree(text, [], { allowTrailingComma: true });
  if (!root) throw new Error("the file does not parse");
  return root;
}

/** The whitespace before `offset` when it starts its line, else undefined. */
function indentOf(text: string, offset: number): string | undefined {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  return /^[ \t]*$/.test(before) ? before : undefined;
}

/** The indentation of the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? "";
}

/** The file's indentation step: its first indented line's (two spaces when it has none). */
function indentUnit(text: string): string {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
}

function eolOf(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

// --- TOML (Codex) ------------------------------------------------------------------------------

/** A table header line's dotted key, e.g. `[mcp_servers."my server".env]` → ["mcp_servers", "my server", "env"]. */
function headerKeys(line: string): string[] | undefined {
  const m = /^\s*\[(?!\[)(.*)\]\s*(#.*)?$/.exec(line);
  if (!m?.[1]) return undefined;
  try {
    // Parse the key with the TOML library itself: `[a."b.c"]` is ["a", "b.c"].
    const doc = parseToml(`[${m[1]}]`);
    const keys: string[] = [];
    let node: unknown = doc;
    while (typeof node === "object" && node !== null && Object.keys(node).length === 1) {
      const key = Object.keys(node)[0]!;
      keys.push(key);
      node = (node as Record<string, unknown>)[key];
    }
    return keys;
  } catch {
    // Not a header we can read: the result check refuses the edit if it mattered.
    return undefined;
  }
}

/** Whether a line opens any table or array of tables. */
const isHeader = (line: string) => /^\s*\[/.test(line);

/**
 * Remove the `[mcp_servers.<name>]` tables (and their sub-tables) of removed servers; append a
 * table per added server. Comment lines right above the next table stay with it.
 */
function editToml(text: string, edit: ServersEdit): string {
  const eol = eolOf(text);
  const lines = text.split(/\r?\n/);
  const remove = new Set(edit.remove);
  const keep: string[] = [];
  let dropping = false;
  let pending: string[] = [];
  for (const line of lines) {
    if (isHeader(line)) {
      const keys = headerKeys(line);
      const drop = keys?.[0] === edit.at[0] && keys?.[1] !== undefined && remove.has(keys[1]);
      if (dropping && !drop) keep.push(...trailingComments(pending));
      // Comment lines right above a dropped table are about it: they go with it.
      if (drop && !dropping) keep.splice(keep.length - trailingComments(keep).length);
      pending = [];
      dropping = drop;
      if (!drop) keep.push(line);
      continue;
    }
    if (dropping) pending.push(line);
    else keep.push(line);
  }
  let out = keep.join(eol);
  for (const [name, value] of Object.entries(edit.add)) {
    const table = stringifyToml({ [edit.at[0]!]: { [name]: value } })
      .trimEnd()
      .split("\n")
      .join(eol);
    out = `${out.replace(/(\r?\n)*$/, "")}${eol}${eol}${table}${eol}`;
  }
  return out;
}

/** The comment lines at the end of a dropped table that sit right above the next header. */
function trailingComments(lines: string[]): string[] {
  let i = lines.length;
  while (i > 0 && /^\s*#/.test(lines[i - 1]!)) i--;
  return lines.slice(i);
}
