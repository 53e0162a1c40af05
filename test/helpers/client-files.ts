/**
 * Client config fixtures (test/fixtures/clients) placed where each client keeps them, inside a
 * temp folder with its own home and project. `@NODE@`, `@ROOT@`, `@PROJECT@` and `@HTTP@` in a
 * fixture become this node, the repository, the project folder and an HTTP upstream's URL.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./proxy.js";
import { tempDir } from "./temp.js";

export const CLIENT_FIXTURES = path.join(ROOT, "test/fixtures/clients");

/** Fixture → where it goes (relative to the home or the project folder). */
export const PLACES = {
  "claude-code.mcp.json": ["project", ".mcp.json"],
  "claude.json": ["home", ".claude.json"],
  "claude_desktop_config.json": ["home", ".config/Claude/claude_desktop_config.json"],
  "cursor.mcp.json": ["project", ".cursor/mcp.json"],
  "vscode.mcp.json": ["project", ".vscode/mcp.json"],
  "gemini.settings.json": ["home", ".gemini/settings.json"],
  "codex.config.toml": ["home", ".codex/config.toml"],
} as const;
export type Fixture = keyof typeof PLACES;

/** Secret values the fixtures use (through the environment, an envFile or literally). */
export const SECRETS = {
  token: "tok-fixture-secret-4f1d9a",
  input: "input-fixture-secret-77c2e0",
  envFile: "envfile-secret-value-0002",
  desktopLiteral: "desktop-literal-secret-0001",
} as const;

/** The environment the fixtures expect: their variables set to the secret values. */
export function fixtureEnv(): Record<string, string> {
  return {
    MCPX_FIXTURE_TOKEN: SECRETS.token,
    MCPX_FIXTURE_MODE: "fixture-mode",
    MCPX_INPUT_API_TOKEN: SECRETS.input,
  };
}

export interface Workspace {
  dir: string;
  home: string;
  /** A project folder whose test/ and node_modules/ are the repository's. */
  project: string;
  /** Place a fixture where its client keeps it; returns the file's path. */
  place(fixture: Fixture, http?: string): string;
  /** The fixture's text with its placeholders filled. */
  text(fixture: Fixture, http?: string): string;
}

export function workspace(): Workspace {
  const dir = tempDir("mcpx-clients-");
  const home = path.join(dir, "home");
  const project = path.join(dir, "project");
  mkdirSync(home);
  mkdirSync(project);
  // ${workspaceFolder}/test/... and ${workspaceFolder}/node_modules/... reach the repository's.
  symlinkSync(path.join(ROOT, "test"), path.join(project, "test"), "dir");
  symlinkSync(path.join(ROOT, "node_modules"), path.join(project, "node_modules"), "dir");
  const text = (fixture: Fixture, http = "http://127.0.0.1:9/mcp") =>
    readFileSync(path.join(CLIENT_FIXTURES, fixture), "utf8")
      .replaceAll("@NODE@", process.execPath)
      .replaceAll("@ROOT@", ROOT)
      .replaceAll("@PROJECT@", project)
      .replaceAll("@HTTP@", http);
  return {
    dir,
    home,
    project,
    text,
    place(fixture, http) {
      const [where, rel] = PLACES[fixture];
      const file = path.join(where === "home" ? home : project, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text(fixture, http));
      return file;
    },
  };
}
