/**
 * Upstream log messages during a call reach the client at or above the level it asked for: a
 * 2025 client with logging/setLevel (default warning), a 2026-07-28 one per request in `_meta`
 * (none when it asks for none).
 */
import { LOG_LEVEL_META_KEY } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
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

it("2025 era: forwards warning and above by default, everything after logging/setLevel debug", async () => {
  proxy = memoryProxy({ chatty });
  await proxy.start();
  const { client, close } = await connectClient(proxy, { era: "legacy" });
  try {
    const got: string[] = [];
    client.setNotificationHandler("notifications/message", (n) => {
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

it("2026-07-28 era: forwards nothing unless the request asks, then from the level it names", async () => {
  proxy = memoryProxy({ chatty });
  await proxy.start();
  const { client, close } = await connectClient(proxy, { era: "modern" });
  try {
    expect(client.getProtocolEra()).toBe("modern");
    const got: string[] = [];
    client.setNotificationHandler("notifications/message", (n) => {
      got.push(n.params.level);
    });
    const work = (level?: string) =>
      client.callTool({
        name: "call",
        arguments: { method: "chatty.work" },
        ...(level !== undefined && { _meta: { [LOG_LEVEL_META_KEY]: level } }),
      });
    await work();
    expect(got).toEqual([]);
    await work("info");
    expect(got).toEqual(["info", "warning", "error"]);
    got.length = 0;
    await work("debug");
    expect(got).toEqual(["debug", "info", "warning", "error"]);
  } finally {
    await close();
  }
});
