import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import type { ServerConfig } from "../../src/config/load.js";
import type { ServerState } from "../../src/registry/registry.js";
import {
  DESCRIPTION_LIMIT,
  describeDescription,
  renderCatalog,
  renderSearch,
  renderServer,
  renderTool,
  serverSummary,
} from "../../src/server/catalog.js";
import type { ToolDef } from "../../src/types.js";

const CORPUS = fileURLToPath(new URL("../fixtures/corpus/github-mcp-server/", import.meta.url));

/** The 117 real tool definitions of github-mcp-server (one JSON file each). */
const githubTools: ToolDef[] = readdirSync(CORPUS)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => JSON.parse(readFileSync(CORPUS + f, "utf8")) as ToolDef);

function tool(name: string, extra: Partial<ToolDef> = {}): ToolDef {
  return { name, inputSchema: { type: "object" }, ...extra };
}

function server(
  name: string,
  extra: Partial<Omit<ServerState, "name" | "config">> & { description?: string } = {},
): ServerState {
  const { description, ...rest } = extra;
  const config: ServerConfig = {
    name,
    spec: { transport: "stdio", command: "node", args: [], env: {}, inheritEnv: false },
    timeoutMs: 60_000,
    session: { policy: "isolated", prewarm: 0, maxSessions: 8, idleTimeoutMs: 1000 },
    resultBudget: 8000,
    ...(description !== undefined && { description }),
  };
  return {
    name,
    config,
    status: "ready",
    health: { consecutiveFailures: 0 },
    tools: [],
    resources: [],
    resourceTemplates: [],
    prompts: [],
    ...rest,
  };
}

const memory = server("memory", {
  identity: { name: "memory-server", capabilities: {} },
  tools: [
    tool("create_entities", { description: "Create multiple new entities. Use it first." }),
    tool("read_graph", { description: "Read the entire knowledge graph." }),
  ],
});
const fs = server("filesystem", {
  description: "Files under /srv/data",
  tools: [tool("read_file"), tool("write_file")],
});

describe("fixtures", () => {
  it("loads the whole github-mcp-server corpus", () => {
    expect(githubTools).toHaveLength(117);
    expect(githubTools.every((t) => typeof t.name === "string" && t.inputSchema)).toBe(true);
  });
});

describe("serverSummary", () => {
  it("prefers the configured description", () => {
    const s = server("a", {
      description: "Mine",
      identity: { name: "n", title: "T", instructions: "I.", capabilities: {} },
    });
    expect(serverSummary(s)).toBe("Mine");
  });

  it("falls back to the server's title, then its instructions' first sentence, then its name", () => {
    const identity = { name: "srv-name", capabilities: {} };
    expect(serverSummary(server("a", { identity: { ...identity, title: "GitHub" } }))).toBe(
      "GitHub",
    );
    expect(
      serverSummary(
        server("a", {
          identity: { ...identity, instructions: "Use these tools for issues. Never for PRs." },
        }),
      ),
    ).toBe("Use these tools for issues.");
    expect(serverSummary(server("a", { identity }))).toBe("srv-name");
    expect(serverSummary(server("a"))).toBe("");
  });

  it("keeps a summary taken from long instructions to about 100 characters", () => {
    const s = server("a", {
      identity: { capabilities: {}, instructions: "word ".repeat(100) },
    });
    expect(serverSummary(s).length).toBeLessThanOrEqual(100);
    expect(serverSummary(s).endsWith("…")).toBe(true);
  });
});

