/** Session policies on in-memory upstreams: which session each call lands on, limits, idling. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { memoryConfig, memoryProxy } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** An upstream with per-instance state, like a browser server; `wait` blocks until released. */
function statefulFactory() {
  let instances = 0;
  const gates: (() => void)[] = [];
  const make = () => {
    const id = ++instances;
    let value = "";
    const server = new McpServer({ name: "stateful", version: "1.0.0" });
    server.registerTool("set", { inputSchema: { value: z.string() } }, ({ value: v }) => {
      value = v;
      return { content: [{ type: "text", text: "ok" }] };
    });
    server.registerTool("get", {}, () => ({ content: [{ type: "text", text: `${id}:${value}` }] }));
    server.registerTool("wait", {}, async () => {
      await new Promise<void>((resolve) => gates.push(resolve));
      return { content: [{ type: "text", text: `${id}:done` }] };
    });
    return server;
  };
  return {
    make,
    instances: () => instances,
    /** Let every blocked `wait` call finish. */
    open: () => gates.splice(0).forEach((g) => g()),
    waiting: () => gates.length,
  };
}

function build(session: Record<string, unknown>) {
  const upstream = statefulFactory();
  const config = memoryConfig(["s"]);
  const raw = { mcpServers: { s: { command: "in-memory-s", ...session } } };
  const parsed = {
    ...config,
    servers: config.servers.map((s) => ({ ...s, ...reparse(raw).servers[0]!, name: "s" })),
  };
  proxy = memoryProxy({ s: upstream.make }, { config: parsed });
  return upstream;
}

import { parseConfig } from "../../src/config/load.js";
function reparse(raw: unknown) {
  return parseConfig(raw, "/memory/mcpx.json", {});
}

const call = (method: string, args: Record<string, unknown> = {}, caller?: string) =>
  proxy!.context.executor.call(`s.${method}`, args, caller ? { caller } : {});

describe("isolated sessions", () => {
  it("never lets two calls share a session, and keeps a warm spare", async () => {
    const upstream = build({ session: "isolated", prewarm: 1 });
    await proxy!.start();
    expect(text(await call("set", { value: "secret" }))).toBe("ok");
    // Its spare back first: a call that found none ready would grow the spares (pool-spares.test.ts).
    await expect.poll(() => proxy!.context.registry.poolStats().s?.spares).toBe(1);
    // A fresh session: the value set by the previous call is not there.
    expect(text(await call("get"))).toMatch(/^\d+:$/);
    // The replacement spare starts after the call is released, off the response path.
    await expect.poll(() => proxy!.context.registry.poolStats().s?.spares).toBe(1);
    expect(upstream.instances()).toBe(3);
  });

  it("queues calls beyond maxSessions and refuses one that waits past its timeout", async () => {
    const upstream = build({ session: "isolated", prewarm: 0, maxSessions: 2, timeout: 300 });
    await proxy!.start();
    const first = call("wait");
    const second = call("wait");
    const third = call("wait");
    await expect.poll(() => upstream.waiting()).toBe(2);
    expect(proxy!.context.registry.poolStats().s).toMatchObject({ leased: 2, waiting: 1 });
    const refused = await third;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("busy");
    expect(text(refused)).toContain("maxSessions");
    upstream.open();
    expect(text(await first)).toMatch(/:done$/);
    expect(text(await second)).toMatch(/:done$/);
  });

  it("lets a queued call in as soon as a session frees up", async () => {
    const upstream = build({ session: "isolated", prewarm: 0, maxSessions: 1 });
    await proxy!.start();
    const first = call("wait");
    const second = call("get");
    await expect.poll(() => upstream.waiting()).toBe(1);
    expect(proxy!.context.registry.poolStats().s?.waiting).toBe(1);
    upstream.open();
    await first;
    expect((await second).isError).toBeFalsy();
  });
});

