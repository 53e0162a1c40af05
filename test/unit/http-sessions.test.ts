/** HTTP sessions a client abandons without DELETE are closed once idle; live streams keep theirs. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, it } from "vitest";
import type { Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { memoryProxy } from "../helpers/inmemory.js";
import { rawInitialize } from "../helpers/proxy.js";

let proxy: Proxy | undefined;
let http: HttpHandle | undefined;
afterEach(async () => {
  await http?.close();
  await proxy?.close();
});

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

async function listTools(url: string, session: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...HEADERS, "mcp-session-id": session },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  });
  await res.body?.cancel();
  return res.status;
}

it("closes a session idle past sessionIdleMs, but not one with an open stream", async () => {
  proxy = memoryProxy({ s: () => new McpServer({ name: "s", version: "1" }) });
  await proxy.start();
  http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0, sessionIdleMs: 300 });
  const open = async () => {
    const init = await rawInitialize(http!.url, {});
    const id = init.headers["mcp-session-id"] as string;
    await fetch(http!.url, {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": id },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    return id;
  };
  const abandoned = await open();
  const streaming = await open();
  const stream = await fetch(http.url, {
    method: "GET",
    headers: { ...HEADERS, accept: "text/event-stream", "mcp-session-id": streaming },
  });
  expect(stream.status).toBe(200);
  expect(await listTools(http.url, abandoned)).toBe(200);
  expect(http.sessionCount).toBe(2);
  // Watch the count, not the session (a request is activity). The sweep that closes the
  // abandoned session would close the other too, were it idle.
  await expect.poll(() => http!.sessionCount, { timeout: 5_000, interval: 50 }).toBe(1);
  expect(await listTools(http.url, abandoned)).toBe(404);
  expect(await listTools(http.url, streaming)).toBe(200);
  await stream.body?.cancel();
});
