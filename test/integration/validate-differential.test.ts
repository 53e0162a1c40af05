/**
 * The server wins: each tool of a real server (server-everything) gets its minimal valid call
 * (test/helpers/minimal-call.ts) directly and through mcpx; mcpx refuses it only when the server
 * refuses it too.
 */
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { minimalObject } from "../helpers/minimal-call.js";
import { ROOT, startStdio, text, writeConfig, type Running } from "../helpers/proxy.js";

const EVERYTHING = path.join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
/** Tools that take seconds by default (a 10 s operation): their verdict is not in question. */
const SLOW = /long-running/;

describe("validation: mcpx refuses only what the server refuses", () => {
  let direct: Client;
  let mcpx: Running;

  beforeAll(async () => {
    direct = new Client({ name: "direct", version: "1.0.0" });
    await direct.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [EVERYTHING, "stdio"],
        stderr: "pipe",
      }),
    );
    mcpx = await startStdio(
      writeConfig({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, "stdio"], session: "shared" },
        },
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await direct?.close();
    await mcpx?.close();
  });

  it("gives each tool's minimal valid call the server's verdict", async () => {
    const { tools } = await direct.listTools();
    const differ: string[] = [];
    let compared = 0;
    for (const tool of tools.filter((t) => !SLOW.test(t.name))) {
      const schema = tool.inputSchema as { [key: string]: unknown };
      const args = minimalObject(schema, schema, 0);
      let serverRefused: boolean;
      try {
        const r = await direct.callTool({ name: tool.name, arguments: args });
        serverRefused =
          r.isError === true && /invalid (arguments|params)|validation/i.test(text(r));
      } catch (err) {
        serverRefused = /-32602|invalid (arguments|params)|validation/i.test(String(err));
      }
      const through = await mcpx.client.callTool({
        name: "call",
        arguments: { method: `everything.${tool.name}`, arguments: args },
      });
      const mcpxRefused = text(through).startsWith("Invalid arguments for");
      compared += 1;
      if (mcpxRefused && !serverRefused)
        differ.push(`${tool.name} ${JSON.stringify(args)}: ${text(through).split("\n")[1] ?? ""}`);
    }
    expect(differ).toEqual([]);
    expect(compared).toBeGreaterThan(5);
  }, 120_000);
});