describe("shared session", () => {
  it("runs every call on one session, concurrently", async () => {
    const upstream = build({ session: "shared" });
    await proxy!.start();
    await call("set", { value: "kept" }, "alice");
    expect(text(await call("get", {}, "bob"))).toBe("1:kept");
    const both = Promise.all([call("wait"), call("wait")]);
    await expect.poll(() => upstream.waiting()).toBe(2);
    upstream.open();
    expect((await both).map(text)).toEqual(["1:done", "1:done"]);
    expect(upstream.instances()).toBe(1);
  });
});

describe("per-caller sessions", () => {
  it("keeps state per caller, never across callers", async () => {
    build({ session: "caller" });
    await proxy!.start();
    await call("set", { value: "alice's" }, "alice");
    await call("set", { value: "bob's" }, "bob");
    expect(text(await call("get", {}, "alice"))).toMatch(/:alice's$/);
    expect(text(await call("get", {}, "bob"))).toMatch(/:bob's$/);
    expect(text(await call("get", {}, "carol"))).toMatch(/:$/);
  });

  it("closes a caller's session after idleTimeout", async () => {
    build({ session: "caller", idleTimeout: 50 });
    await proxy!.start();
    await call("set", { value: "gone soon" }, "alice");
    expect(proxy!.context.registry.poolStats().s?.open).toBe(1);
    await expect.poll(() => proxy!.context.registry.poolStats().s?.open, { timeout: 2000 }).toBe(0);
    expect(text(await call("get", {}, "alice"))).toMatch(/:$/);
  });

  it("lets a waiting caller in as soon as another caller's session goes idle", async () => {
    const upstream = build({ session: "caller", maxSessions: 1, timeout: 10_000 });
    await proxy!.start();
    const alice = call("wait", {}, "alice");
    await expect.poll(() => upstream.waiting()).toBe(1);
    const bob = call("get", {}, "bob");
    await expect.poll(() => proxy!.context.registry.poolStats().s?.waiting).toBe(1);
    upstream.open();
    await alice;
    // Bob does not wait for alice's idle timeout (5 min by default): her idle session is evicted.
    const answer = await bob;
    expect(answer.isError).toBeFalsy();
    expect(text(answer)).toMatch(/^\d+:$/);
  });

  it("evicts an idle caller when maxSessions callers are open", async () => {
    const upstream = build({ session: "caller", maxSessions: 1 });
    await proxy!.start();
    await call("set", { value: "a" }, "alice");
    await call("set", { value: "b" }, "bob");
    expect(proxy!.context.registry.poolStats().s?.open).toBe(1);
    expect(upstream.instances()).toBe(3); // discovery, alice, bob
  });
});

describe("identical specs", () => {
  it("share one pool and one discovery, whatever their names", async () => {
    const upstream = statefulFactory();
    const config = reparse({
      mcpServers: {
        a: { command: "same", args: ["x"] },
        b: { args: ["x"], command: "same" },
        c: { command: "other" },
      },
    });
    proxy = memoryProxy({ a: upstream.make, b: upstream.make, c: upstream.make }, { config });
    await proxy.start();
    const { registry } = proxy.context;
    expect(registry.pool("a")).toBe(registry.pool("b"));
    expect(registry.pool("a")).not.toBe(registry.pool("c"));
    expect(registry.server("b")?.tools.map((t) => t.name)).toEqual(["set", "get", "wait"]);
    // Two discoveries (a/b together, c) and no more: spares reuse the discovery sessions.
    expect(upstream.instances()).toBe(2);
  });
});

describe("reload", () => {
  it("lets a running call finish on a server whose spec changed, then retires its pool", async () => {
    const upstream = build({ session: "isolated", prewarm: 0 });
    await proxy!.start();
    const running = call("wait");
    await expect.poll(() => upstream.waiting()).toBe(1);
    const oldPool = proxy!.context.registry.pool("s");
    await proxy!.reload(
      reparse({ mcpServers: { s: { command: "in-memory-s", args: ["v2"], prewarm: 0 } } }),
    );
    expect(proxy!.context.registry.pool("s")).not.toBe(oldPool);
    upstream.open();
    // Before the fix the old pool was closed at once and this call failed mid-flight.
    expect(text(await running)).toMatch(/:done$/);
    await expect.poll(() => oldPool?.stats().open).toBe(0);
  });
});
