/**
 * A 2025-era session's life on node's own response (src/server/http-direct-session.ts): which
 * exchanges the direct path takes (everything else goes to the general path, as before), and
 * what a client reads of each on the wire.
 */
import type { IncomingMessage } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { directExchange } from "../../src/server/http-direct-session.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { memoryProxy } from "../helpers/inmemory.js";
import { eventually, INITIALIZE } from "../helpers/proxy.js";

const OPEN = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

function incoming(headers: Record<string, string | undefined>, method = "POST"): IncomingMessage {
  return { method, headers } as unknown as IncomingMessage;
}

describe("directExchange", () => {
  const sid = { ...OPEN, "mcp-session-id": "sid", "mcp-protocol-version": "2025-06-18" };

  it("takes an initialize the SDK's transport would serve", () => {
    expect(directExchange(incoming(OPEN), INITIALIZE)).toEqual({
      kind: "initialize",
      message: INITIALIZE,
    });
    // 406 and 415 are the general path's to answer.
    expect(directExchange(incoming({ ...OPEN, accept: "application/json" }), INITIALIZE)).toBe(
      undefined,
    );
    expect(
      directExchange(incoming({ ...OPEN, "content-type": "text/plain" }), INITIALIZE),
    ).toBeUndefined();
    // A batch, or an initialize that does not parse as one.
    expect(directExchange(incoming(OPEN), [INITIALIZE])).toBeUndefined();
    expect(
      directExchange(incoming(OPEN), { ...INITIALIZE, params: { protocolVersion: 1 } }),
    ).toBeUndefined();
    // With a session id it opens a new session all the same: the general path does that.
    expect(directExchange(incoming(sid), INITIALIZE)).toBeUndefined();
  });

  it("takes a session's notifications and answers, not its requests (http-direct.ts) nor other eras", () => {
    expect(directExchange(incoming(sid), INITIALIZED)).toEqual({
      kind: "notify",
      sid: "sid",
      message: INITIALIZED,
    });
    const answer = { jsonrpc: "2.0", id: "x", result: {} };
    expect(directExchange(incoming(sid), answer)?.kind).toBe("notify");
    expect(
      directExchange(incoming(sid), { jsonrpc: "2.0", id: 1, method: "tools/list" }),
    ).toBeUndefined();
    // The 2026-07-28 era, by header or by `_meta` envelope, goes to its endpoint.
    expect(
      directExchange(incoming({ ...sid, "mcp-protocol-version": "2026-07-28" }), INITIALIZED),
    ).toBeUndefined();
    const enveloped = {
      ...INITIALIZED,
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
    };
    expect(directExchange(incoming(sid), enveloped)).toBeUndefined();
    expect(directExchange(incoming(sid), { not: "json-rpc" })).toBeUndefined();
  });

  it("takes a session's GET stream and DELETE; leaves what the SDK refuses to the general path", () => {
    expect(directExchange(incoming(sid, "GET"), undefined)).toEqual({ kind: "stream", sid: "sid" });
    expect(directExchange(incoming(sid, "DELETE"), undefined)).toEqual({
      kind: "delete",
      sid: "sid",
    });
    expect(
      directExchange(incoming({ ...sid, accept: "application/json" }, "GET"), undefined),
    ).toBeUndefined();
    expect(
      directExchange(incoming({ ...sid, "mcp-protocol-version": "1999-01-01" }, "GET"), undefined),
    ).toBeUndefined();
    expect(directExchange(incoming(OPEN, "GET"), undefined)).toBeUndefined();
    expect(directExchange(incoming(OPEN, "DELETE"), undefined)).toBeUndefined();
    expect(directExchange(incoming(sid, "PUT"), undefined)).toBeUndefined();
  });
});

