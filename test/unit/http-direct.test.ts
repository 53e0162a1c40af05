/**
 * The 2025-era hot path (src/server/http-direct.ts): which requests it serves straight on node's
 * response, and that what it answers on the wire is what the SDK's transport answered.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { connect, type AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { DirectAnswers, directRequest, type DirectAnswer } from "../../src/server/http-direct.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { memoryProxy } from "../helpers/inmemory.js";
import { INITIALIZE } from "../helpers/proxy.js";

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
  "mcp-session-id": "sid",
};
const CALL = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "call" } };

/** What directRequest reads of a request: its method and headers. */
function incoming(headers: Record<string, string | undefined>, method = "POST"): IncomingMessage {
  return { method, headers } as unknown as IncomingMessage;
}

describe("directRequest", () => {
  it("takes a session's single, well-formed 2025-era request", () => {
    expect(directRequest(incoming(HEADERS), CALL)).toEqual({ sid: "sid", message: CALL });
    // Without a version header, and with _meta that claims no 2026-07-28 envelope.
    const { "mcp-protocol-version": _, ...noVersion } = HEADERS;
    const progress = { ...CALL, params: { name: "call", _meta: { progressToken: 1 } } };
    expect(directRequest(incoming(noVersion), progress)?.message).toBe(progress);
  });

  it.each([
    ["initialize", HEADERS, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} }],
    ["a batch", HEADERS, [CALL]],
    ["a notification", HEADERS, { jsonrpc: "2.0", method: "notifications/cancelled" }],
    ["an answer", HEADERS, { jsonrpc: "2.0", id: 1, result: {} }],
    ["no session id", { ...HEADERS, "mcp-session-id": undefined }, CALL],
    ["an Accept without SSE", { ...HEADERS, accept: "application/json" }, CALL],
    ["a body that is not JSON", { ...HEADERS, "content-type": "text/plain" }, CALL],
    ["an unsupported version", { ...HEADERS, "mcp-protocol-version": "1999-01-01" }, CALL],
    ["not JSON-RPC 2.0", HEADERS, { ...CALL, jsonrpc: "1.0" }],
    ["an id that is not a string or number", HEADERS, { ...CALL, id: null }],
    [
      "a 2026-07-28 envelope",
      HEADERS,
      {
        ...CALL,
        params: {
          name: "call",
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
        },
      },
    ],
  ])("leaves %s to the general path", (_what, headers, body) => {
    expect(directRequest(incoming(headers), body)).toBeUndefined();
  });

  it("leaves GET and DELETE to the general path", () => {
    expect(directRequest(incoming(HEADERS, "GET"), CALL)).toBeUndefined();
    expect(directRequest(incoming(HEADERS, "DELETE"), CALL)).toBeUndefined();
  });
});

