/**
 * Claude Code (`.mcp.json`, project scope; `~/.claude.json`, user scope at the top level and
 * local scope under `projects["<abs path>"]`) and Claude Desktop (`claude_desktop_config.json`).
 * Both write `mcpServers`; Claude Code expands `${VAR}` / `${VAR:-default}` as mcpx does, Claude
 * Desktop expands nothing.
 */
import path from "node:path";
import { type KeyPath } from "../issues.js";
import { EntryBuilder, notAnObject, serverObjects, type KeyRule } from "./entries.js";
import type { ClientFormat, ConvertContext, Converted, SourceEntry } from "./types.js";
import type { Syntax } from "./variables.js";
import { isRecord } from "../../json.js";

/** Claude Code's keys that mcpx does not have. */
const CLAUDE_RULES: Readonly<Record<string, KeyRule>> = {
  alwaysLoad: { kind: "drop", why: "mcpx always lists every tool in its catalog" },
  // A pre-registered client (`clientId`, `callbackPort`) moves with the entry: `mcpx login` uses it.
  oauth: { kind: "custom" },
  headersHelper: {
    kind: "unsupported",
    why: "mcpx does not run a command to make headers; put them in headers with ${VAR}",
  },
};

/** Claude Code's `oauth` keys, the same in mcpx's own `oauth`. */
const OAUTH_KEYS = ["clientId", "callbackPort"];

/** Transports Claude Code knows that mcpx does not. */
const UNSUPPORTED_TYPES: Readonly<Record<string, string>> = {
  ws: "mcpx has no WebSocket transport",
  "ws-ide": "an IDE connection Claude Code makes itself",
  "sse-ide": "an IDE connection Claude Code makes itself",
  sdk: "an in-process server of the Claude Agent SDK",
};

function convertEntries(
  servers: { name: string; at: KeyPath; raw: unknown }[],
  syntax: Syntax,
  ctx: ConvertContext,
  base: string,
): SourceEntry[] {
  return servers.map(({ name, at, raw }) => {
    if (!isRecord(raw)) return notAnObject(name, at, raw);
    const b = new EntryBuilder(name, at, syntax, ctx, base);
    b.apply(raw, CLAUDE_RULES);
    if (raw.oauth !== undefined) {
      const oauth = raw.oauth;
      const known = isRecord(oauth) && Object.keys(oauth).every((k) => OAUTH_KEYS.includes(k));
      if (known) b.set("oauth", b.translate(oauth, "oauth"));
      else b.refuse("oauth: keys mcpx does not know (it reads clientId and callbackPort)");
    }
    const type = raw.type;
    if (typeof type === "string" && UNSUPPORTED_TYPES[type]) {
      b.refuse(`type "${type}": ${UNSUPPORTED_TYPES[type]}`);
    }
    return b.done();
  });
}

/** The `projects` entry of ~/.claude.json for `project`, by its absolute path. */
function projectKey(doc: Record<string, unknown>, project: string): string | undefined {
  if (!isRecord(doc.projects)) return undefined;
  const wanted = path.resolve(project);
  return Object.keys(doc.projects).find((k) => path.resolve(k) === wanted);
}

const isUserFile = (file: string) => path.basename(file) === ".claude.json";

export const claudeCode: ClientFormat = {
  id: "claude-code",
  label: "Claude Code .mcp.json / ~/.claude.json",
  byName: (file) => [".mcp.json", ".claude.json"].includes(path.basename(file)),
  // ~/.claude.json holds Claude Code's own state next to the servers.
  byShape: (doc) => isRecord(doc.projects) || "numStartups" in doc || "userID" in doc,
  scope: (file) => (isUserFile(file) ? "user" : "project"),
  convert(doc, ctx): Converted {
    // A relative path in .mcp.json is relative to the project, where the file is.
    const base = isUserFile(ctx.file) ? ctx.project : path.dirname(ctx.file);
    const user = ctx.claudeScope === "local" ? [] : serverObjects(doc.mcpServers, ["mcpServers"]);
    const key = projectKey(doc, ctx.project);
    const entry = key === undefined ? undefined : (doc.projects as Record<string, unknown>)[key];
    const local =
      key !== undefined && isRecord(entry) && ctx.claudeScope !== "user"
        ? serverObjects(entry.mcpServers, ["projects", key, "mcpServers"])
        : [];
    // Local scope wins over user scope for a name both have, as in Claude Code.
    const localNames = new Set(local.map((s) => s.name));
    const notes: string[] = [];
    const shadowed = user.filter((s) => localNames.has(s.name)).map((s) => s.name);
    if (shadowed.length > 0) {
      notes.push(
        `${shadowed.join(", ")}: the local-scope entry for ${ctx.project} wins over the user-scope one.`,
      );
    }
    if (isUserFile(ctx.file) && key === undefined && isRecord(doc.projects)) {
      notes.push(
        `no local-scope servers for ${ctx.project} (pass --project <path> to read another project's).`,
      );
    }
    const servers = [...user.filter((s) => !localNames.has(s.name)), ...local];
    return {
      format: "claude-code",
      scope: isUserFile(ctx.file) ? "user" : "project",
      entries: convertEntries(servers, "claude", ctx, base),
      hints: {},
      notes,
    };
  },
};

export const claudeDesktop: ClientFormat = {
  id: "claude-desktop",
  label: "Claude Desktop claude_desktop_config.json",
  byName: (file) => path.basename(file) === "claude_desktop_config.json",
  byShape: (doc) => "preferences" in doc || "globalShortcut" in doc,
  scope: () => "user",
  convert(doc, ctx): Converted {
    return {
      format: "claude-desktop",
      scope: "user",
      entries: convertEntries(
        serverObjects(doc.mcpServers, ["mcpServers"]),
        "literal",
        ctx,
        ctx.home,
      ),
      hints: {},
      notes: [],
    };
  },
};
