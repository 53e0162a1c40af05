/**
 * Where each client keeps its MCP servers, per scope, and the entry that starts mcpx in each
 * client's own shape. Paths follow each client's documented defaults under the user's home.
 */
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError, type ClientId, type InstallScope } from "../cli.js";
import { inputVariable } from "../config/formats/variables.js";
import { parseDocument, type FileKind } from "./client-file.js";

export interface ClientTarget {
  client: ClientId;
  label: string;
  file: string;
  kind: FileKind;
  scope: InstallScope;
  /** Where the map of servers is in the file. */
  at: string[];
  /** The format mcpx reads the file as. */
  format: ClientId;
}

export interface TargetOptions {
  client: ClientId;
  scope: InstallScope;
  file?: string;
  project?: string;
}

const LABELS: Record<ClientId, string> = {
  "claude-code": "Claude Code",
  "claude-desktop": "Claude Desktop",
  cursor: "Cursor",
  vscode: "VS Code",
  codex: "Codex",
  gemini: "Gemini CLI",
};

/** The client's config file and where its servers are, for a scope. Throws UsageError. */
export function clientTarget(o: TargetOptions, env: NodeJS.ProcessEnv = process.env): ClientTarget {
  const home = os.homedir();
  const project = path.resolve(o.project ?? process.cwd());
  const label = LABELS[o.client];
  const only = (scopes: InstallScope[]) => {
    if (!scopes.includes(o.scope)) {
      throw new UsageError(
        `${label} has no ${o.scope} scope.`,
        `Use --scope ${scopes.join(" or --scope ")}.`,
      );
    }
  };
  const target = (file: string, at: string[], kind: FileKind = "json"): ClientTarget => ({
    client: o.client,
    label,
    file: path.resolve(o.file ?? file),
    kind,
    scope: o.scope,
    at,
    format: o.client,
  });
  switch (o.client) {
    case "claude-code": {
      if (o.scope === "project") return target(path.join(project, ".mcp.json"), ["mcpServers"]);
      const file = path.resolve(o.file ?? path.join(home, ".claude.json"));
      if (o.scope === "user") return target(file, ["mcpServers"]);
      // Local scope: the project's entry under "projects", keyed by its absolute path as written.
      return target(file, ["projects", projectKey(file, project), "mcpServers"]);
    }
    case "claude-desktop":
      only(["user"]);
      return target(path.join(appConfigDir(home, env), "Claude", "claude_desktop_config.json"), [
        "mcpServers",
      ]);
    case "cursor":
      only(["user", "project"]);
      return target(path.join(o.scope === "user" ? home : project, ".cursor", "mcp.json"), [
        "mcpServers",
      ]);
    case "vscode":
      only(["user", "project"]);
      return target(
        o.scope === "user"
          ? path.join(appConfigDir(home, env), "Code", "User", "mcp.json")
          : path.join(project, ".vscode", "mcp.json"),
        ["servers"],
      );
    case "codex":
      only(["user", "project"]);
      return target(
        o.scope === "user"
          ? path.join(env.CODEX_HOME ?? path.join(home, ".codex"), "config.toml")
          : path.join(project, ".codex", "config.toml"),
        ["mcp_servers"],
        "toml",
      );
    case "gemini":
      only(["user", "project"]);
      return target(path.join(o.scope === "user" ? home : project, ".gemini", "settings.json"), [
        "mcpServers",
      ]);
    default:
      return o.client satisfies never;
  }
}

/** Where desktop apps keep their settings: ~/.config, ~/Library/Application Support, %APPDATA%. */
function appConfigDir(home: string, env: NodeJS.ProcessEnv): string {
  if (process.platform === "darwin") return path.join(home, "Library", "Application Support");
  if (process.platform === "win32") return env.APPDATA ?? path.join(home, "AppData", "Roaming");
  return env.XDG_CONFIG_HOME ?? path.join(home, ".config");
}

/** The key of `project` in ~/.claude.json's "projects" (its absolute path, as Claude Code wrote it). */
function projectKey(file: string, project: string): string {
  if (!existsSync(file)) return project;
  const doc = parseDocument(readFileSync(file, "utf8"), "json");
  const projects = doc?.projects;
  if (typeof projects !== "object" || projects === null) return project;
  return Object.keys(projects).find((k) => path.resolve(k) === project) ?? project;
}

/** Where install keeps the mcpx config it creates, when --config is not given. */
export function defaultMcpxConfig(t: ClientTarget, project: string, env = process.env): string {
  if (t.scope === "project") return path.join(project, "mcpx.json");
  const dir = path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), ".config"), "mcpx");
  const suffix =
    t.scope === "local" ? `-${path.basename(project).replace(/[^A-Za-z0-9_-]/g, "_")}` : "";
  return path.join(dir, `${t.client}${suffix}.json`);
}

/** This mcpx: the running node and the absolute path of its entry script. */
export function mcpxCommand(): { command: string; script: string } {
  return {
    command: process.execPath,
    script: fileURLToPath(new URL("../mcpx.cjs", import.meta.url)),
  };
}

/**
 * The entry that starts mcpx over stdio, in the client's own shape. `env` is what the client
 * should pass mcpx (VS Code still prompts for its `${input:…}` values and hands them over).
 * `daemon`: the entry attaches to the config's shared daemon (`--daemon`) — never when the client
 * passes env of its own, which a daemon started by another client would not see.
 */
export function mcpxEntry(
  client: ClientId,
  config: string,
  env: Record<string, string> = {},
  mcpx = mcpxCommand(),
  daemon = false,
): Record<string, unknown> {
  const shared = daemon && Object.keys(env).length === 0;
  const base = {
    command: mcpx.command,
    args: [mcpx.script, config, ...(shared ? ["--daemon"] : [])],
    ...(Object.keys(env).length > 0 && { env }),
  };
  switch (client) {
    case "claude-code":
    case "vscode":
      return { type: "stdio", ...base };
    case "claude-desktop":
    case "cursor":
    case "gemini":
    case "codex":
      return base;
    default:
      return client satisfies never;
  }
}

/**
 * VS Code inputs the moved servers use, as the env of the mcpx entry: `MCPX_INPUT_<ID>` →
 * `${input:<id>}`, so VS Code keeps prompting for them and passes the values to mcpx.
 */
export function inputPassThrough(
  doc: Record<string, unknown>,
  moved: readonly unknown[],
): Record<string, string> {
  const used = new Set(JSON.stringify(moved).match(/MCPX_INPUT_[A-Z0-9_]+/g) ?? []);
  const env: Record<string, string> = {};
  for (const input of Array.isArray(doc.inputs) ? doc.inputs : []) {
    const id = (input as { id?: unknown }).id;
    if (typeof id === "string" && used.has(inputVariable(id)))
      env[inputVariable(id)] = `\${input:${id}}`;
  }
  return env;
}
