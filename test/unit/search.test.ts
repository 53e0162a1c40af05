import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/load.js";
import type { ServerState } from "../../src/registry/registry.js";
import { ToolIndex } from "../../src/registry/search.js";
import type { ToolDef } from "../../src/types.js";
import { exampleCatalogs, recordedTools } from "../helpers/catalogs.js";
import {
  evaluateSearch,
  indexed,
  loadNeeds,
  loadSearchEval,
  realServers,
} from "../helpers/search-eval.js";

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
    resultBudget: 8000,
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

describe("search evaluation (bench/search-eval.json)", () => {
  let index: ToolIndex;
  const refs = new Set<string>();
  beforeAll(async () => {
    const catalogs = [
      { server: "github", tools: recordedTools("github-mcp-server") },
      ...(await exampleCatalogs()),
    ];
    for (const c of catalogs) for (const t of c.tools) refs.add(`${c.server}.${t.name}`);
    index = new ToolIndex(indexed(catalogs));
  });

  it("has at least 40 needs, each naming tools that exist", () => {
    const queries = loadSearchEval();
    expect(queries.length).toBeGreaterThanOrEqual(40);
    // A typo in the eval would otherwise read as a ranking miss.
    for (const q of queries) for (const ref of q.expected) expect(refs.has(ref), ref).toBe(true);
  });

  it("ranks a right tool first for at least 70 % of needs and in the top 3 for 90 %", () => {
    const result = evaluateSearch(index, loadSearchEval());
    // Every expected tool was found in the index at all (a typo in the eval would read as a miss).
    expect(result.top1, JSON.stringify(result.misses, null, 1)).toBeGreaterThanOrEqual(0.7);
    expect(result.top3, JSON.stringify(result.misses, null, 1)).toBeGreaterThanOrEqual(0.9);
  });
});

describe("search words", () => {
  it("matches plural, -ing and -ed forms to the tool's words", () => {
    const k8s = new ToolIndex([
      state("k8s", [
        { name: "list_pod", description: "List a pod.", inputSchema: { type: "object" } },
        { name: "scan_image", description: "Scan an image.", inputSchema: { type: "object" } },
      ]),
    ]);
    expect(k8s.search("pods", 1)[0]?.tool).toBe("list_pod");
    expect(k8s.search("scanning", 1)[0]?.tool).toBe("scan_image");
  });

  it("uses the server's description", () => {
    const tools: ToolDef[] = [{ name: "query", description: "Run a query.", inputSchema: {} }];
    const a = {
      ...state("a", tools),
      config: { ...state("a", tools).config, description: "Postgres database" },
    };
    const both = new ToolIndex([state("b", tools), a]);
    expect(both.search("run a postgres query", 1)[0]?.server).toBe("a");
  });

  it("drops filler words from queries but keeps tool names whole", () => {
    const github = new ToolIndex([state("github", corpus)]);
    expect(github.search("who am I logged in as", 1)[0]?.tool).toBe("get_me");
    expect(github.search("what is this", 5)).toEqual([]);
  });
});

describe("search over real servers' catalogs (bench/search-needs.json)", () => {
  const servers = realServers();
  const index = new ToolIndex(servers);
  const refs = new Set(servers.flatMap((s) => s.tools.map((t) => `${s.name}.${t.name}`)));
  const { tune, heldBack } = loadNeeds();

  it("has at least 120 needs over at least 10 servers, each naming tools that exist", () => {
    expect(tune.length + heldBack.length).toBeGreaterThanOrEqual(120);
    expect(heldBack.length).toBe(Math.floor((tune.length + heldBack.length) / 3));
    const used = new Set<string>();
    for (const q of [...tune, ...heldBack]) {
      for (const ref of q.expected) {
        expect(refs.has(ref), ref).toBe(true);
        used.add(ref.slice(0, ref.indexOf(".")));
      }
    }
    expect(servers.length).toBeGreaterThanOrEqual(10);
    expect(used.size).toBe(servers.length);
  });

  it.each([
    ["open a web page", ["playwright.browser_navigate", "chrome-devtools.navigate_page"]],
    ["list pods", ["kubernetes.kubectl_get"]],
    ["delete a pod", ["kubernetes.kubectl_delete"]],
    ["restart a deployment", ["kubernetes.kubectl_rollout"]],
    ["add two numbers", ["everything.get-sum"]],
    ["grep for a string in files", ["desktop-commander.start_search", "filesystem.search_files"]],
  ])("finds what the issue's %j means in the top 3", (query, expected) => {
    const got = index.search(query, 3).map((h) => `${h.server}.${h.tool}`);
    expect(
      got.some((ref) => expected.includes(ref)),
      got.join(", "),
    ).toBe(true);
  });

  it("ranks a right tool first for at least 80 % of needs and in the top 3 for 95 %", () => {
    const result = evaluateSearch(index, tune);
    expect(result.top1, JSON.stringify(result.misses, null, 1)).toBeGreaterThanOrEqual(0.8);
    expect(result.top3, JSON.stringify(result.misses, null, 1)).toBeGreaterThanOrEqual(0.95);
  });

  it("does no more than 2 points worse on the held-back third", () => {
    const tuned = evaluateSearch(index, tune);
    const held = evaluateSearch(index, heldBack);
    // Half a need of slack for floating point: 2 points of 50 needs is one need.
    expect(held.top1).toBeGreaterThanOrEqual(tuned.top1 - 0.02 - 1e-9);
    expect(held.top3).toBeGreaterThanOrEqual(tuned.top3 - 0.02 - 1e-9);
  });
});

describe("search ranking signals", () => {
  const tool = (name: string, description: string): ToolDef => ({
    name,
    description,
    inputSchema: { type: "object" },
  });

  it("prefers the tool whose verb is the one asked for over one that names the object", () => {
    const k8s = new ToolIndex([
      state("k8s", [
        tool("exec_in_pod", "Execute a command in a pod."),
        tool("kubectl_get", "Get or list Kubernetes resources."),
      ]),
    ]);
    expect(k8s.search("list pods", 1)[0]?.tool).toBe("kubectl_get");
  });

  it("boosts the tools of a server the query names", () => {
    const tools = [tool("query", "Query a data source.")];
    const both = new ToolIndex([state("sql", tools), state("notion", tools)]);
    expect(both.search("query the notion tasks", 1)[0]?.server).toBe("notion");
  });

  it("reads only the lead of a long description", () => {
    const long = new ToolIndex([
      state("s", [
        tool("run_thing", `Run a thing. ${"Use carefully. ".repeat(40)} Mentions screenshot.`),
        tool("capture", "Capture a screenshot of the page."),
      ]),
    ]);
    expect(long.search("screenshot", 5).map((h) => h.tool)).toEqual(["capture"]);
  });
});