describe("DirectAnswers", () => {
  // A test that times out skips its own cleanup: the next ones must not inherit fake timers.
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds an answer's headers at least the hold and at most twice it, and stops its timer when nothing is held", async () => {
    // The global timers (the endpoint's) are faked; the HTTP server and client run for real.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const answers = new DirectAnswers(10);
    const held: { exchange: DirectAnswer; res: ServerResponse }[] = [];
    let arrived: () => void = () => undefined;
    const server = createServer((req, res) => {
      held.push({ exchange: answers.begin(req, res, held.length, () => undefined).exchange, res });
      arrived();
    });
    try {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as AddressInfo;
      const bodies: Promise<string>[] = [];
      /** A request, resolved once the endpoint began answering it. */
      const send = () =>
        new Promise<void>((resolve, reject) => {
          arrived = resolve;
          const req = httpRequest({ host: "127.0.0.1", port, method: "POST", agent: false });
          bodies.push(
            new Promise<string>((done) =>
              req.once("response", (res) => {
                let text = "";
                res.on("data", (c: Buffer) => (text += c.toString()));
                res.once("end", () => done(text));
              }),
            ),
          );
          req.once("error", reject);
          req.end();
        });
      await send();
      vi.advanceTimersByTime(9);
      await send();
      // The first tick opens the answer that started the timer, held 10 ms; not the one begun
      // 1 ms before it (a tick that opened every held answer opened most of them young under
      // load, and their clients parsed an event stream instead of reading one JSON body).
      vi.advanceTimersByTime(1);
      expect(held.map((h) => h.res.headersSent)).toEqual([true, false]);
      // The next opens it: none waits more than twice the hold.
      vi.advanceTimersByTime(9);
      expect(held.map((h) => h.res.headersSent)).toEqual([true, false]);
      vi.advanceTimersByTime(1);
      expect(held.map((h) => h.res.headersSent)).toEqual([true, true]);
      // Nothing held: the hold timer stopped itself; the keep-alive timer stays while answers are open.
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(30);
      expect(vi.getTimerCount()).toBe(1);
      // A later answer starts it again, and is opened by its first tick.
      await send();
      vi.advanceTimersByTime(9);
      expect(held[2]!.res.headersSent).toBe(false);
      vi.advanceTimersByTime(1);
      expect(held[2]!.res.headersSent).toBe(true);
      for (const [id, { exchange }] of held.entries())
        await exchange.send({ jsonrpc: "2.0", id, result: {} });
      // Every answer was opened: each is an event after the open comment.
      for (const body of await Promise.all(bodies))
        expect(body).toMatch(/^: open\n\nevent: message\n/);
      // Nothing open, nothing held: no timer left running.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      answers.closeAll();
      vi.useRealTimers();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("on the wire", () => {
  let proxy: Proxy;
  let http: HttpHandle;
  /** The same, holding a quick answer's headers up to a minute (the default is 10 ms). */
  let held: HttpHandle;
  /** Ends the `wait` tool's call. */
  let release: () => void = () => undefined;
  beforeAll(async () => {
    proxy = memoryProxy({
      s: () => {
        const server = new McpServer({ name: "s", version: "1" });
        server.registerTool("echo", { inputSchema: { text: z.string() } }, ({ text }) => ({
          content: [{ type: "text", text }],
        }));
        // An upstream that takes a moment: long enough for a client to read what came before.
        server.registerTool("slow", { inputSchema: { text: z.string() } }, async ({ text }) => {
          await new Promise((resolve) => setTimeout(resolve, 30));
          return { content: [{ type: "text", text }] };
        });
        server.registerTool(
          "wait",
          {},
          () =>
            new Promise((resolve) => {
              release = () => resolve({ content: [{ type: "text", text: "done" }] });
            }),
        );
        return server;
      },
    });
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    held = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0, headersHoldMs: 60_000 });
  });
  afterAll(async () => {
    await held?.close();
    await http?.close();
    await proxy?.close();
  });

  /** A new session's id. */
  async function session(url = http.url): Promise<string> {
    const { "mcp-session-id": _, ...headers } = HEADERS;
    const init = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(INITIALIZE),
    });
    await init.text();
    const sid = init.headers.get("mcp-session-id")!;
    expect(sid).toBeTruthy();
    return sid;
  }

  const callOf = (id: string, method: string, args: Record<string, unknown> = {}) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "call", arguments: { method, arguments: args } },
  });

  it("answers a session's quick call as one JSON body: status, headers and the answer in one write", async () => {
    const sid = await session(held.url);
    const body = JSON.stringify(callOf("c1", "s.slow", { text: "hi" }));
    const { port } = new URL(held.url);
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      socket.on("data", (chunk: Buffer) => {
        chunks.push(chunk.toString());
        // The whole body, as its content-length says: the answer is complete.
        const text = chunks.join("");
        const length = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(text)?.[1] ?? NaN);
        const start = text.indexOf("\r\n\r\n") + 4;
        if (start > 3 && Buffer.byteLength(text.slice(start)) >= length) resolve();
      });
      socket.once("error", reject);
    });
    const head = Object.entries({ ...HEADERS, "mcp-session-id": sid })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await ended;
    socket.destroy();
    // One write (one read here, on loopback): before, the headers and an open comment came
    // first, then the answer, then the end, three system calls per call.
    expect(chunks).toHaveLength(1);
    const [response = ""] = chunks;
    expect(response).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // Nothing came before the answer: the answer is the response, as JSON (no event stream for
    // the client to parse).
    expect(response).toMatch(/\r\ncontent-type: application\/json\r\n/i);
    const answer = JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4)) as {
      id?: unknown;
      result?: { content: { text: string }[] };
    };
    expect(answer.id).toBe("c1");
    expect(answer.result?.content[0]?.text).toBe("hi");
    // The session serves the next call.
    expect(held.sessionCount).toBe(1);
  });

  it("sends a long call's headers and an open comment before its answer", async () => {
    const sid = await session();
    const { "mcp-session-id": _, ...headers } = HEADERS;
    const res = await fetch(http.url, {
      method: "POST",
      headers: { ...headers, "mcp-session-id": sid },
      body: JSON.stringify(callOf("c2", "s.wait")),
    });
    // fetch resolved on the headers alone: the call is still running.
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    release();
    const text = await res.text();
    expect(text.startsWith(": open\n\n")).toBe(true);
    const data = /^event: message\ndata: (.*)$/m.exec(text)?.[1];
    const answer = JSON.parse(data ?? "{}") as { id?: unknown; result?: unknown };
    expect(answer).toMatchObject({ id: "c2", result: { content: [{ text: "done" }] } });
  });
});
