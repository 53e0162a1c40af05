/**
 * A 2025-era upstream's tools/call past the SDK client's request funnel
 * (src/upstream/plain-call.ts) answers exactly as the SDK's own `request` does: the same request
 * on the wire (but its id), the same progress, the same result or error, the same cancellation
 * and the same failure when the connection closes. Each case runs both ways on one real SDK
 * client, against a peer scripted message by message; the real path (mcpx over stdio to real
 * servers) is every integration test's.
 */
import {
  Client,
  InMemoryTransport,
  type JSONRPCMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { ResultSchema } from "@modelcontextprotocol/core";
import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { plainCalls, type PlainCalls } from "../../src/upstream/plain-call.js";
import type { Progress } from "../../src/upstream/types.js";

type Json = Record<string, unknown>;
/**
 * What the peer answers a tools/call with id `id`: messages it sends, in order; those after
 * LATER in the next turn of the event loop, once the client handled the ones before.
 */
type Script = (id: number | string) => (JSONRPCMessage | typeof LATER)[];
const LATER = "later";

interface Rig {
  client: Client;
  plain: PlainCalls;
  /** The peer's end: every message the client sent. */
  seen: JSONRPCMessage[];
  /** How the peer answers the next tools/call (by default, not at all). */
  script: { next?: Script };
  peer: Transport;
}

const rigs: Rig[] = [];
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.client.close()));
});

async function rig(): Promise<Rig> {
  const [clientSide, peer] = InMemoryTransport.createLinkedPair();
  const seen: JSONRPCMessage[] = [];
  const script: Rig["script"] = {};
  peer.onmessage = (message) => {
    seen.push(message);
    if (!("method" in message) || !("id" in message)) return;
    const answers: (JSONRPCMessage | typeof LATER)[] =
      message.method === "initialize"
        ? [
            {
              jsonrpc: "2.0",
              id: message.id,
              result: {
                protocolVersion: (message.params as Json).protocolVersion,
                capabilities: { tools: {} },
                serverInfo: { name: "peer", version: "1.0.0" },
              },
            },
          ]
        : (script.next?.(message.id) ?? []);
    const later = answers.indexOf(LATER);
    const now = later === -1 ? answers : answers.slice(0, later);
    for (const a of now) void peer.send(a as JSONRPCMessage);
    if (later !== -1) {
      setImmediate(() => {
        for (const a of answers.slice(later + 1)) void peer.send(a as JSONRPCMessage);
      });
    }
  };
  await peer.start();
  const client = new Client({ name: "mcpx-test", version: "1.0.0" });
  await client.connect(clientSide);
  expect(client.getProtocolEra()).not.toBe("modern");
  const plain = plainCalls(client, clientSide);
  if (!plain) throw new Error("the SDK client lacks what plain-call.ts reads");
  const r = { client, plain, seen, script, peer };
  rigs.push(r);
  return r;
}

interface Outcome {
  ok: boolean;
  value?: unknown;
  error?: { name: string; code: unknown; message: string; data: unknown };
  progress: Progress[];
}

/** One call the SDK's way (`sdk`) or the plain way, settled. */
async function outcome(
  r: Rig,
  way: "sdk" | "plain",
  params: Json,
  signal = new AbortController().signal,
): Promise<Outcome> {
  const progress: Progress[] = [];
  const onProgress = (p: Progress) => void progress.push(p);
  const pending =
    way === "sdk"
      ? r.client.request({ method: "tools/call", params } as never, ResultSchema, {
          timeout: 2_147_483_647,
          signal,
          onprogress: onProgress,
        })
      : r.plain.call(params, { signal, onProgress });
  try {
    return { ok: true, value: await pending, progress };
  } catch (err) {
    const e = err as Error & { code?: unknown; data?: unknown };
    return {
      ok: false,
      error: { name: e.constructor.name, code: e.code, message: e.message, data: e.data },
      progress,
    };
  }
}

/** The tools/call requests the peer saw, without their ids. */
function calls(r: Rig): Json[] {
  return r.seen
    .filter((m) => "method" in m && m.method === "tools/call")
    .map((m) => {
      const { id, params, ...rest } = m as Json & { params: Json & { _meta: Json } };
      // The progress token is the request's id, each its own.
      expect(params._meta.progressToken).toBe(id);
      return { ...rest, params: { ...params, _meta: { ...params._meta, progressToken: "id" } } };
    });
}

const toolCallIds = (r: Rig): unknown[] =>
  r.seen
    .filter((m) => "method" in m && m.method === "tools/call")
    .map((m) => (m as { id: unknown }).id);

const PARAMS = { name: "echo", arguments: { message: "hi" }, _meta: { traceparent: "00-x" } };

