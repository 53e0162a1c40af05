/** Upstream log messages during a call reach the client at or above the level it set. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, it } from "vitest";
import type { Proxy } from "../../src/proxy.js";
import { connectClient, memoryProxy } from "../helpers/inmemory.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function chatty(): McpServer {
  const server = new McpServer(
    { name: "chatty", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.registerTool("work", { description: "Logs while working." }, async (extra) => {
    for (const level of ["debug", "info", "warning", "error"] as const) {
      await extra.sendNotification({
        method: "notifications/message",
        params: { level, logger: "chatty", data: `${level} line` },
      });
    }
    return { content: [{ type: "text", text: "done" }] };
  });
  return server;
}

it("forwards warning and above by default, everything after logging/setLevel debug", async () => {
  proxy = memoryProxy({ chatty });
  await proxy.start();
  const { client, close } = await connectClient(proxy);
  try {
    const got: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      got.push(n.params.level);
    });
    await client.callTool({ name: "call", arguments: { method: "chatty.work" } });
    expect(got).toEqual(["warning", "error"]);
    got.length = 0;
    await client.setLoggingLevel("debug");
    await client.callTool({ name: "call", arguments: { method: "chatty.work" } });
    expect(got).toEqual(["debug", "info", "warning", "error"]);
  } finally {
    await close();
  }
});