describe("describeDescription", () => {
  it("lists every tool name of a small catalog, well under the limit", () => {
    const text = describeDescription([memory, fs]);
    expect(text.length).toBeLessThan(DESCRIPTION_LIMIT);
    expect(DESCRIPTION_LIMIT).toBe(2_000);
    expect(text).toContain("describe(");
    expect(text).toContain("memory: create_entities, read_graph");
    expect(text).toContain("filesystem: read_file, write_file");
  });

  it("marks a failed server with its error and a starting one with its status", () => {
    const failed = server("broken", { status: "down", error: "spawn nope ENOENT" });
    const starting = server("slow", { status: "starting" });
    const text = describeDescription([memory, failed, starting]);
    expect(text).toContain("broken [DOWN: spawn nope ENOENT]");
    expect(text).toContain("slow [starting]");
    expect(text).not.toMatch(/memory \[/);
  });

  it("falls back to servers with tool counts for the 117 github tools, under the limit", () => {
    const github = server("github", {
      identity: {
        name: "github-mcp-server",
        capabilities: {},
        instructions: "The GitHub MCP server gives tools for repositories, issues and PRs. More.",
      },
      tools: githubTools,
    });
    const text = describeDescription([github, memory]);
    expect(text.length).toBeLessThan(DESCRIPTION_LIMIT);
    // Each server line carries its summary, cut to about 60 characters.
    const line = text.split("\n").find((l) => l.startsWith("github (117 tools): "));
    expect(line).toBeDefined();
    expect(line).toContain("The GitHub MCP server gives tools for");
    expect(line!.length).toBeLessThanOrEqual("github (117 tools): ".length + 60);
    expect(text).toContain("memory (2 tools): memory-server");
    // The names no longer fit: search or a server listing finds them.
    expect(text).not.toContain("create_pull_request_review");
    expect(text).toContain("describe({query");
    expect(text).toContain('describe("server")');
  });

  it("keeps the failure note in the fallback", () => {
    const github = server("github", { tools: githubTools });
    const failed = server("broken", { status: "down", error: "did not start within 15000 ms" });
    const text = describeDescription([github, failed]);
    expect(text.length).toBeLessThan(DESCRIPTION_LIMIT);
    expect(text).toContain("broken (0 tools) [DOWN: did not start within 15000 ms]");
  });

  it("stays within the limit however many servers there are", () => {
    const many = Array.from({ length: 300 }, (_, i) =>
      server(`server_number_${i}`, {
        description: "A server with a long description. ".repeat(5),
        tools: githubTools.slice(0, 5),
      }),
    );
    const text = describeDescription(many);
    expect(text.length).toBeLessThanOrEqual(DESCRIPTION_LIMIT);
    expect(text).toContain("server_number_0 (5)");
  });
});

describe("renderCatalog", () => {
  it("heads each server with its count and summary, then one line per tool", () => {
    const text = renderCatalog([memory, fs]);
    expect(text).toContain("## memory (2 tools) — memory-server");
    expect(text).toContain("memory.create_entities — Create multiple new entities.");
    expect(text).not.toContain("Use it first.");
    expect(text).toContain("## filesystem (2 tools) — Files under /srv/data");
    expect(text).toContain("filesystem.read_file");
  });

  it("shows a failed server's status and error", () => {
    const failed = server("broken", { status: "down", error: "exit code 1" });
    expect(renderCatalog([failed])).toBe("## broken [DOWN: exit code 1]");
  });

  it("says a status once: `## everything [starting]`, not `(starting) [starting]`", () => {
    expect(renderCatalog([server("everything", { status: "starting" })])).toBe(
      "## everything [starting]",
    );
  });

  it("renders all 117 github tools as refs", () => {
    const text = renderCatalog([server("github", { tools: githubTools })]);
    for (const t of githubTools) expect(text).toContain(`github.${t.name} —`);
  });
});

describe("renderServer", () => {
  it("shows signatures with ? for optional params, annotation tags and first sentences", () => {
    const getCommit = githubTools.find((t) => t.name === "get_commit");
    expect(getCommit).toBeDefined();
    const s = server("github", {
      tools: [
        getCommit!,
        tool("delete_file", {
          description: "Delete a file.",
          inputSchema: {
            type: "object",
            properties: { path: {}, message: {} },
            required: ["path"],
          },
          annotations: { destructiveHint: true },
        }),
      ],
    });
    const text = renderServer(s);
    expect(text.split("\n")[0]).toBe("## github");
    expect(text).toContain(
      "github.get_commit(owner: string, repo: string, sha: string, detail?, page?: number, perPage?: number) [readonly] — Get details for a commit from a GitHub repository",
    );
    expect(text).toContain("github.delete_file(path, message?) [destructive] — Delete a file.");
  });

  it("says a down server's tools are unavailable", () => {
    const text = renderServer(server("broken", { status: "down", error: "spawn ENOENT" }));
    expect(text).toContain("## broken [DOWN: spawn ENOENT]");
    expect(text).toContain("Its tools are unavailable until it is back; mcpx retries it.");
  });

  it("counts resources and templates, and says nothing of them when there are none", () => {
    const withResources = server("docs", {
      resources: [
        { uri: "file:///a", name: "a" },
        { uri: "file:///b", name: "b" },
      ],
      resourceTemplates: [{ uriTemplate: "file:///{path}", name: "any" }],
    });
    expect(renderServer(withResources)).toContain(
      "(2 resources, 1 templates: see the resources tool)",
    );
    expect(renderServer(memory)).not.toContain("resources");
  });
});

describe("renderTool", () => {
  it("includes the full description, the hints a model acts on, and the input schema", () => {
    const getCommit = githubTools.find((t) => t.name === "get_commit")!;
    const input = { format: "typescript" as const, text: "interface In {\nowner: string\n}" };
    const text = renderTool("github", getCommit, input);
    // readOnlyHint true → a tag; idempotentHint false → nothing; the title is not repeated.
    expect(text.split("\n")[0]).toBe("github.get_commit [readonly]");
    expect(text).toContain("Get details for a commit from a GitHub repository");
    // The input's wrapper goes (the heading names the tool): its properties are the arguments.
    expect(text.split("\n").slice(-1)[0]).toBe("owner: string");
    expect(text).not.toContain("interface In");
    expect(text).not.toContain("Returns");
  });

  it("keeps every sentence and line of a long description; labels a JSON fallback", () => {
    const description = "First sentence. Second sentence.\n\nA second paragraph with details.";
    const text = renderTool("s", tool("t", { description, title: "The Tool" }), {
      format: "json",
      text: '{"type":"object"}',
    });
    expect(text.split("\n")[0]).toBe("s.t");
    expect(text).toContain(description);
    expect(text).toContain('Input JSON Schema: {"type":"object"}');
  });

  it("falls back to the title when there is no description", () => {
    const text = renderTool("s", tool("t", { title: "The Tool" }), {
      format: "typescript",
      text: "interface I {\n}",
    });
    expect(text).toContain("The Tool");
  });

  it("adds the output schema when given", () => {
    const text = renderTool(
      "s",
      tool("t", { annotations: { destructiveHint: true, openWorldHint: true } }),
      { format: "typescript", text: "interface I {\n}" },
      { format: "typescript", text: "interface O {\nok: boolean\n}" },
    );
    expect(text.split("\n")[0]).toBe("s.t [destructive]");
    expect(text).toContain("(no arguments)\nReturns {\nok: boolean\n}");
  });
});

describe("first contact", () => {
  it("a search with servers still starting says so instead of a bare 'No tool matches'", () => {
    const text = renderSearch("echo", [], ["everything", "slow"]);
    expect(text).not.toMatch(/^No tool matches "echo"\. Try other words/);
    expect(text).toContain("2 servers still starting (everything, slow)");
    const one = renderSearch("echo", [{ server: memory, tool: memory.tools[0]! }], ["slow"]);
    expect(one).toContain("1 server still starting (slow)");
  });

  it("describe(server) shows each failed optional request as a note, not as down", () => {
    const partial = server("partial", {
      tools: [tool("echo")],
      notes: { "prompts/list": "MCP error -32603: prompt store unavailable" },
    });
    const text = renderServer(partial);
    expect(text).toContain(
      "Note: prompts/list failed (MCP error -32603: prompt store unavailable); treated as empty.",
    );
    expect(text).not.toMatch(/DOWN|down/);
    expect(text).toContain("partial.echo()");
  });
});

describe("tools a client cannot use", () => {
  const NONE = { roots: false, elicitForm: false, elicitUrl: false, sampling: false };
  const everything = server("everything", {
    tools: [tool("echo"), tool("sample"), tool("roots"), tool("both")],
    needs: { sample: ["sampling"], roots: ["roots"], both: ["sampling", "elicitation"] },
  });

  it("are marked for a client that did not declare what they need, and only those", () => {
    const text = renderServer(everything, NONE);
    expect(text).toContain(
      "everything.sample() [needs sampling, which this client did not declare]",
    );
    expect(text).toContain("everything.roots() [needs roots, which this client did not declare]");
    expect(text).toContain(
      "everything.both() [needs sampling and elicitation, which this client did not declare]",
    );
    expect(text).toMatch(/^everything\.echo\(\) — $/m);
    const some = renderServer(everything, { ...NONE, sampling: true, elicitUrl: true });
    expect(some.match(/did not declare/g)).toHaveLength(1);
    expect(some).toContain("everything.roots() [needs roots, which this client did not declare]");
  });

  it("need no roots of the client when the server has configured roots, and no mark when the client is unknown", () => {
    const rooted = { ...everything, config: { ...everything.config, roots: ["file:///srv"] } };
    expect(renderServer(rooted, NONE)).toMatch(/^everything\.roots\(\) — $/m);
    expect(renderServer(everything)).not.toContain("did not declare");
    expect(renderCatalog([everything], NONE)).toContain(
      "everything.sample [needs sampling, which this client did not declare]",
    );
  });
});