const ANSWERS: Record<string, Script> = {
  "a plain result": (id) => [
    { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "hi" }] } },
  ],
  "a result with a resultType": (id) => [
    { jsonrpc: "2.0", id, result: { resultType: "complete", content: [], isError: false } },
  ],
  "a result with _meta": (id) => [
    { jsonrpc: "2.0", id, result: { content: [], _meta: { "x/y": 1 } } },
  ],
  "a result whose _meta names a server badly": (id) => [
    {
      jsonrpc: "2.0",
      id,
      result: { content: [], _meta: { "io.modelcontextprotocol/serverInfo": 5, keep: true } },
    } as unknown as JSONRPCMessage,
  ],
  "a result with a __proto__ key": (id) => [
    JSON.parse(
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"__proto__":{"a":1}}}`,
    ) as JSONRPCMessage,
  ],
  "an error with data": (id) => [
    { jsonrpc: "2.0", id, error: { code: -32602, message: "bad", data: { why: "x" } } },
  ],
  "an internal error": (id) => [{ jsonrpc: "2.0", id, error: { code: -32603, message: "oops" } }],
  "progress, then a result": (id) => [
    {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: id, progress: 1, total: 2, message: "half" },
    },
    {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: id, progress: 2 },
    },
    // The SDK delivers progress a microtask late: an answer in the same turn would drop it.
    LATER,
    { jsonrpc: "2.0", id, result: { content: [] } },
  ],
  "malformed progress, then a result": (id) => [
    {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: id, progress: "much" },
    },
    LATER,
    { jsonrpc: "2.0", id, result: { content: [] } },
  ],
};

describe("a plain tools/call to a 2025-era upstream", () => {
  it.each(Object.keys(ANSWERS))("answers %s as the SDK's request does", async (name) => {
    const r = await rig();
    r.script.next = ANSWERS[name];
    const sdk = await outcome(r, "sdk", PARAMS);
    const plain = await outcome(r, "plain", PARAMS);
    expect(plain).toEqual(sdk);
    // Each case is what it says (errors fail, progress arrives where it is well formed).
    expect(sdk.ok).toBe(!name.includes("error"));
    expect(sdk.progress).toHaveLength(name.startsWith("progress") ? 2 : 0);
    const [viaSdk, viaPlain] = calls(r);
    expect(viaPlain).toEqual(viaSdk);
  });

  it("takes the SDK's next id, so the two never share one", async () => {
    const r = await rig();
    r.script.next = ANSWERS["a plain result"];
    await outcome(r, "sdk", PARAMS);
    await outcome(r, "plain", PARAMS);
    await outcome(r, "sdk", PARAMS);
    const ids = toolCallIds(r);
    expect(new Set(ids).size).toBe(3);
    expect(ids).toEqual([...(ids as number[])].sort((a, b) => a - b));
  });

  it("is cancelled as the SDK cancels: the same notification, the same error", async () => {
    const r = await rig();
    for (const way of ["sdk", "plain"] as const) {
      const controller = new AbortController();
      r.script.next = () => {
        queueMicrotask(() => controller.abort("the caller left"));
        return [];
      };
      const done = outcome(r, way, PARAMS, controller.signal);
      expect((await done).error).toMatchObject({ message: "the caller left" });
    }
    const cancels = r.seen.filter((m) => "method" in m && m.method === "notifications/cancelled");
    const ids = toolCallIds(r);
    expect(cancels.map((m) => (m as { params: Json }).params)).toEqual(
      ids.map((requestId) => ({ requestId, reason: "the caller left" })),
    );
    // An answer after the cancellation changes nothing.
    r.script.next = ANSWERS["a plain result"];
    expect((await outcome(r, "plain", PARAMS)).ok).toBe(true);
  });

  it("refuses at once with a signal already aborted, as the SDK does", async () => {
    const r = await rig();
    const gone = AbortSignal.abort("gone");
    const sdk = await outcome(r, "sdk", PARAMS, gone);
    const plain = await outcome(r, "plain", PARAMS, gone);
    expect(plain).toEqual(sdk);
    expect(calls(r)).toEqual([]);
  });

  it("fails every call waiting when the connection closes, as the SDK fails its own", async () => {
    const r = await rig();
    const sdk = outcome(r, "sdk", PARAMS);
    const plain = outcome(r, "plain", PARAMS);
    await r.peer.close();
    const [a, b] = await Promise.all([sdk, plain]);
    expect(a.error?.message).toMatch(/connection closed/i);
    expect(b).toEqual(a);
  });

  it("is not used where the SDK lacks what it reads", () => {
    const [t] = InMemoryTransport.createLinkedPair();
    expect(plainCalls({} as Client, t)).toBeUndefined();
  });

  it("leaves no abort listener behind when the send fails", async () => {
    const failing = {
      start: () => Promise.resolve(),
      close: () => Promise.resolve(),
      send: () => Promise.reject(new Error("pipe closed")),
    } as Transport;
    const sdk = { _requestMessageId: 0, _progressHandlers: new Map() };
    const plain = plainCalls(sdk as unknown as Client, failing)!;
    const controller = new AbortController();
    await expect(
      plain.call(PARAMS, { signal: controller.signal, onProgress: () => {} }),
    ).rejects.toThrow("pipe closed");
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(sdk._progressHandlers.size).toBe(0);
  });
});
