/**
 * What each protocol era gets over HTTP beyond plain calls: per-caller list_changed over
 * `subscriptions/listen`, cache hints on tools/list, and a plain SDK 1.x client (today's hosts)
 * with its GET stream and logging/setLevel.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import {
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport,
  type Client,
} from "@modelcontextprotocol/client";
import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Sdk1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { newClient, onToolsChanged } from "../helpers/clients.js";
import { memoryConfig, memoryProxy, quietLogger } from "../helpers/inmemory.js";
import {
  ENVELOPE,
  eventually,
  fixtureServer,
  INITIALIZE,
  modernHeaders,
  tempDir,
  text,
} from "../helpers/proxy.js";

let proxy: Proxy | undefined;
let http: HttpHandle | undefined;
const clients: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await http?.close();
  await proxy?.close();
  http = undefined;
  proxy = undefined;
});

function upstream(name: string, tools = ["read_file"]): McpServer {
  const server = new McpServer({ name, version: "1.0.0" }, { capabilities: { logging: {} } });
  for (const tool of tools) {
    server.registerTool(tool, { description: `${tool} of ${name}` }, async (extra) => {
      await extra.sendNotification({
        method: "notifications/message",
        params: { level: "info", data: `${name} ${tool}` },
      });
      return { content: [{ type: "text", text: `${name} ${tool}` }] };
    });
  }
  return server;
}

async function modernClient(url: string, name = "mcpx-test"): Promise<Client> {
  const client = newClient("modern", name);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

describe("list_changed over subscriptions/listen (2026-07-28)", () => {
  it("reaches only the listeners whose caller's view changed", async () => {
    const access = {
      profiles: { default: { servers: ["alpha"] }, coding: { servers: ["alpha", "beta"] } },
      callers: { "claude-code": "coding" },
    };
    proxy = memoryProxy(
      {
        alpha: () => upstream("alpha"),
        beta: () => upstream("beta"),
        gamma: () => upstream("gamma"),
      },
      { config: memoryConfig(["alpha", "beta"], access) },
    );
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    const coding = await modernClient(`${http.url}/claude-code`);
    const plain = await modernClient(http.url, "someone");
    const notified = { coding: 0, plain: 0 };
    const codingSub = await onToolsChanged(coding, () => (notified.coding += 1));
    const plainSub = await onToolsChanged(plain, () => (notified.plain += 1));

    // beta goes, gamma comes: only coding's view changes.
    await proxy.reload(
      memoryConfig(["alpha", "gamma"], {
        ...access,
        profiles: { ...access.profiles, coding: { servers: ["*"] } },
      }),
    );
    await eventually(() => notified.coding > 0, 5_000, "coding's list_changed");
    expect((await coding.listTools()).tools[0]?.description).toContain("gamma: read_file");
    // Closing ends each subscription gracefully, on its stream, after anything sent before.
    await http.close();
    http = undefined;
    expect(await codingSub?.closed).toBe("graceful");
    expect(await plainSub?.closed).toBe("graceful");
    expect(notified.plain).toBe(0);
  });
});

describe("cache hints on tools/list", () => {
  /** A raw 2026-07-28 tools/list: the result's ttlMs and cacheScope. */
  async function hints(url: string): Promise<{ ttlMs?: number; cacheScope?: string }> {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...modernHeaders("tools/list"),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: ENVELOPE },
      }),
    });
    const body = (await res.json()) as { result: { ttlMs?: number; cacheScope?: string } };
    return { ttlMs: body.result.ttlMs, cacheScope: body.result.cacheScope };
  }

  it("private always; 0 while a server is starting, then one health interval", async () => {
    const dir = tempDir();
    const release = path.join(dir, "release");
    const config = parseConfig(
      {
        mcpServers: { slow: fixtureServer("faulty.mjs", { FAULT_START_UNTIL: release }) },
        health: { interval: 45_000 },
      },
      path.join(dir, "mcpx.json"),
      {},
    );
    proxy = createProxy(config, { logger: quietLogger() });
    const started = proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    try {
      expect(await hints(http.url)).toEqual({ ttlMs: 0, cacheScope: "private" });
    } finally {
      writeFileSync(release, "");
    }
    await started;
    expect(proxy.context.registry.server("slow")?.status).toBe("ready");
    expect(await hints(http.url)).toEqual({ ttlMs: 45_000, cacheScope: "private" });
    // A 2025 answer carries none.
    const init = await fetch(http.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(INITIALIZE),
    });
    await init.text();
    const legacy = await fetch(http.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": init.headers.get("mcp-session-id")!,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    const body = await legacy.text();
    expect(body).toContain('"tools"');
    expect(body).not.toContain("ttlMs");
    expect(body).not.toContain("cacheScope");
  });

  it("a 2026-07-28 client reuses a ready list until list_changed drops it", async () => {
    proxy = memoryProxy({ alpha: () => upstream("alpha") });
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    const client = await modernClient(http.url);
    let changed = 0;
    await onToolsChanged(client, () => (changed += 1));
    const first = await client.listTools();
    await proxy.reload(memoryConfig(["alpha", "beta"]));
    await eventually(() => changed > 0, 5_000, "list_changed");
    const second = await client.listTools();
    expect(first.tools[0]?.description).not.toContain("beta");
    expect(second.tools[0]?.description).toContain("beta");
  });
});

