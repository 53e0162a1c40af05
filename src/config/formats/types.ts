/** What every client format module provides, and what reading one produces. */
import type { KeyPath } from "../issues.js";

export const FORMAT_IDS = [
  "mcpx",
  "claude-code",
  "claude-desktop",
  "cursor",
  "vscode",
  "gemini",
  "codex",
] as const;
export type FormatId = (typeof FORMAT_IDS)[number];

/**
 * user: the user's own file (~/.cursor/mcp.json); project: a file that arrives with a
 * repository (.mcp.json, .vscode/mcp.json) and may not be the user's; local: Claude Code's
 * per-project entries in ~/.claude.json.
 */
export type Scope = "user" | "project" | "local";

/** What converting a client's file needs besides the file. */
export interface ConvertContext {
  /** Absolute path of the file. */
  file: string;
  /** The user's home (`${userHome}`, `~`). */
  home: string;
  /** The project folder: `${workspaceFolder}`, and which `projects` entry of ~/.claude.json. */
  project: string;
  /** ~/.claude.json: read only the user-scope or only the local-scope servers (install does). */
  claudeScope?: "user" | "local";
  /** An untrusted file: place variables (`${userHome}`…) are refused where they reach a remote host. */
  untrusted?: boolean;
}

/** One server entry of a client's file, in mcpx's terms. */
export interface SourceEntry {
  /** The name in the client's file (may be invalid for mcpx; see entries.ts). */
  name: string;
  /** The entry's key path in the client's file. */
  at: KeyPath;
  /** The entry as mcpx config (our keys, mcpx variable syntax), or why mcpx cannot run it. */
  server: Record<string, unknown> | { unsupported: string };
  /** Client keys with no mcpx equivalent, left out: key → why. */
  dropped: Record<string, string>;
  /** Problems converting the entry (an unsupported variable, …): each names its key path. */
  problems: string[];
}

/** A client's file read and converted, before mcpx validates it. */
export interface Converted {
  format: FormatId;
  scope: Scope;
  entries: SourceEntry[];
  /** Variable → what to say when it is unset (e.g. a VS Code `${input:…}`). */
  hints: Record<string, string>;
  /** Notes for the user (a resolved `${workspaceFolder}`, a server list filter, …). */
  notes: string[];
}

/** One client's format: how to recognise a file of it and convert its servers. */
export interface ClientFormat {
  id: Exclude<FormatId, "mcpx">;
  /** For messages and `--help`: "VS Code mcp.json". */
  label: string;
  /** Whether this file is plainly this client's, by its name and place (parsed `doc` given). */
  byName(file: string, doc: unknown): boolean;
  /** Whether the parsed document has this client's shape (the name said nothing). */
  byShape(doc: Record<string, unknown>): boolean;
  /** The scope of `file` for this client. */
  scope(file: string, ctx: ConvertContext): Scope;
  convert(doc: Record<string, unknown>, ctx: ConvertContext): Converted;
}
