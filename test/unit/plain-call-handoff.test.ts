/**
 * A 2025-era connection's plain tools/call (src/server/plain-dispatch.ts, `ToolCalls`) that
 * outlives taskAfter is answered with a handle and goes on, on its request's own controller
 * (executor/tasks.ts). Once the handle is answered, nothing may abort that controller: not the
 * connection closing while the answer still waits for the pipe to drain (a stdio client that
 * reads the handle and leaves under backpressure). In-process proxy on a fake clock, an
 * in-memory upstream, the answer held back as a full pipe holds it.
 */
import { InMemoryTransport as ServerPair, type JSONRPCMessage } from "@modelcontextprotocol/server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import type { Proxy } from "../../src/proxy.js";
import { serveConnection } from "../../src/server/stdio.js";
import { FakeClock } from "../helpers/clock.js";
import { within } from "../helpers/eventually.js";
import { memoryProxy } from "../helpers/inmemory.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe("a plain tools/call handed off as a task", () => {
  it("keeps running when the connection closes while its handle is still being sent", async () => {
    const clock = new FakeClock();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atUpstream = new Promise<void>((resolve) => (reached = resolve));
    proxy = memoryProxy(
      {
        s: () => {
          const server = new McpServer({ name: "s", version: "1" });
          server.registerTool("hold", {}, async (extra) => {
            reached();
            await Promise.race([
              released,
              new Promise((resolve) => extra.signal.addEventListener("abort", resolve)),
            ]);
            return {
              content: [{ type: "text", text: extra.signal.aborted ? "aborted" : "finished" }],
            };
          });
          return server;
        },
      },
      {
        clock,
        // Shared: the leaving client's own sessions close with it, a shared one does not.
        config: parseConfig(
          { mcpServers: { s: { command: "in-memory-s", session: "shared" } }, taskAfter: 1_000 },
          "/memory/mcpx.json",
          {},
        ),
      },
    );
    await proxy.start();

    const [clientSide, serverSide] = ServerPair.createLinkedPair();
    // The pipe is full from the handle on: its answer is written, never drained.
    let handle!: (uri: string) => void;
    const handed = new Promise<string>((resolve) => (handle = resolve));
    const send = serverSide.send.bind(serverSide);
    serverSide.send = (message: JSONRPCMessage, options) => {
      const task = (message as { result?: { _meta?: Record<string, { uri: string }> } }).result
        ?._meta?.["mcpx/task"];
      if (!task) return send(message, options);
      handle(task.uri);
      return new Promise<void>(() => {});
    };
    const served = serveConnection(proxy.context, serverSide);
    const answers = new Map<unknown, (m: JSONRPCMessage) => void>();
    clientSide.onmessage = (m) => {
      if ("id" in m && !("method" in m)) answers.get(m.id)?.(m);
    };
    await clientSide.start();
    const request = (id: number, method: string, params: Record<string, unknown>) => {
      const answer = new Promise<JSONRPCMessage>((resolve) => answers.set(id, resolve));
      void clientSide.send({ jsonrpc: "2.0", id, method, params });
      return within(answer, 5_000, `the answer to ${method}`);
    };
    await request(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    });
    await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" });

    void clientSide.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "call", arguments: { method: "s.hold" } },
    });
    await within(atUpstream, 5_000, "the call at the upstream");
    await clock.advance(1_000);
    const uri = await within(handed, 5_000, "the handle");

    // The client leaves before its handle was written out.
    await clientSide.close();
    await served.close();
    release();
    // The call ran to its end: its result is the upstream's, not a cancellation.
    const result = await within(
      proxy.context.executor.tasks.poll("raw", uri, 60_000),
      5_000,
      "the handed-off call's result",
    );
    expect(JSON.stringify(result.content)).not.toContain("cancel");
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "finished" }]);
  });
});
