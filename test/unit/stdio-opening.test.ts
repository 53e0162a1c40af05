/**
 * The opening of a stdio connection (src/server/stdio-opening.ts): a plain 2025-era `initialize`
 * pins a legacy instance on the wire itself, everything else goes to the SDK's entry; either
 * way every message is answered, in order, however many arrive in one read.
 */
import { PassThrough } from "node:stream";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import type { Proxy } from "../../src/proxy.js";
import { serveConnection } from "../../src/server/stdio.js";
import { opensLegacy } from "../../src/server/stdio-opening.js";
import { LineTransport } from "../../src/server/stdio-transport.js";
import { MODERN_VERSION } from "../helpers/clients.js";
import { memoryProxy } from "../helpers/inmemory.js";
import { ENVELOPE, INITIALIZE } from "../helpers/proxy.js";

const echo = () => {
  const server = new McpServer({ name: "echo", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo." }, () => ({
    content: [{ type: "text", text: "pong" }],
  }));
  return server;
};

/** A proxy served on a line stream; `send` writes raw lines, `next` reads the answers. */
function lineConnection(proxy: Proxy) {
  const input = new PassThrough();
  const output = new PassThrough();
  const served = serveConnection(proxy.context, new LineTransport(input, output));
  let text = "";
  const waiting: (() => void)[] = [];
  output.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    for (const wake of waiting.splice(0)) wake();
  });
  const next = async (): Promise<Record<string, unknown>> => {
    for (;;) {
      const end = text.indexOf("\n");
      if (end >= 0) {
        const line = text.slice(0, end);
        text = text.slice(end + 1);
        return JSON.parse(line) as Record<string, unknown>;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  return {
    send: (...messages: unknown[]) =>
      input.write(messages.map((m) => `${JSON.stringify(m)}\n`).join("")),
    next,
    close: async () => {
      input.end();
      await served.close();
    },
  };
}

describe("stdio opening", () => {
  let proxy: Proxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it("tells a plain initialize from every other first message", () => {
    expect(opensLegacy(INITIALIZE)).toBe(true);
    expect(opensLegacy({ jsonrpc: "2.0", id: 1, method: "initialize" })).toBe(true);
    expect(opensLegacy({ ...INITIALIZE, params: { ...INITIALIZE.params, _meta: {} } })).toBe(false);
    expect(opensLegacy({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toBe(false);
    expect(opensLegacy({ jsonrpc: "2.0", method: "initialize" })).toBe(false);
  });

  it("answers a legacy opening and what came with it in one read, in order", async () => {
    proxy = memoryProxy({ echo });
    await proxy.start();
    const c = lineConnection(proxy);
    try {
      // All in one chunk: the later messages arrive while the instance is still connecting.
      c.send(
        INITIALIZE,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { jsonrpc: "2.0", id: 3, method: "ping" },
      );
      const first = await c.next();
      expect(first.id).toBe(1);
      expect((first.result as { protocolVersion: string }).protocolVersion).toBe("2025-06-18");
      // Requests run side by side: their answers may come in any order.
      const rest = new Map([await c.next(), await c.next()].map((m) => [m.id, m]));
      const listed = rest.get(2)?.result as { tools: { name: string }[] };
      expect(listed.tools.map((t) => t.name)).toContain("call");
      expect(rest.get(3)).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
    } finally {
      await c.close();
    }
  });

  it("leaves a 2026-07-28 opening to the SDK's entry", async () => {
    proxy = memoryProxy({ echo });
    await proxy.start();
    const c = lineConnection(proxy);
    try {
      c.send({ jsonrpc: "2.0", id: 7, method: "server/discover", params: { _meta: ENVELOPE } });
      const answer = await c.next();
      expect(answer.id).toBe(7);
      expect(JSON.stringify(answer.result)).toContain(MODERN_VERSION);
      c.send({ jsonrpc: "2.0", id: 8, method: "tools/list", params: { _meta: ENVELOPE } });
      const listed = await c.next();
      expect(listed.id).toBe(8);
      expect(JSON.stringify(listed.result)).toContain('"call"');
    } finally {
      await c.close();
    }
  });
});

describe("calls held until the upstreams start", () => {
  it("wait for the start, and at a shutdown before it are answered without starting anything", async () => {
    let started = 0;
    const proxy = memoryProxy({
      echo: () => {
        started += 1;
        return echo();
      },
    });
    try {
      proxy.context.registry.holdUntilStart();
      const held = proxy.context.executor.call("echo.echo", {});
      let answered = false;
      void held.then(() => (answered = true));
      await new Promise((resolve) => setImmediate(resolve));
      // Held: not refused as "still starting", and nothing started for it.
      expect(answered).toBe(false);
      const draining = proxy.drain(10_000);
      proxy.context.registry.releaseStartHold();
      const result = await held;
      await draining;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain("shutting down");
      expect(started).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it("go on once the discoveries begin", async () => {
    const proxy = memoryProxy({ echo });
    try {
      proxy.context.registry.holdUntilStart();
      const held = proxy.context.executor.call("echo.echo", {});
      await new Promise((resolve) => setImmediate(resolve));
      await proxy.start();
      const result = await held;
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain("pong");
    } finally {
      await proxy.close();
    }
  });
});
