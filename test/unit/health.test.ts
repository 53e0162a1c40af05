/** The health monitor on in-memory upstreams, driven by a fake clock: no real waiting. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { connectTransport } from "../../src/upstream/factory.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { FakeClock, settle } from "../helpers/clock.js";
import { onToolsChanged } from "../helpers/clients.js";
import { connectClient, quietLogger } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** An upstream that can be taken down (sessions close, new ones fail) and brought back. */
function flakyUpstream(startDown = false) {
  let down = startDown;
  const live = new Set<McpServer>();
  return {
    factory: async () => {
      if (down) throw new Error("connection refused");
      const server = new McpServer({ name: "flaky", version: "1.0.0" });
      server.registerTool("ping_me", { description: "Answers." }, () => ({
        content: [{ type: "text", text: "pong" }],
      }));
      live.add(server);
      const [c, s] = InMemoryTransport.createLinkedPair();
      await server.connect(s);
      return connectTransport(c, { timeoutMs: 1_000 });
    },
    takeDown: async () => {
      down = true;
      await Promise.all([...live].map((s) => s.close()));
      live.clear();
    },
    bringBack: () => {
      down = false;
    },
  };
}

function build(upstream: ReturnType<typeof flakyUpstream>, clock: FakeClock) {
  const config = parseConfig(
    {
      mcpServers: { flaky: { command: "in-memory" } },
      health: {
        interval: 1000,
        timeout: 500,
        failureThreshold: 3,
        retryInitial: 1000,
        retryMax: 8000,
      },
    },
    "/memory/mcpx.json",
    {},
  );
  return createProxy(config, { logger: quietLogger(), clock, factoryFor: () => upstream.factory });
}

describe("health monitor", () => {
  it("pings ready servers every interval and records latency", async () => {
    const clock = new FakeClock();
    proxy = build(flakyUpstream(), clock);
    await proxy.start();
    await clock.advance(1000);
    const state = proxy.context.registry.server("flaky")!;
    expect(state.status).toBe("ready");
    expect(state.health.latencyMs).toBeGreaterThanOrEqual(0);
    expect(state.health.lastSuccessAt).toBe(clock.now());
  });

  it("goes degraded, then down after failureThreshold failures, and says so to calls", async () => {
    const clock = new FakeClock();
    const upstream = flakyUpstream();
    proxy = build(upstream, clock);
    await proxy.start();
    await upstream.takeDown();
    const state = () => proxy!.context.registry.server("flaky")!;
    await clock.advance(1000);
    expect(state().status).toBe("degraded");
    expect(state().health.consecutiveFailures).toBe(1);
    await clock.advance(1000);
    expect(state().status).toBe("degraded");
    await clock.advance(1000);
    expect(state().status).toBe("down");
    expect(state().error).toContain("connection refused");
    const result = await proxy.context.executor.call("flaky.ping_me", {});
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /Server "flaky" is down since \S+ \(last error: .*connection refused\)\. mcpx retries it in \d+ s\./,
    );
  });

  it("reconnects a down server with capped exponential backoff and tells clients when it is back", async () => {
    const clock = new FakeClock();
    const upstream = flakyUpstream(true);
    proxy = build(upstream, clock);
    await proxy.start();
    expect(proxy.context.registry.server("flaky")?.status).toBe("down");
    const { client, close } = await connectClient(proxy);
    try {
      let changed = 0;
      await onToolsChanged(client, () => {
        changed += 1;
      });
      // Failed attempts: each delay doubles (±25% jitter) up to retryMax.
      const before = clock.delays.length;
      for (let i = 0; i < 5; i++) await clock.advance(10_000);
      const retries = clock.delays.slice(before - 1);
      expect(retries[0]).toBeGreaterThanOrEqual(750);
      expect(retries[0]).toBeLessThanOrEqual(1250);
      for (const d of retries) expect(d).toBeLessThanOrEqual(8000 * 1.25);
      expect(Math.max(...retries)).toBeGreaterThan(4000);
      expect(proxy.context.registry.server("flaky")?.status).toBe("down");
      expect(changed).toBe(0);

      upstream.bringBack();
      await clock.advance(10_000);
      expect(proxy.context.registry.server("flaky")?.status).toBe("ready");
      await settle();
      expect(changed).toBeGreaterThan(0);
      const { tools } = await client.listTools();
      expect(tools[0]?.description).toContain("ping_me");
      expect(text(await proxy.context.executor.call("flaky.ping_me", {}))).toBe("pong");
    } finally {
      await close();
    }
  });

  it("forgets the era a down server spoke: its comeback is probed afresh, not assumed", async () => {
    const clock = new FakeClock();
    const upstream = flakyUpstream();
    let forgotten = 0;
    const factory = Object.assign(() => upstream.factory(), {
      forgetEra: () => {
        forgotten += 1;
      },
    });
    proxy = build({ ...upstream, factory }, clock);
    await proxy.start();
    const state = () => proxy!.context.registry.server("flaky")!;
    await clock.advance(1000);
    expect(state().status).toBe("ready");
    // Healthy: the era learned at the first connect stays.
    expect(forgotten).toBe(0);
    await upstream.takeDown();
    for (let i = 0; i < 3; i++) await clock.advance(1000);
    expect(state().status).toBe("down");
    upstream.bringBack();
    await clock.advance(10_000);
    expect(state().status).toBe("ready");
    expect(forgotten).toBeGreaterThan(0);
  });

  it("computes backoff delays that double, are capped, and jitter within ±25%", async () => {
    const { HealthMonitor } = await import("../../src/health/monitor.js");
    const settings = {
      intervalMs: 1,
      timeoutMs: 1,
      failureThreshold: 1,
      retryInitialMs: 1000,
      retryMaxMs: 300_000,
    };
    const fixed = (r: number) =>
      new HealthMonitor({} as never, settings, { logger: quietLogger(), random: () => r });
    expect([0, 1, 2, 3].map((a) => fixed(0.5).retryDelay(a))).toEqual([1000, 2000, 4000, 8000]);
    expect(fixed(0.5).retryDelay(20)).toBe(300_000);
    expect(fixed(0).retryDelay(0)).toBe(750);
    expect(fixed(0.999999).retryDelay(0)).toBe(1250);
  });

  it("follows reloads: new servers get checks, removed ones lose theirs", async () => {
    const clock = new FakeClock();
    const upstream = flakyUpstream();
    const config = (names: string[]) =>
      parseConfig(
        {
          mcpServers: Object.fromEntries(names.map((n) => [n, { command: `in-memory-${n}` }])),
          health: { interval: 1000 },
        },
        "/memory/mcpx.json",
        {},
      );
    proxy = createProxy(config(["a"]), {
      logger: quietLogger(),
      clock,
      factoryFor: () => upstream.factory,
    });
    await proxy.start();
    expect(clock.pending).toBe(1);
    await proxy.reload(config(["a", "b"]));
    expect(clock.pending).toBe(2);
    await clock.advance(1000);
    expect(proxy.context.registry.server("b")?.health.lastSuccessAt).toBe(clock.now());
    await proxy.reload(config(["b"]));
    expect(clock.pending).toBe(1);
  });

  it("stops all timers on close", async () => {
    const clock = new FakeClock();
    proxy = build(flakyUpstream(), clock);
    await proxy.start();
    expect(clock.pending).toBe(1);
    await proxy.close();
    expect(clock.pending).toBe(0);
  });
});
