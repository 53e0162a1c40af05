import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { parseConfig } from "../../src/config/load.js";
import { onToolsChanged } from "../helpers/clients.js";
import { connectClient, memoryProxy } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function upstream(name: string, tools: string[]): McpServer {
  const server = new McpServer(
    { name, version: "1.0.0" },
    { instructions: `${name} does things. More text.` },
  );
  for (const t of tools) {
    server.registerTool(
      t,
      { description: `${t} tool.`, inputSchema: { x: z.string().optional() } },
      () => ({
        content: [{ type: "text", text: `${name}.${t}` }],
      }),
    );
  }
  return server;
}

describe("registry", () => {
  it("discovers every upstream's identity, tools and pagination-free lists", async () => {
    proxy = memoryProxy({
      a: () => upstream("alpha", ["one", "two"]),
      b: () => upstream("beta", ["three"]),
    });
    await proxy.start();
    const [a, b] = proxy.context.registry.servers();
    expect(a?.status).toBe("ready");
    expect(a?.identity?.name).toBe("alpha");
    expect(a?.identity?.instructions).toContain("alpha does things");
    expect(a?.tools.map((t) => t.name)).toEqual(["one", "two"]);
    expect(b?.tools.map((t) => t.name)).toEqual(["three"]);
  });

  it("records a failing upstream without blocking the others", async () => {
    proxy = memoryProxy({
      good: () => upstream("good", ["ok"]),
      bad: () => {
        throw new Error("cannot start: missing binary");
      },
    });
    await proxy.start();
    const bad = proxy.context.registry.server("bad");
    expect(bad?.status).toBe("down");
    expect(bad?.error).toContain("missing binary");
    expect(proxy.context.registry.server("good")?.status).toBe("ready");
  });

  it("never shows a secret from an upstream's error to clients", async () => {
    const config = parseConfig(
      {
        mcpServers: {
          good: { command: "in-memory-good" },
          bad: { command: "in-memory-bad", env: { TOKEN: "supersecret123" } },
        },
      },
      "/memory/mcpx.json",
      {},
    );
    proxy = memoryProxy(
      {
        good: () => upstream("good", ["ok"]),
        bad: () => {
          throw new Error("upstream said: bad token supersecret123");
        },
      },
      { config },
    );
    await proxy.start();
    const { client, close } = await connectClient(proxy);
    try {
      const { tools } = await client.listTools();
      const seen = [
        tools[0]?.description ?? "",
        text(await client.callTool({ name: "describe", arguments: {} })),
        text(await client.callTool({ name: "describe", arguments: { method: "bad" } })),
        text(await client.callTool({ name: "call", arguments: { method: "bad.x" } })),
      ];
      for (const t of seen) {
        expect(t).toContain("bad token ***");
        expect(t).not.toContain("supersecret123");
      }
    } finally {
      await close();
    }
  });

  it("refreshes a server's tools on list_changed and tells downstream clients", async () => {
    // One shared server instance: the control session sees the tool added below.
    const live = upstream("live", ["first"]);
    let sessions = 0;
    proxy = memoryProxy({
      live: () => {
        sessions += 1;
        return sessions === 1 ? live : upstream("live", ["first"]);
      },
    });
    await proxy.start();
    const { client, close } = await connectClient(proxy);
    try {
      let notify = () => {};
      const notified = new Promise<void>((resolve) => (notify = resolve));
      await onToolsChanged(client, () => notify());
      const changed = new Promise<void>((resolve) =>
        proxy!.context.registry.onChange(() => resolve()),
      );
      live.registerTool("second", { description: "added later" }, () => ({ content: [] }));
      await changed;
      await notified;
      expect(proxy.context.registry.server("live")?.tools.map((t) => t.name)).toEqual([
        "first",
        "second",
      ]);
      const { tools } = await client.listTools();
      expect(tools[0]?.description).toContain("first, second");
    } finally {
      await close();
    }
  });

  it("runs each call in a session no other call has used", async () => {
    let sessions = 0;
    const config = parseConfig(
      { mcpServers: { s: { command: "in-memory-s", session: "isolated" } } },
      "/memory/mcpx.json",
      {},
    );
    proxy = memoryProxy(
      {
        s: () => {
          sessions += 1;
          return upstream("s", ["t"]);
        },
      },
      { config },
    );
    await proxy.start();
    expect(sessions).toBe(1);
    await proxy.context.executor.call("s.t", {});
    await expect.poll(() => proxy!.context.registry.poolStats().s?.spares).toBe(1);
    await proxy.context.executor.call("s.t", {});
    await expect.poll(() => sessions).toBe(3);
  });
});
