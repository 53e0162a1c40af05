/**
 * mcpx's SDK server hands a plain request straight to the SDK's request handling
 * (src/server/plain-dispatch.ts, from Downstream.connect), skipping the SDK's dispatch, which tells a
 * message's kind by trying its zod schemas in turn (a request failing two of them first). That
 * is sound only where lines.ts `plainKind` names the kind the SDK's type guards find: fast-check
 * draws messages near the schemas' edges (test/helpers/jsonrpc-arbitrary.ts), and the dispatch
 * is watched on a real call.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  Server,
} from "@modelcontextprotocol/server";
import { InMemoryTransport } from "@modelcontextprotocol/client";
import {
  JSONRPCErrorResponseSchema,
  JSONRPCResultResponseSchema,
} from "@modelcontextprotocol/core";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { plainKind } from "../../src/upstream/lines.js";
import { ERAS } from "../helpers/clients.js";
import { connectClient, memoryProxy } from "../helpers/inmemory.js";
import { message } from "../helpers/jsonrpc-arbitrary.js";
import { text } from "../helpers/proxy.js";

let proxies: Proxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
});

describe("the downstream server's dispatch", () => {
  it("names a message's kind only where the SDK's type guards find that kind, and no other", () => {
    const seen = { request: 0, notification: 0, result: 0 };
    fc.assert(
      fc.property(message, (value) => {
        const kind = plainKind(value);
        if (kind === undefined) return;
        seen[kind]++;
        // The SDK tries responses first, then requests, then notifications.
        const response = isJSONRPCResultResponse(value) || isJSONRPCErrorResponse(value);
        if (kind === "result") expect(isJSONRPCResultResponse(value)).toBe(true);
        if (kind === "request") expect(!response && isJSONRPCRequest(value)).toBe(true);
        if (kind === "notification") {
          expect(!response && !isJSONRPCRequest(value) && isJSONRPCNotification(value)).toBe(true);
        }
      }),
      { numRuns: 6000 },
    );
    // Each kind is drawn often enough to prove something.
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(50);
  });

  it("stands in for the SDK's dispatch as this SDK writes it (an upgrade that changes it fails here)", async () => {
    // plain-dispatch.ts does what this closure does for a plain request, without the guards:
    // the previous handler, then _onrequest. Anything the SDK adds here must be added there.
    const server = new Server({ name: "sdk", version: "1.0.0" }, { capabilities: {} });
    const [transport] = InMemoryTransport.createLinkedPair();
    await server.connect(transport);
    expect(String(transport.onmessage).replace(/\s+/g, " ")).toBe(
      [
        "(message, extra) => {",
        "_onmessage?.(message, extra);",
        "if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this._onresponse(message);",
        "else if (isJSONRPCRequest(message)) this._onrequest(message, extra);",
        "else if (isJSONRPCNotification(message)) this._onnotification(message, extra);",
        "else this._onerror(/* @__PURE__ */ new Error(`Unknown message type: ${JSON.stringify(message)}`));",
        "}",
      ].join(" "),
    );
    await server.close();
  });

  it.each(ERAS)(
    "serves a %s client's call without the SDK's failing schema checks",
    async (era) => {
      const echo = () => {
        const s = new McpServer({ name: "echo", version: "1.0.0" });
        s.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({
          content: [{ type: "text", text: message }],
        }));
        return s;
      };
      const proxy = memoryProxy({ echo });
      proxies.push(proxy);
      await proxy.start();
      const session = await connectClient(proxy, { era });
      // What the SDK's dispatch tries first for every message: count its tries on tools/call.
      let tried = 0;
      const watched = [JSONRPCResultResponseSchema, JSONRPCErrorResponseSchema] as const;
      // zod makes safeParse an own property of a schema when first read: read it, then keep
      // what to put back.
      const parses = watched.map((schema) => schema.safeParse.bind(schema));
      const originals = watched.map((schema) =>
        Object.getOwnPropertyDescriptor(schema, "safeParse"),
      );
      watched.forEach((schema, i) => {
        const parse = parses[i]!;
        schema.safeParse = ((value: unknown, params?: Parameters<typeof parse>[1]) => {
          if ((value as { method?: unknown } | null)?.method === "tools/call") tried++;
          return parse(value, params);
        }) as typeof schema.safeParse;
      });
      try {
        const answer = await session.client.callTool({
          name: "call",
          arguments: { method: "echo.echo", arguments: { message: "hi" } },
        });
        expect(text(answer)).toBe("hi");
        // The answer came through the SDK's request handling, without the schemas' failed tries.
        expect(tried).toBe(0);
      } finally {
        watched.forEach((schema, i) => {
          const original = originals[i];
          if (original) Object.defineProperty(schema, "safeParse", original);
          else delete (schema as { safeParse?: unknown }).safeParse;
        });
        await session.close();
      }
    },
  );
});
