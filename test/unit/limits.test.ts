/**
 * The input limits of src/limits.ts, at their edges: an HTTP body's size and nesting, a
 * meta-tool's arguments' size and nesting, and the names and text the meta-tools take. Each is
 * refused with a message naming the limit, nothing over it reaches an upstream, and what is just
 * under it passes. In-memory upstreams behind a whole proxy; HTTP on a loopback port.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LIMITS } from "../../src/limits.js";
import { nestsDeeper } from "../../src/json.js";
import type { Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { connectClient, memoryProxy } from "../helpers/inmemory.js";
import { INITIALIZE, text } from "../helpers/proxy.js";

/** Every call the upstream received, as the JSON it got. */
const received: string[] = [];

function upstream(): McpServer {
  const s = new McpServer({ name: "up", version: "1" });
  s.registerTool(
    "take",
    { description: "Takes any value.", inputSchema: { value: z.unknown() } },
    (args) => {
      received.push(JSON.stringify(args));
      return { content: [{ type: "text", text: `took ${JSON.stringify(args).length} chars` }] };
    },
  );
  return s;
}

let proxy: Proxy;
let http: HttpHandle;
let session: Awaited<ReturnType<typeof connectClient>>;

beforeAll(async () => {
  proxy = memoryProxy({ up: upstream });
  await proxy.start();
  http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
  session = await connectClient(proxy);
});
afterAll(async () => {
  await session?.close();
  await http?.close();
  await proxy?.close();
});

/** `[[[…]]]` with `levels` arrays, around `inner`. */
function nested(levels: number, inner: unknown = 1): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

async function metaCall(name: string, args: Record<string, unknown>) {
  const r = await session.client.callTool({ name, arguments: args });
  return { isError: r.isError === true, text: text(r) };
}

const JSON_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

async function post(body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(http.url, { method: "POST", headers: JSON_HEADERS, body });
  return { status: res.status, text: await res.text() };
}

describe("nestsDeeper", () => {
  it("counts objects and arrays, not scalars", () => {
    expect(nestsDeeper(1, 0)).toBe(false);
    expect(nestsDeeper({}, 0)).toBe(true);
    expect(nestsDeeper({ a: [1] }, 2)).toBe(false);
    expect(nestsDeeper({ a: [{}] }, 2)).toBe(true);
  });

  it("walks a million levels without overflowing the stack", () => {
    expect(nestsDeeper(nested(1_000_000), 100)).toBe(true);
  });
});

describe("HTTP bodies", () => {
  it(`a body over ${LIMITS.httpBodyBytes} bytes: 413, -32600 naming the limit`, async () => {
    const big = JSON.stringify({
      ...INITIALIZE,
      params: { ...INITIALIZE.params, pad: "x".repeat(LIMITS.httpBodyBytes) },
    });
    const a = await post(big);
    expect(a.status).toBe(413);
    expect(JSON.parse(a.text)).toMatchObject({ error: { code: -32600 } });
    expect(a.text).toContain("at most 4 MB");
  });

  it("a body nested 100,000 levels deep: 400, -32600 naming the limit, and mcpx keeps serving", async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
    const a = await post(deep);
    expect(a.status).toBe(400);
    expect(JSON.parse(a.text)).toMatchObject({ error: { code: -32600 } });
    expect(a.text).toContain(`more than ${LIMITS.messageDepth} levels`);
    const ok = await post(JSON.stringify(INITIALIZE));
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('"serverInfo"');
  });

  it(`a body nested ${LIMITS.messageDepth} levels is taken`, async () => {
    // initialize's params are 2 levels (the message, params), x adds the rest.
    const params = { ...INITIALIZE.params, x: nested(LIMITS.messageDepth - 2) };
    const a = await post(JSON.stringify({ ...INITIALIZE, params }));
    expect(a.status).toBe(200);
  });
});

describe("meta-tool arguments", () => {
  it(`arguments over ${LIMITS.argumentBytes} bytes: isError naming the limit, nothing upstream`, async () => {
    const before = received.length;
    const value = "x".repeat(LIMITS.argumentBytes);
    const r = await metaCall("call", { method: "up.take", arguments: { value } });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^The arguments of call are 1\.0 MB as JSON; mcpx takes at most 1 MB\./);
    expect(received.length).toBe(before);
  });

  it("arguments just under the size limit reach the upstream whole", async () => {
    const value = "y".repeat(LIMITS.argumentBytes - 100);
    const r = await metaCall("call", { method: "up.take", arguments: { value } });
    expect(r.isError).toBe(false);
    expect(received.at(-1)).toBe(JSON.stringify({ value }));
  });

  it(`arguments nested deeper than ${LIMITS.argumentDepth} levels: isError, nothing upstream`, async () => {
    const before = received.length;
    // The meta-tool's own object and `arguments` are two levels; value adds the rest.
    const value = nested(LIMITS.argumentDepth - 1);
    const r = await metaCall("call", { method: "up.take", arguments: { value } });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`more than ${LIMITS.argumentDepth} levels deep`);
    expect(received.length).toBe(before);
    const ok = await metaCall("call", {
      method: "up.take",
      arguments: { value: nested(LIMITS.argumentDepth - 2) },
    });
    expect(ok.isError).toBe(false);
  });

  it("the limits hold for describe and resources too", async () => {
    const deep = await metaCall("describe", { query: "x", extra: nested(LIMITS.argumentDepth) });
    expect(deep.isError).toBe(true);
    expect(deep.text).toContain("The arguments of describe nest");
    const big = await metaCall("resources", { uri: "x", pad: "x".repeat(LIMITS.argumentBytes) });
    expect(big.isError).toBe(true);
    expect(big.text).toContain("The arguments of resources are");
  });
});

describe("names and text", () => {
  const long = (n: number) => "a".repeat(n);

  it.each([
    ["call", "method", { method: long(LIMITS.nameChars + 1) }, '"method" (a server or tool name)'],
    ["call", "tool", { tool: long(LIMITS.nameChars + 1) }, '"tool" (a server or tool name)'],
    ["call", "select", { method: "up.take", select: long(LIMITS.textChars + 1) }, '"select" is'],
    ["describe", "method", { method: long(LIMITS.nameChars + 1) }, '"method" (a server or tool'],
    ["describe", "method[]", { method: ["up", long(LIMITS.nameChars + 1)] }, '"method" (a server'],
    ["describe", "query", { query: long(LIMITS.textChars + 1) }, '"query" is'],
    ["resources", "server", { server: long(LIMITS.nameChars + 1) }, '"server" (a server'],
    ["resources", "uri", { uri: long(LIMITS.textChars + 1) }, '"uri" is'],
  ])("%s with a long %s: isError naming the key and the limit", async (tool, _key, args, says) => {
    const r = await metaCall(tool, args);
    expect(r.isError).toBe(true);
    expect(r.text).toContain(says);
    expect(r.text).toMatch(/takes at most \d+\.$/);
  });

  it(`describe with more than ${LIMITS.describeNames} names: isError saying to split them`, async () => {
    const names = Array.from({ length: LIMITS.describeNames + 1 }, () => "up");
    const r = await metaCall("describe", { method: names });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`at most ${LIMITS.describeNames} names at once`);
    const ok = await metaCall("describe", { method: names.slice(1) });
    expect(ok.isError).toBe(false);
  });

  it("a tool argument named like an alias is not held to the name limit when method is given", async () => {
    const r = await metaCall("call", {
      method: "up.take",
      arguments: { value: 1 },
      name: long(LIMITS.nameChars + 1),
    });
    expect(r.text).not.toContain("a server or tool name");
  });
});
