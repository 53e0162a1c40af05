/**
 * A 2025-era connection's plain tools/call skips the SDK's `_onrequest` (src/server/plain-dispatch.ts,
 * `ToolCalls`) and is answered on the wire exactly as `_onrequest` answers it: each request here
 * runs twice on one connection, once as it is (the fast way) and once with a params key mcpx
 * ignores (which `_onrequest` takes), and the two answers must match but for their ids. The SDK's
 * `_onrequest` is counted, so the fast way is shown to be taken, and held as written.
 */
import { createHash } from "node:crypto";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  InMemoryTransport as ServerPair,
  Server,
  type JSONRPCMessage,
  type MessageExtraInfo,
} from "@modelcontextprotocol/server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { BUILT_FUNCTIONS, lazyContext, type BaseContext } from "../../src/server/plain-dispatch.js";
import { serveHttp } from "../../src/server/http.js";
import { serveConnection } from "../../src/server/stdio.js";
import { newClient } from "../helpers/clients.js";
import { within } from "../helpers/eventually.js";
import { memoryProxy } from "../helpers/inmemory.js";

type Json = Record<string, unknown>;

/** The prototype that defines `_onrequest` (the SDK's Protocol). */
function onrequestOwner(): { _onrequest: (m: JSONRPCMessage, extra?: unknown) => void } {
  let proto: object | null = Server.prototype;
  while (proto && !Object.hasOwn(proto, "_onrequest"))
    proto = Object.getPrototypeOf(proto) as object | null;
  if (!proto) throw new Error("the SDK has no _onrequest");
  return proto as never;
}

let proxy: Proxy;
/** The `wait` tool's calls: each ends when its signal aborts. */
const waits: { aborted: Promise<void> }[] = [];
let onWait: (() => void) | undefined;
/** Resolves when the next `wait` call reaches the upstream. */
const nextWait = () =>
  within(new Promise<void>((resolve) => (onWait = resolve)), 5_000, "the wait tool's call");

beforeAll(async () => {
  proxy = memoryProxy({
    s: () => {
      const server = new McpServer({ name: "s", version: "1" });
      server.registerTool("echo", { inputSchema: { text: z.string() } }, ({ text }) => ({
        content: [{ type: "text", text }],
      }));
      server.registerTool("steps", {}, async (extra) => {
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          for (const progress of [1, 2]) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress, total: 2 },
            });
          }
        }
        return { content: [{ type: "text", text: "stepped" }], structuredContent: { n: 2 } };
      });
      server.registerTool("wait", {}, (extra) => {
        let resolve!: () => void;
        waits.push({ aborted: new Promise<void>((r) => (resolve = r)) });
        onWait?.();
        return new Promise((_, reject) => {
          extra.signal.addEventListener("abort", () => {
            resolve();
            reject(new Error("cancelled"));
          });
        });
      });
      return server;
    },
  });
  await proxy.start();
});
afterAll(async () => {
  await proxy.close();
});

/** Counts `_onrequest`'s tools/calls until `restore()`. */
function countSdk() {
  const owner = onrequestOwner();
  const original = owner._onrequest;
  let viaSdk = 0;
  owner._onrequest = function (this: unknown, m: JSONRPCMessage, extra?: unknown) {
    if ("method" in m && m.method === "tools/call") viaSdk++;
    return original.call(this, m, extra);
  };
  return { count: () => viaSdk, restore: () => void (owner._onrequest = original) };
}

