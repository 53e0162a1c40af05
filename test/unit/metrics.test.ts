/**
 * The Prometheus metrics of one proxy, in process over real SDK upstreams (in memory): each
 * proxy's own registry, recoveries counted from the registry's status changes, and what stops
 * when the metrics close.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { TokenEconomy } from "../../src/dashboard/economy.js";
import type { Proxy } from "../../src/proxy.js";
import { PENDING_CALLS, ProxyMetrics } from "../../src/telemetry/metrics.js";
import { eventually } from "../helpers/eventually.js";
import { memoryProxy } from "../helpers/inmemory.js";

const proxies: Proxy[] = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
});

function upstream(): McpServer {
  const server = new McpServer({ name: "up", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: "text", text: message }],
  }));
  return server;
}

async function started(): Promise<{ proxy: Proxy; metrics: ProxyMetrics }> {
  const proxy = memoryProxy({ up: upstream });
  proxies.push(proxy);
  await proxy.start();
  const metrics = new ProxyMetrics(proxy.context, new TokenEconomy(proxy.context.registry));
  return { proxy, metrics };
}

describe("ProxyMetrics", () => {
  it("keeps one registry per proxy: two proxies count apart", async () => {
    const a = await started();
    const b = await started();
    await a.proxy.context.executor.call("up.echo", { message: "x" });
    await a.proxy.context.executor.call("up.echo", { message: "y" });
    await b.proxy.context.executor.call("up.echo", { message: "z" });
    expect(await a.metrics.text()).toContain(
      'mcpx_calls_total{server="up",tool="echo",outcome="ok"} 2',
    );
    expect(await b.metrics.text()).toContain(
      'mcpx_calls_total{server="up",tool="echo",outcome="ok"} 1',
    );
  });

  it("counts a server coming back (down, then ready) as a restart, and its status", async () => {
    const { proxy, metrics } = await started();
    const registry = proxy.context.registry;
    const key = registry.groups()[0]!.key;
    registry.updateHealth(key, "down", {}, "gone");
    expect(await metrics.text()).toContain('mcpx_upstream_status{server="up",status="down"} 1');
    registry.updateHealth(key, "ready", {});
    const text = await metrics.text();
    expect(text).toContain('mcpx_upstream_restarts_total{server="up"} 1');
    expect(text).toContain('mcpx_upstream_status{server="up",status="ready"} 1');
    expect(text).toContain('mcpx_upstream_status{server="up",status="down"} 0');
  });

  it("keeps only the visible servers' series for a viewer, and stops counting once closed", async () => {
    const { proxy, metrics } = await started();
    await proxy.context.executor.call("up.echo", { message: "x" });
    const hidden = await metrics.text(() => false);
    expect(hidden).not.toContain('server="up"');
    expect(hidden).toContain("mcpx_calls_in_flight 0");
    metrics.close();
    await proxy.context.executor.call("up.echo", { message: "x" });
    expect(await metrics.text()).toBe("\n");
  });

  it("counts calls exactly before prom-client loads, which waits for the first scrape", async () => {
    const { proxy, metrics } = await started();
    const executor = proxy.context.executor;
    await executor.call("up.echo", { message: "x" });
    await executor.call("up.nope", {});
    expect(metrics.loaded).toBe(false);
    const text = await metrics.text();
    expect(metrics.loaded).toBe(true);
    expect(text).toContain('mcpx_calls_total{server="up",tool="echo",outcome="ok"} 1');
    expect(text).toContain('mcpx_calls_total{server="up",tool="",outcome="refused"} 1');
    expect(text).toContain('mcpx_call_duration_seconds_count{server="up",tool="echo"} 1');
    expect(text).toContain("mcpx_calls_in_flight 0");
    // After loading, calls go straight to prom-client.
    await executor.call("up.echo", { message: "y" });
    expect(await metrics.text()).toContain(
      'mcpx_calls_total{server="up",tool="echo",outcome="ok"} 2',
    );
  });

  it("loads prom-client once PENDING_CALLS calls wait, without a scrape, and loses none", async () => {
    const { proxy, metrics } = await started();
    const executor = proxy.context.executor;
    for (let i = 0; i < PENDING_CALLS - 1; i++) await executor.call("up.echo", { message: "x" });
    expect(metrics.loaded).toBe(false);
    await executor.call("up.echo", { message: "x" });
    await eventually(() => metrics.loaded, 10_000, "prom-client to load");
    await executor.call("up.echo", { message: "x" });
    expect(await metrics.text()).toContain(
      `mcpx_calls_total{server="up",tool="echo",outcome="ok"} ${PENDING_CALLS + 1}`,
    );
  });

  it("counts restarts seen before prom-client loads", async () => {
    const { proxy, metrics } = await started();
    const registry = proxy.context.registry;
    const key = registry.groups()[0]!.key;
    registry.updateHealth(key, "down", {}, "gone");
    registry.updateHealth(key, "ready", {});
    expect(metrics.loaded).toBe(false);
    expect(await metrics.text()).toContain('mcpx_upstream_restarts_total{server="up"} 1');
  });

  it("closed before any scrape: never loads prom-client and reads empty", async () => {
    const { proxy, metrics } = await started();
    await proxy.context.executor.call("up.echo", { message: "x" });
    metrics.close();
    expect(await metrics.text()).toBe("\n");
    expect(metrics.loaded).toBe(false);
  });
});
