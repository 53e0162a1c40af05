/**
 * A request the client cancels is stopped upstream, and its HTTP answer stream is ended, not
 * left open until the session ends: 2025 clients cancel with notifications/cancelled (possibly
 * on another POST), 2026-07-28 ones by closing the request.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, it } from "vitest";
import type { Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { ERAS, newClient } from "../helpers/clients.js";
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

/** An upstream whose `wait` tool answers only when cancelled; `started` counts its calls. */
function waitingUpstream(events: { started: number; aborted: number }) {
  return () => {
    const server = new McpServer({ name: "s", version: "1" });
    server.registerTool("wait", { description: "waits until cancelled" }, async (extra) => {
      events.started += 1;
      await new Promise<void>((resolve) =>
        extra.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
      events.aborted += 1;
      return { content: [{ type: "text", text: "stopped" }] };
    });
    server.registerTool("quick", { description: "answers at once" }, () => ({
      content: [{ type: "text", text: "done" }],
    }));
    return server;
  };
}

async function openSession(url: string): Promise<(body: unknown) => Promise<Response>> {
  const init = await rawInitialize(url, {});
  const session = init.headers["mcp-session-id"] as string;
  const post = (body: unknown) =>
    fetch(url, {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": session },
      body: JSON.stringify(body),
    });
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  return post;
}

/** Everything the stream carries until it ends; rejects when it is still open at the deadline. */
async function untilEnd(res: Response, ms: number): Promise<string> {
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void reader.cancel();
  }, ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw new Error("stream still open at the deadline");
  return text;
}

it("ends the answer stream of each cancelled call, sends no result, and keeps the session", async () => {
  const events = { started: 0, aborted: 0 };
  proxy = memoryProxy({ s: waitingUpstream(events) });
  await proxy.start();
  http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
  const post = await openSession(http.url);

  for (let id = 10; id < 30; id++) {
    const started = events.started;
    const call = await post({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "call", arguments: { method: "s.wait" } },
    });
    expect(call.status).toBe(200);
    await expect.poll(() => events.started, { timeout: 5_000, interval: 10 }).toBe(started + 1);
    const cancel = await post({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "user pressed stop" },
    });
    expect(cancel.status).toBe(202);
    let ended = true;
    const text = await untilEnd(call, 5_000).catch(() => {
      ended = false;
      return "";
    });
    expect(ended, `the stream of cancelled call ${id} is still open`).toBe(true);
    expect(text).not.toContain(`"id":${id}`);
  }
  // The cancellation reached the upstream, and the session goes on.
  await expect.poll(() => events.aborted, { timeout: 5_000, interval: 10 }).toBe(20);
  const after = await post({
    jsonrpc: "2.0",
    id: 99,
    method: "tools/call",
    params: { name: "call", arguments: { method: "s.quick" } },
  });
  expect(await untilEnd(after, 5_000)).toContain("done");
});

it.each(ERAS)(
  "a %s client's abort stops the call upstream, and the client goes on",
  async (era) => {
    const events = { started: 0, aborted: 0 };
    proxy = memoryProxy({ s: waitingUpstream(events) });
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    const client = newClient(era);
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    try {
      for (let i = 1; i <= 3; i++) {
        const stop = new AbortController();
        const call = client.callTool(
          { name: "call", arguments: { method: "s.wait" } },
          { signal: stop.signal },
        );
        await expect.poll(() => events.started, { timeout: 5_000, interval: 10 }).toBe(i);
        stop.abort("user pressed stop");
        await expect(call).rejects.toThrow();
        await expect.poll(() => events.aborted, { timeout: 5_000, interval: 10 }).toBe(i);
      }
      const after = await client.callTool({ name: "call", arguments: { method: "s.quick" } });
      expect(after.content).toEqual([{ type: "text", text: "done" }]);
    } finally {
      await client.close();
    }
  },
);