/** A raw 2025-era connection, served as stdio is, counting `_onrequest`'s tools/calls. */
async function connection() {
  const counter = countSdk();
  const [clientSide, serverSide] = ServerPair.createLinkedPair();
  const served = serveConnection(proxy.context, serverSide);
  const seen: JSONRPCMessage[] = [];
  const waiters = new Map<unknown, (m: JSONRPCMessage) => void>();
  clientSide.onmessage = (m) => {
    seen.push(m);
    if ("id" in m && !("method" in m)) waiters.get(m.id)?.(m);
  };
  await clientSide.start();
  let next = 1;
  const request = (method: string, params: Json) => {
    const id = next++;
    const answer = new Promise<JSONRPCMessage>((resolve) => waiters.set(id, resolve));
    void clientSide.send({ jsonrpc: "2.0", id, method, params });
    // Timed only when awaited: a cancelled request's answer never comes, and nothing waits for it.
    return {
      id,
      get answer() {
        return within(answer, 5_000, `the answer to ${method} ${id}`);
      },
    };
  };
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  }).answer;
  await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // Connected: the dispatch (and what it found of the SDK) is set; the counter stays on.
  return {
    request,
    seen,
    send: (m: JSONRPCMessage) => clientSide.send(m),
    viaSdk: counter.count,
    close: async () => {
      counter.restore();
      await clientSide.close();
      await served.close();
    },
  };
}

type Conn = Awaited<ReturnType<typeof connection>>;

/** One request's answer, and the notifications related to it, without its id or token. */
async function answered(conn: Conn, params: Json) {
  const { id, answer } = conn.request("tools/call", params);
  const { id: _id, ...rest } = (await answer) as Json;
  const token = (params._meta as Json | undefined)?.progressToken;
  const progress = conn.seen
    .filter((m) => "method" in m && m.method === "notifications/progress")
    .map((m) => (m as { params: Json }).params)
    .filter((p) => token !== undefined && p.progressToken === token)
    .map(({ progressToken: _t, ...p }) => p);
  return { id, answer: rest, progress };
}

const CASES: Record<string, (k: string) => Json> = {
  "a call's result": () => ({
    name: "call",
    arguments: { method: "s.echo", arguments: { text: "hi" } },
  }),
  "a result with structured content, after progress": (k) => ({
    name: "call",
    arguments: { method: "s.steps" },
    _meta: { progressToken: `p-${k}` },
  }),
  "a failing call (isError)": () => ({ name: "call", arguments: { method: "nope.x" } }),
  "describe's answer": () => ({ name: "describe", arguments: {} }),
  "an unknown tool (-32602)": () => ({ name: "nope", arguments: {} }),
  "params the SDK refuses": () => ({ name: 5, arguments: "x" }),
};

