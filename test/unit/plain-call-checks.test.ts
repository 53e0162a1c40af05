/**
 * A plain tools/call skips the SDK's zod checks of its request and result when they certainly
 * pass (src/server/plain-dispatch.ts `checkedCall`): held here to the SDK's own tools/call handler
 * on the same results, generated (fast-check) and hand-picked: the same answer, byte for byte on
 * the wire (key order included), or the same error. The handler's parts the shortcut stands in
 * for are held as written.
 */
import { createHash } from "node:crypto";
import {
  ProtocolError,
  Server,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
} from "@modelcontextprotocol/server";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkedCall, type ToolCallHandler } from "../../src/server/plain-dispatch.js";

const RELATED = "io.modelcontextprotocol/related-task";

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;
type Internals = {
  _negotiatedProtocolVersion?: string;
  _requestHandlers: Map<string, Handler>;
  _wrapHandler: (method: string, handler: Handler) => Handler;
};

/**
 * A 2025-era SDK server whose tools/call answers what `answer` gives; the SDK's handler, and the
 * shortcut over it, each counting how often the SDK's checks ran.
 */
function setup() {
  let next: unknown;
  const server = new Server({ name: "x", version: "1" }, { capabilities: { tools: {} } });
  const sdk = server as unknown as Internals;
  sdk._negotiatedProtocolVersion = "2025-06-18";
  const seen: unknown[] = [];
  const own: ToolCallHandler = (request) => {
    seen.push(request);
    return Promise.resolve(next);
  };
  server.setRequestHandler("tools/call", own as never);
  const handler = sdk._requestHandlers.get("tools/call")!;
  let viaHandler = 0;
  let wrapped = 0;
  const wrap = sdk._wrapHandler.bind(server);
  sdk._wrapHandler = (method, h) => {
    wrapped++;
    return wrap(method, h);
  };
  const fast = checkedCall(
    sdk as never,
    (request, ctx) => {
      viaHandler++;
      return handler(request, ctx);
    },
    own,
  );
  const ctx = { mcpReq: { requestState: () => undefined } } as unknown as ServerContext;
  /** Each way's answer (its JSON) or error (its message) to `params` answered with `result`. */
  let runs = 0;
  const both = async (params: Record<string, unknown>, result: unknown) => {
    runs++;
    const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params } as JSONRPCRequest;
    const settle = (p: Promise<Result>) =>
      p.then(
        (r) => ({ json: JSON.stringify(r) }),
        (e: unknown) => ({
          error: e instanceof ProtocolError ? `${e.code} ${e.message}` : String(e),
        }),
      );
    next = result;
    const sdkWay = await settle(handler(request, ctx));
    next = result;
    const fastWay = await settle(fast(request, ctx));
    return { sdkWay, fastWay };
  };
  return { both, seen, runs: () => runs, counts: () => ({ viaHandler, wrapped }) };
}

const CALL = { name: "call", arguments: { method: "s.t", arguments: { a: [1, { b: null }] } } };

