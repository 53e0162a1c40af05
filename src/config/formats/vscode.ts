/**
 * VS Code `mcp.json` (top-level `servers` and `inputs`; JSONC) and Cursor `mcp.json`
 * (`mcpServers`). Both use VS Code's variables: `${env:NAME}`, `${userHome}`, `${workspaceFolder}`,
 * and VS Code's `${input:id}`, read by mcpx from the environment variable `MCPX_INPUT_<ID>`.
 */
import path from "node:path";
import { EntryBuilder, notAnObject, serverObjects, type KeyRule } from "./entries.js";
import type { ClientFormat, ConvertContext, Converted, Scope } from "./types.js";
import { inputVariable } from "./variables.js";
import { isRecord } from "../../json.js";

const DEV_ONLY = "VS Code's development mode; mcpx restarts nothing on file changes";

const VSCODE_RULES: Readonly<Record<string, KeyRule>> = {
  envFile: { kind: "path" },
  cwd: { kind: "path" },
  dev: { kind: "drop", why: DEV_ONLY },
  gallery: { kind: "drop", why: "where VS Code installed the server from" },
  version: { kind: "drop", why: "the version VS Code installed" },
  sandboxEnabled: { kind: "custom" },
  sandbox: { kind: "custom" },
};

const CURSOR_RULES: Readonly<Record<string, KeyRule>> = {
  envFile: { kind: "path" },
  cwd: { kind: "path" },
  // A pre-registered client (CLIENT_ID …); without it, `mcpx login` signs in (discovery, DCR).
  auth: {
    kind: "unsupported",
    why: "a pre-registered OAuth client; mcpx signs in with dynamic registration only (mcpx login)",
  },
};

/** `.cursor/mcp.json` in a project, `~/.cursor/mcp.json` for the user; likewise `.vscode`. */
function scopeIn(dir: string, file: string, home: string): Scope {
  const parent = path.dirname(file);
  return path.basename(parent) === dir && path.dirname(parent) !== path.resolve(home)
    ? "project"
    : "user";
}

/** The project folder a project-scope file belongs to (the one holding `.vscode/`). */
function projectOf(file: string, scope: Scope, ctx: ConvertContext): string {
  return scope === "project" ? path.dirname(path.dirname(file)) : ctx.project;
}

export const vscode: ClientFormat = {
  id: "vscode",
  label: "VS Code mcp.json",
  byName: (file, doc) =>
    path.basename(file) === "mcp.json" && isRecord(doc) && isRecord(doc.servers),
  byShape: (doc) => isRecord(doc.servers) && !("mcpServers" in doc),
  scope: (file, ctx) => scopeIn(".vscode", file, ctx.home),
  convert(doc, ctx): Converted {
    const scope = vscode.scope(ctx.file, ctx);
    const project = projectOf(ctx.file, scope, ctx);
    const places = { ...ctx, project };
    const entries = serverObjects(doc.servers, ["servers"]).map(({ name, at, raw }) => {
      if (!isRecord(raw)) return notAnObject(name, at, raw);
      const b = new EntryBuilder(name, at, "vscode", places, project);
      b.apply(raw, VSCODE_RULES);
      // A sandboxed server run without its sandbox could reach what the user walled off.
      if (raw.sandboxEnabled === true) {
        b.refuse("sandboxEnabled: mcpx cannot run the server in VS Code's sandbox");
      } else if (raw.sandbox !== undefined) {
        b.drop("sandbox", "sandboxEnabled is not set, so VS Code does not apply it either");
      }
      if (typeof raw.url === "string" && /^(unix|pipe):/.test(raw.url)) {
        b.refuse("url: mcpx reaches servers over TCP, not Unix sockets or named pipes");
      }
      return b.done();
    });
    return {
      format: "vscode",
      scope,
      entries,
      hints: inputHints(doc.inputs),
      notes: [],
    };
  },
};

/** What to say when the variable of a declared `${input:id}` is unset. */
function inputHints(inputs: unknown): Record<string, string> {
  const hints: Record<string, string> = {};
  if (!Array.isArray(inputs)) return hints;
  for (const input of inputs) {
    if (!isRecord(input) || typeof input.id !== "string") continue;
    const variable = inputVariable(input.id);
    const about = typeof input.description === "string" ? ` (${input.description})` : "";
    hints[variable] =
      `VS Code input \${input:${input.id}}${about} has no value. Set the environment variable ${variable}; mcpx cannot prompt for it as VS Code does.`;
  }
  return hints;
}

export const cursor: ClientFormat = {
  id: "cursor",
  label: "Cursor mcp.json",
  byName: (file, doc) =>
    path.basename(file) === "mcp.json" &&
    (path.basename(path.dirname(file)) === ".cursor" || (isRecord(doc) && "mcpServers" in doc)),
  // Cursor's variables in an `mcpServers` file say whose it is.
  byShape: (doc) =>
    isRecord(doc.mcpServers) &&
    /\$\{(env:|userHome\}|workspaceFolder)/.test(JSON.stringify(doc.mcpServers)),
  scope: (file, ctx) => scopeIn(".cursor", file, ctx.home),
  convert(doc, ctx): Converted {
    const scope = cursor.scope(ctx.file, ctx);
    const project = projectOf(ctx.file, scope, ctx);
    const places = { ...ctx, project };
    const entries = serverObjects(doc.mcpServers, ["mcpServers"]).map(({ name, at, raw }) => {
      if (!isRecord(raw)) return notAnObject(name, at, raw);
      const b = new EntryBuilder(name, at, "vscode", places, project);
      b.apply(raw, CURSOR_RULES);
      return b.done();
    });
    return { format: "cursor", scope, entries, hints: {}, notes: [] };
  },
};
