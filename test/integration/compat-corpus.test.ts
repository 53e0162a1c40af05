/**
 * The compatibility corpus: 13 real MCP servers from npm (ten third-party ones and the three
 * reference servers), run offline. Each comes up through mcpx (the built dist, over stdio) with
 * the same tools as when connected directly with the SDK client (and each tool's declaration
 * through describe has the properties of its direct inputSchema, optional where it is), answers
 * one real call, and the
 * stateful ones keep their state across two calls with the config's default session policy.
 *
 * Offline settings (test/helpers/real-servers.ts): every server's HOME is a scratch folder;
 * desktop-commander `DESKTOP_COMMANDER_DISABLE_TELEMETRY=1`; chrome-devtools
 * `--no-usage-statistics`, `CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS=1`; context7
 * `OTEL_SDK_DISABLED=true`. Browsers: Debian chromium (`MCPX_CHROMIUM` overrides), headless, no
 * sandbox, on a page served from 127.0.0.1. Kubernetes reads a kubeconfig naming a cluster that
 * does not exist and lists its contexts with the `kubectl` on PATH (Debian `kubernetes-client`).
 *
 * Listed only (no call works offline): context7 (every tool asks context7.com), notion (every
 * tool asks api.notion.com), github (every tool asks api.github.com).
 *
 * `MCPX_COMPAT_SESSION` sets a session policy on every server (to check the stateful assertions
 * against a given policy); unset, the config names none, as a user's would.
 */
import { existsSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  descendants,
  eventually,
  isAlive,
  startStdio,
  tempDir,
  text,
  untilStarted,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";
import { CHROMIUM, REAL_SERVERS } from "../helpers/real-servers.js";

/**
 * Where mcpx's declaration of `tool` (describe("server.tool"): TypeScript argument lines, or the
 * JSON Schema for schemas it cannot type) differs from the server's own `inputSchema`: a
 * top-level property missing, or optional where it should be required or the other way round.
 * Required with a default is optional (mcpx says so on purpose: the server fills it in).
 */
function schemaDifferences(tool: string, schema: unknown, declaration: string): string[] {
  const s = schema as { properties?: Record<string, { default?: unknown }>; required?: string[] };
  const required = new Set(s.required ?? []);
  const json = /^Input JSON Schema: (.*)$/m.exec(declaration)?.[1];
  const shown = json === undefined ? undefined : (JSON.parse(json) as typeof s);
  const out: string[] = [];
  for (const [prop, def] of Object.entries(s.properties ?? {})) {
    const optional =
      !required.has(prop) || (def !== null && typeof def === "object" && "default" in def);
    if (shown) {
      if (!shown.properties || !(prop in shown.properties)) out.push(`${tool}.${prop}: missing`);
      else if ((shown.required ?? []).includes(prop) === optional)
        out.push(`${tool}.${prop}: ${optional ? "required" : "optional"} through mcpx`);
      continue;
    }
    // Top-level members start their line: `name: type`, `name?: type`, `"odd-name"?: type`.
    const key = `(?:${escape(prop)}|"${escape(prop)}")`;
    const marks = [...declaration.matchAll(new RegExp(`^${key}(\\?)?: `, "gm"))].map(
      (m) => m[1] === "?",
    );
    if (marks.length === 0) out.push(`${tool}.${prop}: missing`);
    else if (!marks.includes(optional))
      out.push(`${tool}.${prop}: ${optional ? "required" : "optional"} through mcpx`);
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The reference servers of modelcontextprotocol/servers; every other one is third-party. */
const REFERENCE = new Set(["everything", "filesystem", "memory"]);
const THIRD_PARTY = REAL_SERVERS.filter((s) => !REFERENCE.has(s.name));
const PAGE_TITLE = "mcpx compatibility page";

describe.skipIf(!existsSync(CHROMIUM))("compatibility corpus: real servers through mcpx", () => {
  let scratch: string;
  let site: Server;
  let url: string;
  let mcpx: Running;
  let pids: number[] = [];

  beforeAll(async () => {
    scratch = tempDir("mcpx-compat-");
    writeFileSync(path.join(scratch, "notes.txt"), "alpha\nneedle in a haystack\nomega\n");
    site = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><title>${PAGE_TITLE}</title><h1>Hello from mcpx</h1>`);
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    const session = process.env.MCPX_COMPAT_SESSION;
    const mcpServers = Object.fromEntries(
      REAL_SERVERS.map((s) => {
        const { args, env } = s.launch(scratch);
        return [
          s.name,
          {
            command: process.execPath,
            args,
            env: { PATH: process.env.PATH ?? "", ...env },
            timeout: 60_000,
            ...(session !== undefined && { session }),
          },
        ];
      }),
    );
    // Thirteen servers and two browsers start at once on a small CI machine.
    mcpx = await startStdio(writeConfig({ mcpServers, discoveryTimeout: 90_000 }), [], {
      waitReady: false,
    });
    await untilStarted(mcpx.client, 120_000);
  }, 180_000);

  afterAll(async () => {
    pids = mcpx === undefined ? [] : [mcpx.pid, ...descendants(mcpx.pid)];
    await mcpx?.close();
    await new Promise<void>((resolve) =>
      site === undefined ? resolve() : site.close(() => resolve()),
    );
    // Every upstream and every browser they started died with mcpx.
    await eventually(() => pids.every((pid) => !isAlive(pid)), 20_000);
  }, 60_000);

  async function call(server: string, tool: string, args: Record<string, unknown> = {}) {
    const result = await mcpx.client.callTool({
      name: "call",
      arguments: { method: `${server}.${tool}`, arguments: args },
    });
    const body = text(result);
    const log = mcpx
      .stderr()
      .split("\n")
      .filter((l) => l.includes(server))
      .slice(-5)
      .join("\n");
    expect(result.isError ?? false, `${server}.${tool}: ${body}\n${log}`).toBe(false);
    return body;
  }

  it("uses at least ten third-party servers", () => {
    expect(THIRD_PARTY.length).toBeGreaterThanOrEqual(10);
  });

  it("describes every tool through mcpx that each server lists directly", async () => {
    // A few at a time: mcpx's own thirteen are running too.
    const direct: (readonly [string, { name: string; inputSchema: unknown }[]])[] = [];
    for (let i = 0; i < REAL_SERVERS.length; i += 4) {
      direct.push(
        ...(await Promise.all(
          REAL_SERVERS.slice(i, i + 4).map(async (s) => {
            const dir = tempDir(`mcpx-compat-direct-${s.name}-`);
            const { args, env } = s.launch(dir);
            const client = new Client({ name: "mcpx-compat-direct", version: "1.0.0" });
            await client.connect(
              new StdioClientTransport({
                command: process.execPath,
                args,
                env: { ...getDefaultEnvironment(), ...env },
                stderr: "ignore",
              }),
            );
            try {
              const { tools } = await client.listTools();
              return [s.name, tools] as const;
            } finally {
              await client.close();
            }
          }),
        )),
      );
    }
    // What mcpx describes of each server names every tool the server lists directly; all servers
    // at once, so a failure names every one that differs.
    const missing: Record<string, string[]> = {};
    // Each tool's declaration (describe("server.tool")) against its direct inputSchema: every
    // top-level property, optional exactly where the direct schema does not require it (or gives
    // a default: required + default is optional through mcpx, on purpose).
    const differs: Record<string, string[]> = {};
    for (const [name, tools] of direct) {
      expect(tools.length, name).toBeGreaterThan(0);
      const described = text(
        await mcpx.client.callTool({ name: "describe", arguments: { method: name } }),
      );
      missing[name] = tools.map((t) => t.name).filter((t) => !described.includes(t));
      differs[name] = [];
      for (const tool of tools) {
        const declaration = text(
          await mcpx.client.callTool({
            name: "describe",
            arguments: { method: `${name}.${tool.name}` },
          }),
        );
        differs[name].push(...schemaDifferences(tool.name, tool.inputSchema, declaration));
      }
    }
    expect(missing).toEqual(Object.fromEntries(direct.map(([name]) => [name, []])));
    expect(differs).toEqual(Object.fromEntries(direct.map(([name]) => [name, []])));
  }, 300_000);

  it("answers a real call from each server that works offline", async () => {
    await Promise.all([
      (async () => {
        const sum = await call("everything", "get-sum", { a: 2, b: 3 });
        expect(sum).toContain("5");
      })(),
      (async () => {
        const file = path.join(scratch, "written.txt");
        await call("filesystem", "write_file", { path: file, content: "written by mcpx" });
        expect(await call("filesystem", "read_text_file", { path: file })).toContain(
          "written by mcpx",
        );
      })(),
      (async () => {
        await call("memory", "create_entities", {
          entities: [{ name: "Alice", entityType: "person", observations: ["works at Acme"] }],
        });
        expect(await call("memory", "read_graph")).toContain("works at Acme");
      })(),
      (async () => {
        await call("sqlite", "query", { sql: "CREATE TABLE IF NOT EXISTS pets (name TEXT)" });
        expect(await call("sqlite", "list_tables")).toContain("pets");
      })(),
    ]);
  }, 120_000);

  // database declares `resources` but answers no resources/templates/list, and kubernetes failed
  // an optional list request the same way in a run: they come up only where mcpx treats an
  // optional list request that fails as an empty list (i22a's change).
  it("answers a real call from the database and kubernetes servers", async () => {
    expect(await call("kubernetes", "kubectl_context", { operation: "list" })).toContain(
      "offline-context",
    );
    await call("database", "create_table", {
      query: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)",
    });
    await call("database", "write_query", { query: "INSERT INTO invoices (total) VALUES (42.5)" });
    expect(await call("database", "read_query", { query: "SELECT total FROM invoices" })).toContain(
      "42.5",
    );
  }, 60_000);

  // These keep state in the upstream session: the second call sees what the first did. The
  // config names no session policy, so this holds only where the default keeps a caller on one
  // session (the `client` policy).
  it("keeps a stateful server's state across two calls by default", async () => {
    await Promise.all([
      (async () => {
        await call("playwright", "browser_navigate", { url });
        expect(await call("playwright", "browser_snapshot")).toContain("Hello from mcpx");
      })(),
      (async () => {
        await call("chrome-devtools", "new_page", { url });
        expect(await call("chrome-devtools", "list_pages")).toContain(url);
      })(),
      (async () => {
        const started = await call("desktop-commander", "start_search", {
          path: scratch,
          pattern: "needle",
          searchType: "content",
        });
        const id = /session[^\w]*([\w-]+)/i.exec(started)?.[1];
        expect(id, started).toBeDefined();
        // The search runs in the background; each call returns what it found so far.
        let found = "";
        for (let i = 0; i < 100 && !found.includes("notes.txt"); i++) {
          found = await call("desktop-commander", "get_more_search_results", { sessionId: id });
        }
        expect(found).toContain("notes.txt");
      })(),
      (async () => {
        const thought = (n: number) => ({
          thought: `step ${n}`,
          thoughtNumber: n,
          totalThoughts: 2,
          nextThoughtNeeded: n < 2,
        });
        await call("sequential-thinking", "sequentialthinking", thought(1));
        const second = JSON.parse(
          await call("sequential-thinking", "sequentialthinking", thought(2)),
        ) as { thoughtHistoryLength: number };
        expect(second.thoughtHistoryLength).toBe(2);
      })(),
    ]);
  }, 120_000);
});