describe("the shortcut past the SDK's tools/call checks", () => {
  it("answers a plain request and result as the SDK does, without its checks", async () => {
    const t = setup();
    const results = [
      { content: [{ type: "text", text: "hi" }] },
      { content: [], isError: true },
      // The schema's key order, whatever the result's own.
      {
        isError: false,
        structuredContent: { n: 2, m: { x: [] } },
        content: [{ type: "text", text: "" }],
        _meta: { "mcpx/normalized": ["x"] },
      },
    ];
    for (const result of results) {
      const { sdkWay, fastWay } = await t.both(
        { ...CALL, _meta: { progressToken: 7, other: { y: 1 } } },
        result,
      );
      expect(fastWay).toEqual(sdkWay);
      expect("json" in fastWay).toBe(true);
    }
    expect(t.counts()).toEqual({ viaHandler: 0, wrapped: 0 });
    // mcpx's handler got the request as the SDK's parse returns it.
    expect(t.seen.at(-1)).toEqual(t.seen.at(-2));
    expect(t.seen.at(-1)).toEqual({
      method: "tools/call",
      params: { ...CALL, _meta: { progressToken: 7, other: { y: 1 } } },
    });
  });

  it("checks as the SDK does what it cannot be sure of", async () => {
    const t = setup();
    const image = { type: "image", data: "aGk=", mimeType: "image/png" };
    const unusual: [Record<string, unknown>, unknown][] = [
      // Results: a block of another kind, a text block with more keys, a key the schema drops or
      // checks, a malformed one.
      [CALL, { content: [image] }],
      [CALL, { content: [{ type: "text", text: "a", annotations: { priority: 1 } }] }],
      [CALL, { content: [{ text: "a", type: "text" }] }],
      [CALL, { content: [{ type: "text", text: "a", junk: 1 }], extra: true }],
      [CALL, { content: [], _meta: { progressToken: 1.5 } }],
      [CALL, { content: [{ type: "text", text: 5 }] }],
      [CALL, { content: "x" }],
      [CALL, {}],
      [CALL, { content: [], isError: "yes" }],
      // Not from JSON: built in the process.
      [CALL, { content: [], structuredContent: new Map([["a", 1]]) }],
    ];
    for (const [params, result] of unusual) {
      const { sdkWay, fastWay } = await t.both(params, result);
      expect(fastWay).toEqual(sdkWay);
    }
    expect(t.counts()).toEqual({ viaHandler: 0, wrapped: unusual.length });
    const requests: Record<string, unknown>[] = [
      { name: 5 },
      { name: "call", arguments: [1] },
      { name: "call", arguments: new Map([["a", 1]]) },
      { name: "call", _meta: { progressToken: 1.5 } },
      { name: "call", _meta: { "io.modelcontextprotocol/related-task": { taskId: 1 } } },
      JSON.parse('{"name":"call","arguments":{"__proto__":{"x":1}}}') as Record<string, unknown>,
    ];
    for (const params of requests) {
      const { sdkWay, fastWay } = await t.both(params, { content: [] });
      expect(fastWay).toEqual(sdkWay);
    }
    expect(t.counts().viaHandler).toBe(requests.length);
  });

  it("answers any result as the SDK does (generated)", async () => {
    const t = setup();
    const json = fc.jsonValue({ maxDepth: 2 });
    const text = fc.record({ type: fc.constant("text"), text: fc.string() });
    const block = fc.oneof(
      { arbitrary: text, weight: 4 },
      fc.record({ type: fc.constantFrom("text", "image"), text: json }, { requiredKeys: [] }),
      fc.dictionary(fc.constantFrom("type", "text", "junk", "_meta", "annotations"), json),
    );
    // Mostly what a result is, each part now and then something else.
    const mostly = <T, U>(usual: fc.Arbitrary<T>, other: fc.Arbitrary<U>) =>
      fc.oneof({ arbitrary: usual, weight: 6 }, { arbitrary: other, weight: 1 });
    const result = fc
      .tuple(
        fc.record(
          {
            content: mostly(fc.array(block, { maxLength: 3 }), json),
            isError: mostly(fc.boolean(), json),
            structuredContent: mostly(fc.dictionary(fc.string(), json), json),
            _meta: mostly(
              fc.dictionary(
                fc.constantFrom("mcpx/x", "a", "b", "c", "__proto__", "progressToken", RELATED),
                json,
              ),
              json,
            ),
          },
          { requiredKeys: ["content"] },
        ),
        mostly(fc.constant(null), json),
      )
      .map(([r, extra]) => (extra === null ? r : { ...r, extra }));
    await fc.assert(
      fc.asyncProperty(result, async (r) => {
        const { sdkWay, fastWay } = await t.both(CALL, r);
        expect(fastWay).toEqual(sdkWay);
      }),
      { numRuns: 1_000 },
    );
    // Both ways were taken, many times: the shortcut, and the SDK's checks of the unusual.
    const { wrapped } = t.counts();
    expect(wrapped).toBeGreaterThan(100);
    expect(t.runs() - wrapped).toBeGreaterThan(100);
  });

  it("answers any request as the SDK does (generated)", async () => {
    const t = setup();
    const json = fc.jsonValue({ maxDepth: 2 });
    const mostly = <T, U>(usual: fc.Arbitrary<T>, other: fc.Arbitrary<U>) =>
      fc.oneof({ arbitrary: usual, weight: 6 }, { arbitrary: other, weight: 1 });
    const params = fc.record(
      {
        name: mostly(fc.string(), json),
        arguments: mostly(fc.dictionary(fc.string(), json), json),
        _meta: mostly(
          fc.dictionary(
            fc.constantFrom("a", "b", "progressToken", RELATED, "__proto__"),
            fc.oneof(json, fc.integer(), fc.double(), fc.record({ taskId: json })),
          ),
          json,
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(params, async (p) => {
        const { sdkWay, fastWay } = await t.both(p, { content: [] });
        expect(fastWay).toEqual(sdkWay);
      }),
      { numRuns: 500 },
    );
    // Both ways were taken, many times.
    const { viaHandler } = t.counts();
    expect(viaHandler).toBeGreaterThan(50);
    expect(t.runs() - viaHandler).toBeGreaterThan(50);
  });

  it("stands in for the SDK's checks as this SDK writes them (an upgrade that changes them fails here)", () => {
    // checkedCall skips what these do for the requests and results it is sure of. When the SDK
    // changes them, read the change, mirror it in plain-dispatch.ts, then update the digests.
    const owner = (name: string) => {
      let proto: object | null = Server.prototype;
      while (proto && !Object.hasOwn(proto, name))
        proto = Object.getPrototypeOf(proto) as object | null;
      return String((proto as Record<string, unknown>)[name]).replace(/\s+/g, " ");
    };
    const digest = (name: string) =>
      createHash("sha256").update(owner(name)).digest("hex").slice(0, 16);
    expect({
      _wrapHandler: digest("_wrapHandler"),
      setRequestHandler: digest("setRequestHandler"),
      _invokeInputRequiredCapableHandler: digest("_invokeInputRequiredCapableHandler"),
    }).toEqual({
      _wrapHandler: "c4b9c3a1bdf65fee",
      setRequestHandler: "c1ead3427552ce91",
      _invokeInputRequiredCapableHandler: "bf77edaa05a300be",
    });
  });
});
