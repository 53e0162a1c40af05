/**
 * A large real catalog behind the proxy: the 117 GitHub MCP server tools (replayed) plus
 * server-everything, in-process proxy, real upstream processes, the SDK client in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { connectClient, quietLogger } from "../helpers/inmemory.js";
import { fixtureServer, npmServer, text } from "../helpers/proxy.js";
import type { Client } from "@modelcontextprotocol/client";

let proxy: Proxy;
let client: Client;
let closeClient: () => Promise<void>;

beforeAll(async () => {
  const config = parseConfig(
    {
      mcpServers: {
        github: fixtureServer("replay.mjs", { REPLAY_EXTRA: "1", PAGE_SIZE: "40" }),
        everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
      },
    },
    "/test/mcpx.json",
    {},
  );
  proxy = createProxy(config, { logger: quietLogger() });
  await proxy.start();
  ({ client, close: closeClient } = await connectClient(proxy));
});

afterAll(async () => {
  await closeClient?.();
  await proxy?.close();
});

const describeTool = async (args: Record<string, unknown>) =>
  client.callTool({ name: "describe", arguments: args });

describe("a large catalog", () => {
  it("walks every page of a paginated tools/list", () => {
    expect(proxy.context.registry.server("github")?.tools).toHaveLength(118);
  });

  it("keeps the describe description under 2,000 characters, pointing at search", async () => {
    const { tools } = await client.listTools();
    const description = tools.find((t) => t.name === "describe")?.description ?? "";
    expect(description.length).toBeLessThan(2000);
    expect(description).toContain("describe({query");
    expect(description).toMatch(/github \(118 tools\)/);
    expect(description).not.toContain("create_pull_request");
  });

  it("finds tools by what they do", async () => {
    const out = text(await describeTool({ query: "create a pull request" }));
    const first = out.split("\n")[1] ?? "";
    expect(first).toMatch(/^github\.create_pull_request\(.*\btitle\b/);
  });

  it("answers a query and a method together", async () => {
    const out = text(await describeTool({ query: "echo", method: "everything.echo" }));
    expect(out).toContain("everything.echo(message: string)");
    expect(out).toMatch(/^everything.echo \[readonly\]$/m);
  });
});

describe("result compression", () => {
  it("re-encodes a uniform JSON array as TOON, keeping structuredContent", async () => {
    const result = await client.callTool({
      name: "call",
      arguments: { method: "github.uniform_rows", arguments: { count: 20 } },
    });
    const out = text(result);
    const structured = result.structuredContent as { rows: unknown[] };
    expect(structured.rows).toHaveLength(20);
    // TOON's tabular form: a header naming the fields once, then one line per row.
    expect(out).toMatch(/\[20\]\{id,name,state,created_at,score\}:/);
    expect(out.length).toBeLessThan(JSON.stringify(structured.rows).length);
  });

  it("passes non-JSON text untouched", async () => {
    const result = await client.callTool({
      name: "call",
      arguments: { method: "everything.echo", arguments: { message: "plain words" } },
    });
    expect(text(result)).toBe("Echo: plain words");
  });
});