describe("a 2025-era connection's plain tools/call", () => {
  let conn: Conn;
  beforeAll(async () => {
    conn = await connection();
  });
  afterAll(async () => {
    await conn.close();
  });

  it.each(Object.keys(CASES))("answers %s as the SDK's _onrequest does", async (name) => {
    const before = conn.viaSdk();
    const fast = await answered(conn, CASES[name]!("fast"));
    expect(conn.viaSdk()).toBe(before);
    // A key mcpx ignores: the request is not one ToolCalls takes.
    const sdk = await answered(conn, { ...CASES[name]!("sdk"), ignored: true });
    expect(conn.viaSdk()).toBe(before + 1);
    expect(fast.answer).toEqual(sdk.answer);
    expect(fast.progress).toEqual(sdk.progress);
    if (name.includes("progress")) expect(fast.progress).toHaveLength(2);
  });

  it("leaves to the SDK what it would lift or answer otherwise", async () => {
    const before = conn.viaSdk();
    const echo = { name: "call", arguments: { method: "s.echo", arguments: { text: "x" } } };
    await conn.request("tools/call", {
      ...echo,
      _meta: { "io.modelcontextprotocol/logLevel": "info" },
    }).answer;
    await conn.request("tools/call", { ...echo, task: { ttl: 60_000 } }).answer;
    expect(conn.viaSdk()).toBe(before + 2);
  });

  it("stops a call the client cancels, and answers nothing for it, as the SDK does", async () => {
    const before = waits.length;
    const started = nextWait();
    const { id } = conn.request("tools/call", { name: "call", arguments: { method: "s.wait" } });
    await started;
    await conn.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "changed my mind" },
    });
    await within(waits[before]!.aborted, 5_000, "the upstream call's cancellation");
    // A later call's answer comes, and none ever came for the cancelled one.
    await conn.request("tools/call", CASES["a call's result"]!("x")).answer;
    expect(conn.seen.some((m) => "id" in m && m.id === id && !("method" in m))).toBe(false);
  });

  it("stops its calls when the connection closes, as the SDK does", async () => {
    const other = await connection();
    const before = waits.length;
    const started = nextWait();
    other.request("tools/call", { name: "call", arguments: { method: "s.wait" } });
    await started;
    await other.close();
    await within(waits[before]!.aborted, 5_000, "the upstream call's cancellation");
  });

  it("stands in for the SDK's _onrequest as this SDK writes it (an upgrade that changes it fails here)", () => {
    // plain-dispatch.ts ToolCalls does what _onrequest does for the requests it takes. When the
    // SDK changes _onrequest, read the change, mirror it there, then update this digest.
    const source = String(onrequestOwner()._onrequest).replace(/\s+/g, " ");
    expect(createHash("sha256").update(source).digest("hex").slice(0, 16)).toBe("02f3e5544c509138");
  });

  it("answers a 2025-era HTTP session's call the same way, past _onrequest too", async () => {
    const counter = countSdk();
    const http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    const client = newClient("legacy");
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      const call = (extra: Json) =>
        client.callTool({
          name: "call",
          arguments: { method: "s.steps" },
          _meta: { progressToken: "t" },
          ...extra,
        });
      const fast = await call({});
      expect(counter.count()).toBe(0);
      const sdk = await call({ ignored: true });
      expect(counter.count()).toBe(1);
      expect(fast).toEqual(sdk);
      expect(fast.structuredContent).toEqual({ n: 2 });
    } finally {
      counter.restore();
      await client.close();
      await http.close();
    }
  });

  const EXTRAS: Record<string, MessageExtraInfo | undefined> = {
    "no extra (stdio)": undefined,
    "an in-memory extra": { authInfo: undefined },
    "an HTTP request's extra": {
      authInfo: { token: "", clientId: "c", scopes: [] },
      request: new Request("http://127.0.0.1/mcp", { headers: { traceparent: "00-x" } }),
      closeSSEStream: () => undefined,
    },
  };

  it.each(Object.keys(EXTRAS))(
    "builds the context the SDK's buildContext builds, given %s",
    async (name) => {
      const extra = EXTRAS[name];
      const server = new Server({ name: "x", version: "1" }, { capabilities: { logging: {} } });
      const build = (base: BaseContext) =>
        (
          server as unknown as {
            buildContext(b: BaseContext, e?: MessageExtraInfo): ReturnType<typeof lazyContext>;
          }
        ).buildContext(base, extra);
      const sent: unknown[] = [];
      const base: BaseContext = {
        sessionId: undefined,
        mcpReq: {
          id: 1,
          method: "tools/call",
          signal: new AbortController().signal,
          notify: (n: unknown) => {
            sent.push(n);
            return Promise.resolve();
          },
        },
        // As _onrequest makes it.
        http: extra?.authInfo ? { authInfo: extra.authInfo } : undefined,
      };
      let builds = 0;
      const ctx = lazyContext((b) => (builds++, build(b)), extra, base);
      const sdk = build(base);
      // The same keys and HTTP info, and nothing built until a handler needs it.
      expect(Object.keys(ctx.mcpReq).sort()).toEqual(Object.keys(sdk.mcpReq).sort());
      expect(Object.keys(ctx).sort()).toEqual(Object.keys(sdk).sort());
      expect(ctx.http).toEqual(sdk.http);
      expect(ctx.http === undefined).toBe(name !== "an HTTP request's extra");
      expect(builds).toBe(0);
      for (const fn of BUILT_FUNCTIONS) expect(typeof ctx.mcpReq[fn]).toBe("function");
      // The SDK's own log, through the built context.
      await ctx.mcpReq.log("error", "boom", "t");
      await sdk.mcpReq.log("error", "boom", "t");
      expect(builds).toBe(1);
      expect(sent).toHaveLength(2);
      expect(sent[0]).toEqual(sent[1]);
    },
  );
});
