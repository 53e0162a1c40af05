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
    // Ends this instance after answering, as a crash or a kill would.
    server.registerTool("quit", {}, () => {
      setImmediate(() => void server.close());
      return { content: [{ type: "text", text: `${id}:quitting` }] };
    });
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

/** A call made by downstream client `client` (its connection or HTTP session). */
const callAs = (client: string, method: string, args: Record<string, unknown> = {}) =>
  proxy!.context.executor.call(`s.${method}`, args, { caller: "app", clientKey: client });

/** `quit` the session that serves `send`'s calls, and wait until the pool sees it closed. */
async function quit(send: () => Promise<unknown>) {
  const open = proxy!.context.registry.poolStats().s!.open;
  await send();
  await expect.poll(() => proxy!.context.registry.poolStats().s?.open).toBe(open - 1);
}

/** The lost-state notice mcpx puts first in an answer. */
const NOTICE = /^Note from mcpx: server "s" restarted since your last call/;

describe("per-client sessions (the default)", () => {
  it("keeps state per client, never across clients, with no session key in the config", async () => {
    build({});
    await proxy!.start();
    expect(proxy!.context.registry.poolStats().s?.policy).toBe("client");
    await callAs("stdio:a", "set", { value: "a's" });
    await callAs("stdio:b", "set", { value: "b's" });
    expect(text(await callAs("stdio:a", "get"))).toMatch(/:a's$/);
    expect(text(await callAs("stdio:b", "get"))).toMatch(/:b's$/);
    expect(text(await callAs("stdio:c", "get"))).toMatch(/^\d+:$/);
  });

  it("serves a new client's first call from a spare, replaced after the call", async () => {
    const upstream = build({});
    await proxy!.start();
    await expect.poll(() => proxy!.context.registry.poolStats().s?.spares).toBe(1);
    const before = upstream.instances();
    await callAs("stdio:a", "get");
    // The call took the spare (no new instance before it answered); its replacement follows.
    expect(upstream.instances()).toBe(before);
    await expect.poll(() => proxy!.context.registry.poolStats().s?.spares).toBe(1);
    expect(proxy!.context.registry.poolStats().s?.open).toBe(2);
  });

  it("closes a client's session when the client leaves, and owes it nothing after", async () => {
    build({ prewarm: 0 });
    await proxy!.start();
    await callAs("stdio:a", "set", { value: "kept" });
    expect(proxy!.context.registry.poolStats().s?.open).toBe(1);
    proxy!.context.registry.clientLeft("stdio:a");
    await expect.poll(() => proxy!.context.registry.poolStats().s?.open).toBe(0);
    const again = await callAs("stdio:a", "get");
    expect(again.content).toHaveLength(1);
    expect(text(again)).toMatch(/^\d+:$/);
  });

  it("never takes a session from another client: past maxSessions a new one waits, then is refused", async () => {
    build({ prewarm: 0, maxSessions: 1, timeout: 300 });
    await proxy!.start();
    await callAs("stdio:a", "set", { value: "mine" });
    const refused = await callAs("stdio:b", "get");
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /all 1 client sessions stayed held by other clients .*maxSessions 1.*"idleTimeout"/,
    );
    expect(text(await callAs("stdio:a", "get"))).toMatch(/:mine$/);
    // Once a takes its leave, b gets the slot.
    proxy!.context.registry.clientLeft("stdio:a");
    expect(text(await callAs("stdio:b", "get"))).toMatch(/^\d+:$/);
  });
});

describe("lost state is said", () => {
  it("client: the next answer after the session died says the server restarted, once", async () => {
    build({ prewarm: 0 });
    await proxy!.start();
    await callAs("stdio:a", "set", { value: "page" });
    await quit(() => callAs("stdio:a", "quit"));
    const next = await callAs("stdio:a", "get");
    expect(next.isError).toBeFalsy();
    expect(text(next)).toMatch(NOTICE);
    expect(text(next)).toContain("the process exited or the connection closed");
    expect(next.content).toHaveLength(2);
    expect(next.content[1]).toMatchObject({ type: "text" });
    expect(JSON.stringify(next.content[1])).toMatch(/"\d+:"/);
    // Said once: the following answer is the tool's own.
    const after = await callAs("stdio:a", "get");
    expect(after.content).toHaveLength(1);
    // Another client, whose state nothing lost, is told nothing.
    expect((await callAs("stdio:b", "get")).content).toHaveLength(1);
  });

  it("client: a session closed after idleTimeout is said on the next call", async () => {
    build({ prewarm: 0, idleTimeout: 50 });
    await proxy!.start();
    await callAs("stdio:a", "set", { value: "gone soon" });
    await expect.poll(() => proxy!.context.registry.poolStats().s?.open, { timeout: 2000 }).toBe(0);
    expect(text(await callAs("stdio:a", "get"))).toMatch(/without calls \(idleTimeout\)/);
  });

  it("client: a health reset that drops the session is said", async () => {
    build({ prewarm: 0 });
    await proxy!.start();
    await callAs("stdio:a", "set", { value: "x" });
    await proxy!.context.registry.pool("s")!.reset();
    const next = await callAs("stdio:a", "get");
    expect(text(next)).toMatch(NOTICE);
    expect(text(next)).toContain("failed health checks");
  });

  it("shared: every client that used the old session is told once, a newcomer is not", async () => {
    build({ session: "shared" });
    await proxy!.start();
    await callAs("stdio:a", "set", { value: "x" });
    await callAs("stdio:b", "get");
    await quit(() => callAs("stdio:a", "quit"));
    expect(text(await callAs("stdio:a", "get"))).toMatch(NOTICE);
    expect(text(await callAs("stdio:b", "get"))).toMatch(NOTICE);
    expect((await callAs("stdio:a", "get")).content).toHaveLength(1);
    expect((await callAs("stdio:c", "get")).content).toHaveLength(1);
  });

  it("caller: the caller whose session died is told", async () => {
    build({ session: "caller" });
    await proxy!.start();
    await call("set", { value: "x" }, "alice");
    await quit(() => call("quit", {}, "alice"));
    expect(text(await call("get", {}, "alice"))).toMatch(NOTICE);
    expect((await call("get", {}, "bob")).content).toHaveLength(1);
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
    expect(registry.server("b")?.tools.map((t) => t.name)).toEqual(["set", "get", "quit", "wait"]);
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