describe("upstream log messages over HTTP (2026-07-28)", () => {
  it("come only when the request asks, at the level it names", async () => {
    proxy = memoryProxy({ alpha: () => upstream("alpha") });
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    const client = await modernClient(http.url);
    const logs: string[] = [];
    client.setNotificationHandler("notifications/message", (n) => {
      logs.push(n.params.level);
    });
    const call = (level?: string) =>
      client.callTool({
        name: "call",
        arguments: { method: "alpha.read_file" },
        ...(level !== undefined && { _meta: { [LOG_LEVEL_META_KEY]: level } }),
      });
    expect(text(await call())).toBe("alpha read_file");
    expect(text(await call("warning"))).toBe("alpha read_file");
    expect(logs).toEqual([]);
    expect(text(await call("info"))).toBe("alpha read_file");
    expect(logs).toEqual(["info"]);
  });
});

describe("a plain SDK 1.x client (2025 era)", () => {
  it("lists, calls, gets log messages at its level and list_changed on its GET stream", async () => {
    proxy = memoryProxy(
      { alpha: () => upstream("alpha"), beta: () => upstream("beta") },
      {
        config: memoryConfig(["alpha"]),
      },
    );
    await proxy.start();
    http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0 });
    let streaming = false;
    const transport = new Sdk1Transport(new URL(http.url), {
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if ((init?.method ?? "GET") === "GET" && res.ok) streaming = true;
        return res;
      },
    });
    const client = new Sdk1Client({ name: "claude-code", version: "2.0.0" });
    await client.connect(transport);
    clients.push({ close: () => transport.terminateSession().then(() => client.close()) });
    expect(client.getServerVersion()?.name).toBe("mcpx");
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params.level);
    });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    const call = () => client.callTool({ name: "call", arguments: { method: "alpha.read_file" } });
    expect(text(await call())).toBe("alpha read_file");
    expect(logs).toEqual([]);
    await client.setLoggingLevel("info");
    expect(text(await call())).toBe("alpha read_file");
    expect(logs).toEqual(["info"]);
    // The client opened its GET stream after initialize; a reload arrives on it.
    await eventually(() => streaming, 5_000, "the GET stream");
    expect(http.sessionCount).toBe(1);
    await proxy.reload(memoryConfig(["alpha", "beta"]));
    await eventually(() => changed > 0, 5_000, "list_changed on the GET stream");
    expect((await client.listTools()).tools[0]?.description).toContain("beta");
  });
});
