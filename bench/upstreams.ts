/**
 * The real upstreams the benchmarks run against, and direct SDK clients to them (the "every tool
 * exposed directly" baseline). Each upstream is a real process: the npm reference servers and the
 * replay fixture serving the recorded github-mcp-server corpus.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CLIENT_CAPABILITIES } from "../src/upstream/session.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";

export const ROOT = path.resolve(import.meta.dirname, "..");
const REPLAY = path.join(ROOT, "test/fixtures/upstreams/replay.mjs");

/** How to start one upstream: the same shape as a stdio entry of an mcpx config. */
export interface StdioSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** `node node_modules/<pkg>/dist/index.js ...args`: offline, no npx. */
export function npmServer(pkg: string, args: string[] = [], env: Record<string, string> = {}) {
  const entry = path.join(ROOT, "node_modules", pkg, "dist/index.js");
  return { command: process.execPath, args: [entry, ...args], env } satisfies StdioSpec;
}

export function replayServer(env: Record<string, string> = {}): StdioSpec {
  return { command: process.execPath, args: [REPLAY], env };
}

/** Scratch space for the upstreams: a filesystem root, a memory file, an empty replay dir. */
export interface Workspace {
  dir: string;
  /** Root handed to server-filesystem; holds a small source tree. */
  files: string;
  memoryFile: string;
  /** A directory with no recorded tools: with REPLAY_EXTRA=1 the replay serves only uniform_rows. */
  emptyReplayDir: string;
  /** What `files` holds, for the report. */
  tree: { files: number; dirs: number };
  remove(): void;
}

export function createWorkspace(): Workspace {
  // realpath: server-filesystem compares resolved paths (/tmp may be a symlink on some systems).
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), "mcpx-bench-")));
  const files = path.join(dir, "files");
  const emptyReplayDir = path.join(dir, "replay-empty");
  mkdirSync(emptyReplayDir);
  const tree = writeSourceTree(files);
  return {
    dir,
    files,
    memoryFile: path.join(dir, "memory.jsonl"),
    emptyReplayDir,
    tree,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A deterministic project-like tree: top-level files, 4 packages with src and test, docs. */
function writeSourceTree(root: string): { files: number; dirs: number } {
  const dirs = new Set<string>();
  let files = 0;
  const put = (rel: string) => {
    const file = path.join(root, rel);
    for (let d = path.dirname(rel); d !== "."; d = path.dirname(d)) dirs.add(d);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `// ${rel}\n`);
    files++;
  };
  for (const top of ["README.md", "package.json", "tsconfig.json", ".gitignore", "LICENSE"])
    put(top);
  for (const pkg of ["core", "cli", "server", "utils"]) {
    put(`packages/${pkg}/package.json`);
    put(`packages/${pkg}/README.md`);
    for (const mod of ["index", "config", "errors", "types"]) {
      put(`packages/${pkg}/src/${mod}.ts`);
      if (mod !== "types") put(`packages/${pkg}/test/${mod}.test.ts`);
    }
  }
  put("docs/getting-started.md");
  put("docs/architecture.md");
  put("docs/images/diagram.svg");
  put(".github/workflows/ci.yml");
  return { files, dirs: dirs.size };
}

/** A direct session with one upstream, as a client exposing all its tools would hold. */
export interface DirectClient {
  name: string;
  client: Client;
  close(): Promise<void>;
}

export async function connectDirect(name: string, spec: StdioSpec): Promise<DirectClient> {
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: { ...getDefaultEnvironment(), ...spec.env },
    stderr: "ignore",
  });
  // Declares what mcpx declares upstream: some servers (server-everything) list more tools to a
  // client with roots, elicitation and sampling, and both arms must count the same catalog.
  const client = new Client(
    { name: "mcpx-bench-direct", version: "1.0.0" },
    { capabilities: CLIENT_CAPABILITIES },
  );
  await client.connect(transport);
  return { name, client, close: () => client.close() };
}

/** Every tool of a session, walking pages. */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** The text a model reads from a tool result: its text blocks, joined. */
export function resultText(result: unknown): string {
  const content = (result as CallToolResult).content ?? [];
  return content
    .filter((c): c is Extract<typeof c, { type: "text" }> => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

/** Call a tool and return its text; a tool error is a benchmark failure, not a data point. */
export async function callText(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const text = resultText(result);
  if (result.isError) throw new Error(`${name} failed: ${text}`);
  return text;
}
