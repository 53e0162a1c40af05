import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/load.js";
import type { ServerState } from "../../src/registry/registry.js";
import { ToolIndex } from "../../src/registry/search.js";
import type { ToolDef } from "../../src/types.js";

const corpusDir = path.resolve(import.meta.dirname, "../fixtures/corpus/github-mcp-server");
const corpus = readdirSync(corpusDir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(path.join(corpusDir, f), "utf8")) as ToolDef);

function state(name: string, tools: ToolDef[]): ServerState {
  const config: ServerConfig = {
    name,
    spec: { transport: "stdio", command: "x", args: [], env: {}, inheritEnv: false },
    timeoutMs: 1000,
    session: { policy: "isolated", prewarm: 0, maxSessions: 8, idleTimeoutMs: 1000 },
  };
  return {
    name,
    config,
    status: "ready",
    health: { consecutiveFailures: 0 },
    tools,
    resources: [],
    resourceTemplates: [],
    prompts: [],
  };
}

const fsTools: ToolDef[] = [
  {
    name: "read_text_file",
    description: "Read the complete contents of a file as text.",
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
  },
  {
    name: "write_file",
    description: "Create a new file or overwrite an existing file.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
    },
  },
  {
    name: "list_directory",
    description: "List the files in a directory.",
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
  },
];

describe("tool search", () => {
  const github = new ToolIndex([state("github", corpus)]);

  it.each([
    ["create a pull request", "create_pull_request"],
    ["list issues", "list_issues"],
    ["read a file", "get_file_contents"],
    ["merge a PR", "merge_pull_request"],
    ["add a comment to an issue", "add_issue_comment"],
    ["search code", "search_code"],
    ["create a branch", "create_branch"],
    ["who am i", "get_me"],
  ])("finds the obvious tool for %j", (query, expected) => {
    expect(github.search(query, 3)[0]?.tool).toBe(expected);
  });

  it("searches across servers and finds parameter names", () => {
    const both = new ToolIndex([state("github", corpus), state("filesystem", fsTools)]);
    expect(both.search("read a file", 5).map((h) => `${h.server}.${h.tool}`)).toContain(
      "filesystem.read_text_file",
    );
    expect(both.search("overwrite file content", 1)[0]).toMatchObject({
      server: "filesystem",
      tool: "write_file",
    });
  });

  it("returns nothing for a query of stop words only, and respects the limit", () => {
    expect(github.search("the a of", 5)).toEqual([]);
    expect(github.search("issue", 4)).toHaveLength(4);
  });
});
