/**
 * The real tool catalogs the token-economy tests and benchmarks measure: the recorded tools/list
 * of real servers under test/fixtures/corpus, and the example servers from node_modules, listed
 * live over stdio with the SDK client.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ToolDef } from "../../src/types.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
export const CORPUS_ROOT = path.join(ROOT, "test/fixtures/corpus");

/** One upstream's tools, under the server name a config would give it. */
export interface Catalog {
  server: string;
  tools: ToolDef[];
}

/** Recorded corpora: directory → the short server name used in tool refs and reports. */
export const RECORDED = {
  github: "github-mcp-server",
  playwright: "playwright-mcp",
  "chrome-devtools": "chrome-devtools-mcp",
  "desktop-commander": "desktop-commander",
  kubernetes: "kubernetes",
  notion: "notion-mcp-server",
  firecrawl: "firecrawl-mcp",
} as const;

/** The example servers, run from node_modules. */
export const EXAMPLES = ["everything", "filesystem", "memory"] as const;

/** Every tool of a recorded corpus, in file-name order (LICENSE and README are skipped). */
export function recordedTools(dir: string): ToolDef[] {
  const full = path.join(CORPUS_ROOT, dir);
  return readdirSync(full)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(full, f), "utf8")) as ToolDef);
}

export const CATALOGS_ROOT = path.join(ROOT, "test/fixtures/catalogs");

/** A real server's catalog as test/fixtures/catalogs/record.ts recorded it. */
export interface RecordedCatalog extends Catalog {
  package: string;
  version: string;
  license: string;
  serverInfo: { name?: string; title?: string; version?: string };
  instructions: string | null;
}

/** The recorded catalogs of the real servers in node_modules, by file name. */
export function realCatalogs(): RecordedCatalog[] {
  return readdirSync(CATALOGS_ROOT)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(CATALOGS_ROOT, f), "utf8")) as RecordedCatalog);
}

/** Every recorded corpus. */
export function recordedCatalogs(): Catalog[] {
  return Object.entries(RECORDED).map(([server, dir]) => ({ server, tools: recordedTools(dir) }));
}

/**
 * The example servers' tools, listed from the real processes (started in parallel, closed before
 * this returns, scratch folders removed).
 */
export async function exampleCatalogs(): Promise<Catalog[]> {
  const scratch = mkdtempSync(path.join(tmpdir(), "mcpx-catalogs-"));
  const entry = (pkg: string) =>
    path.join(ROOT, "node_modules/@modelcontextprotocol", pkg, "dist/index.js");
  const specs: Record<(typeof EXAMPLES)[number], { args: string[]; env?: Record<string, string> }> =
    {
      everything: { args: [entry("server-everything"), "stdio"] },
      filesystem: { args: [entry("server-filesystem"), scratch] },
      memory: {
        args: [entry("server-memory")],
        env: { MEMORY_FILE_PATH: path.join(scratch, "memory.jsonl") },
      },
    };
  try {
    return await Promise.all(
      EXAMPLES.map(async (server) => {
        const client = new Client({ name: "mcpx-catalogs", version: "1.0.0" });
        await client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: specs[server].args,
            env: { ...getDefaultEnvironment(), ...specs[server].env },
            stderr: "ignore",
          }),
        );
        try {
          const tools: ToolDef[] = [];
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor === undefined ? {} : { cursor });
            tools.push(...(page.tools as ToolDef[]));
            cursor = page.nextCursor;
          } while (cursor !== undefined);
          return { server, tools };
        } finally {
          await client.close();
        }
      }),
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
