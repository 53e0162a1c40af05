/**
 * Isolated spares follow demand: a burst that finds no spare ready grows them, up to
 * maxSessions; once idleTimeout passes without another such call they shrink back to prewarm.
 * A taken spare is replaced once no call runs (or after REFILL_DEFER_MS), never during a short
 * call's answer. Time is a FakeClock; upstreams are in memory.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import type { Proxy } from "../../src/proxy.js";
import { REFILL_DEFER_MS } from "../../src/registry/spares.js";
import { FakeClock } from "../helpers/clock.js";
import { memoryConfig, memoryProxy } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const IDLE_MS = 60_000;

/** An upstream whose `wait` blocks until `open()`; counts its instances. */
function build(session: Record<string, unknown>, clock: FakeClock) {
  let instances = 0;
  const gates: (() => void)[] = [];
  const make = () => {
    const id = ++instances;
    const server = new McpServer({ name: "s", version: "1.0.0" });
    server.registerTool("wait", {}, async () => {
      await new Promise<void>((resolve) => gates.push(resolve));
      return { content: [{ type: "text", text: `${id}:done` }] };
    });
    return server;
  };
  const config = memoryConfig(["s"]);
  const raw = { mcpServers: { s: { command: "in-memory-s", idleTimeout: IDLE_MS, ...session } } };
  const parsed = parseConfig(raw, "/memory/mcpx.json", {});
  proxy = memoryProxy(
    { s: make },
    { config: { ...config, servers: [{ ...parsed.servers[0]!, name: "s" }] }, clock },
  );
  return {
    instances: () => instances,
    waiting: () => gates.length,
    open: () => gates.splice(0).forEach((g) => g()),
  };
}

const stats = () => proxy!.context.registry.poolStats().s!;
const wait = () => proxy!.context.executor.call("s.wait", {}, {});

describe("isolated spares under a burst", () => {
  it("grow to cover a burst, never past maxSessions, and shrink to prewarm when idle", async () => {
    const clock = new FakeClock();
    const upstream = build({ session: "isolated", prewarm: 1, maxSessions: 3 }, clock);
    await proxy!.start();
    await expect.poll(() => stats().spares).toBe(1);

    // Five calls at once: the first takes the spare, the others find none ready.
    const burst = Array.from({ length: 5 }, wait);
    await expect.poll(() => upstream.waiting()).toBe(3);
    expect(stats()).toMatchObject({ leased: 3, waiting: 2 });
    while (upstream.waiting() > 0 || stats().leased > 0) {
      upstream.open();
      await expect.poll(() => upstream.waiting() > 0 || stats().leased === 0).toBe(true);
    }
    for (const r of await Promise.all(burst)) expect(text(r)).toMatch(/:done$/);
    // Refilled after the burst to maxSessions spares, not just prewarm's one.
    await expect.poll(() => stats()).toMatchObject({ spares: 3, warming: 0, leased: 0 });
    expect(stats().open).toBe(3);

    // Not yet idle long enough: the spares stay.
    await clock.advance(IDLE_MS - 1);
    expect(stats().spares).toBe(3);
    // Idle: back to prewarm, and the surplus sessions are closed.
    await clock.advance(1);
    await expect.poll(() => stats()).toMatchObject({ spares: 1, open: 1 });

    // The one spare left serves the next call at once; a lone call grows nothing.
    const one = wait();
    await expect.poll(() => upstream.waiting()).toBe(1);
    upstream.open();
    expect(text(await one)).toMatch(/:done$/);
    await expect.poll(() => stats()).toMatchObject({ spares: 1, open: 1, leased: 0 });
  });

  it("replaces a taken spare after a short call, never while its answer is on the way", async () => {
    const clock = new FakeClock();
    const upstream = build({ session: "isolated", prewarm: 1, maxSessions: 4 }, clock);
    await proxy!.start();
    await expect.poll(() => stats().spares).toBe(1);

    const call = wait();
    await expect.poll(() => upstream.waiting()).toBe(1);
    // No spawn while the call runs: the replacement waits for it to end (or REFILL_DEFER_MS).
    expect(stats()).toMatchObject({ leased: 1, spares: 0, warming: 0, open: 1 });
    upstream.open();
    expect(text(await call)).toMatch(/:done$/);
    // The call ended: its replacement starts without the defer timer.
    await expect.poll(() => stats()).toMatchObject({ leased: 0, spares: 1, warming: 0, open: 1 });
    expect(upstream.instances()).toBe(2);
  });

  it("replaces a taken spare while a long call runs, never holding more than maxSessions", async () => {
    const clock = new FakeClock();
    const upstream = build({ session: "isolated", prewarm: 1, maxSessions: 2 }, clock);
    await proxy!.start();
    await expect.poll(() => stats().spares).toBe(1);

    // The first call takes the spare; it runs past REFILL_DEFER_MS, so its replacement starts
    // while it runs and is ready before it ends.
    const first = wait();
    await expect.poll(() => upstream.waiting()).toBe(1);
    expect(stats()).toMatchObject({ leased: 1, spares: 0, warming: 0, open: 1 });
    await clock.advance(REFILL_DEFER_MS);
    await expect.poll(() => stats()).toMatchObject({ leased: 1, spares: 1, open: 2 });
    // The second takes that one; no room is left for a third session, spare or call.
    const second = wait();
    await expect.poll(() => upstream.waiting()).toBe(2);
    const third = wait();
    await expect.poll(() => stats().waiting).toBe(1);
    expect(stats()).toMatchObject({ leased: 2, spares: 0, warming: 0, open: 2 });
    // The spare discovery used, and its replacement: nothing more was opened.
    expect(upstream.instances()).toBe(2);

    // As the first two end and their sessions close, the third gets a slot.
    upstream.open();
    await expect.poll(() => upstream.waiting()).toBe(1);
    expect(stats()).toMatchObject({ leased: 1, waiting: 0 });
    upstream.open();
    for (const r of await Promise.all([first, second, third])) expect(text(r)).toMatch(/:done$/);
    await expect.poll(() => stats()).toMatchObject({ leased: 0, waiting: 0, spares: 2 });
    expect(stats().open).toBe(2);
  });

  it("keeps no spares for prewarm 0, burst or not", async () => {
    const clock = new FakeClock();
    const upstream = build({ session: "isolated", prewarm: 0, maxSessions: 4 }, clock);
    await proxy!.start();
    const burst = [wait(), wait()];
    await expect.poll(() => upstream.waiting()).toBe(2);
    upstream.open();
    await Promise.all(burst);
    await expect.poll(() => stats()).toMatchObject({ leased: 0, open: 0 });
    expect(stats().spares + stats().warming).toBe(0);
  });
});
