/**
 * `mcpx install` moves remote servers that sign in with OAuth (an http entry without credentials,
 * in each client's own way of writing it) into mcpx, and names the `mcpx login` command of each
 * (issue 27). Under a fake HOME, on the clients' real file locations.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDocument, serversAt } from "../../src/commands/client-file.js";
import { workspace } from "../helpers/client-files.js";
import { mcpx } from "../helpers/cli.js";

const URL_ = "https://mcp.linear.example/mcp";

const CASES = [
  {
    client: "claude-code",
    args: [],
    where: "home",
    file: ".claude.json",
    at: ["mcpServers"],
    entry: { type: "http", url: URL_ },
  },
  {
    client: "cursor",
    args: ["--scope", "project"],
    where: "project",
    file: ".cursor/mcp.json",
    at: ["mcpServers"],
    entry: { url: URL_ },
  },
  {
    client: "vscode",
    args: ["--scope", "project"],
    where: "project",
    file: ".vscode/mcp.json",
    at: ["servers"],
    entry: { type: "http", url: URL_ },
  },
  {
    client: "gemini",
    args: [],
    where: "home",
    file: ".gemini/settings.json",
    at: ["mcpServers"],
    entry: { httpUrl: URL_ },
  },
] as const;

describe("install and OAuth servers", () => {
  it.each(CASES)(
    "$client: an http server without credentials moves into mcpx, with its mcpx login command",
    async (c) => {
      const ws = workspace();
      const file = path.join(c.where === "home" ? ws.home : ws.project, c.file);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ [c.at[0]]: { linear: c.entry } }, null, 2));
      const r = await mcpx(["install", c.client, ...c.args], {
        env: { HOME: ws.home },
        cwd: ws.project,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/moved: +linear/);
      const login = /mcpx login (\S+) linear/.exec(r.stderr);
      expect(login, r.stderr).not.toBeNull();
      const config = JSON.parse(readFileSync(login![1]!, "utf8")) as {
        mcpServers: Record<string, { url?: string }>;
      };
      expect(config.mcpServers.linear?.url).toBe(URL_);
      const after = parseDocument(readFileSync(file, "utf8"), "json")!;
      expect(Object.keys(serversAt(after, [...c.at]))).toEqual(["mcpx"]);
    },
  );
});