describe("a session on the wire", () => {
  let proxy: Proxy;
  let http: HttpHandle;
  let upstream: McpServer | undefined;
  beforeAll(async () => {
    proxy = memoryProxy({
      s: () => {
        const server = new McpServer({ name: "s", version: "1" });
        server.registerTool("echo", { inputSchema: { text: z.string() } }, ({ text }) => ({
          content: [{ type: "text", text }],
        }));
        upstream = server;
        return server;
      },
    });
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await http?.close();
    await proxy?.close();
  });

  const post = (body: unknown, sid?: string) =>
    fetch(http.url, {
      method: "POST",
      headers: { ...OPEN, ...(sid !== undefined && { "mcp-session-id": sid }) },
      body: JSON.stringify(body),
    });

  it("opens, notifies, streams and ends a session", async () => {
    const init = await post(INITIALIZE);
    expect(init.status).toBe(200);
    const sid = init.headers.get("mcp-session-id");
    expect(sid).toBeTruthy();
    // The answer is the whole response, as JSON (the general path answered it as one SSE event).
    expect(init.headers.get("content-type")).toBe("application/json");
    const answer = (await init.json()) as {
      id: number;
      result: { protocolVersion: string; serverInfo: { name: string } };
    };
    expect(answer.id).toBe(1);
    expect(answer.result.protocolVersion).toBe("2025-06-18");
    expect(answer.result.serverInfo.name).toBe("mcpx");

    const notified = await post(INITIALIZED, sid!);
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe("");

    const stream = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid! },
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let read = "";
    const until = async (text: string) => {
      while (!read.includes(text)) {
        const chunk = await reader.read();
        if (chunk.done) return false;
        read += chunk.value;
      }
      return true;
    };
    expect(await until(": open\n\n")).toBe(true);

    // One stream per session: the second is refused as the general path refuses it.
    const second = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid! },
    });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(
      /only one SSE stream/,
    );

    // What changes upstream reaches the stream as the SDK writes it.
    upstream!.registerTool("added", {}, () => ({ content: [] }));
    expect(await until('"method":"notifications/tools/list_changed"')).toBe(true);
    expect(read).toMatch(
      /event: message\ndata: \{"jsonrpc":"2\.0","method":"notifications\/tools\/list_changed"/,
    );

    // DELETE ends the session and its stream; its id is refused from then on.
    const deleted = await fetch(http.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sid! },
    });
    expect(deleted.status).toBe(200);
    expect(await until("never sent")).toBe(false);
    const after = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, sid!);
    expect(after.status).toBe(404);
    expect(http.sessionCount).toBe(0);
  });

  /** A new session of `handle`, its id. */
  async function opened(handle: HttpHandle = http): Promise<string> {
    const init = await fetch(handle.url, {
      method: "POST",
      headers: OPEN,
      body: JSON.stringify(INITIALIZE),
    });
    await init.text();
    return init.headers.get("mcp-session-id")!;
  }

  const getStream = (sid: string, signal?: AbortSignal, url = http.url) =>
    fetch(url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid },
      ...(signal && { signal }),
    });

  it("frees the session's one stream when its client goes, for the client's next GET", async () => {
    const sid = await opened();
    const abort = new AbortController();
    const first = await getStream(sid, abort.signal);
    expect(first.status).toBe(200);
    abort.abort();
    // The server hears the client go; then the session takes a stream again.
    await eventually(
      async () => {
        const next = await getStream(sid);
        if (next.status === 409) {
          await next.body?.cancel();
          return false;
        }
        expect(next.status).toBe(200);
        await next.body?.cancel();
        return true;
      },
      5_000,
      "the stream to be freed",
    );
  });

  it("ends an open stream cleanly when mcpx shuts down, not by cutting the connection", async () => {
    const own = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    const sid = await opened(own);
    const stream = await getStream(sid, undefined, own.url);
    const reader = stream.body!.getReader();
    await reader.read(); // ": open"
    const closing = own.close();
    // A cut connection would fail this read ("terminated"): the stream ends as an SSE stream does.
    let done = false;
    while (!done) done = (await reader.read()).done;
    await closing;
  });

  it("leaves a bad GET to the general path, which answers it as before", async () => {
    const init = await post(INITIALIZE);
    const sid = init.headers.get("mcp-session-id")!;
    await init.text();
    const refused = await fetch(http.url, {
      headers: { accept: "application/json", "mcp-session-id": sid },
    });
    expect(refused.status).toBe(406);
    const unknown = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": "no-such-session" },
    });
    expect(unknown.status).toBe(404);
  });
});
