/**
 * A busy single-threaded upstream on a `shared` session: health checks travel over the session
 * our own long call occupies, so they time out. That is not an outage, and nothing may cut the
 * running call. In-process proxy, real stdio fixture, health driven by a fake clock.
 */
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { FakeClock } from "../helpers/clock.js";
import { quietLogger } from "../helpers/inmemory.js";
import { eventually, fixtureServer, tempDir, text } from "../helpers/proxy.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe("health checks of a busy shared upstream", () => {
  it("never marks it down or resets it while our own call keeps it busy", async () => {
    const dir = tempDir();
    const release = path.join(dir, "release");
    const lines: string[] = [];
    const clock = new FakeClock();
    const config = parseConfig(
      {
        mcpServers: { f: { ...fixtureServer("faulty.mjs"), session: "shared" } },
        health: { interval: 1000, timeout: 100, failureThreshold: 3, retryInitial: 1000 },
      },
      path.join(dir, "mcpx.json"),
      {},
    );
    proxy = createProxy(config, { logger: quietLogger(lines), clock });
    await proxy.start();
    const state = () => proxy!.context.registry.server("f")!;
    expect(state().status).toBe("ready");

    const call = proxy.context.executor.call("f.block", { until: release });
    await eventually(() => lines.some((l) => l.includes("blocking")), 10_000, "the call to block");
    // Five check intervals (more than failureThreshold), each ping timing out on the busy session.
    for (let i = 0; i < 5; i++) {
      await clock.advance(1000);
      const at = clock.now();
      await eventually(() => state().health.lastCheckAt === at, 5_000, `health check ${i + 1}`);
      expect(state().status).toBe("ready");
    }
    expect(state().health.consecutiveFailures).toBe(0);

    writeFileSync(release, "");
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("unblocked");
    expect(lines.join("\n")).not.toMatch(/f: (down|degraded)/);
    expect(existsSync(release)).toBe(true);
  });

  it("lets a running shared call finish when the pool is reset under it", async () => {
    const dir = tempDir();
    const release = path.join(dir, "release");
    const lines: string[] = [];
    const config = parseConfig(
      { mcpServers: { f: { ...fixtureServer("faulty.mjs"), session: "shared" } } },
      path.join(dir, "mcpx.json"),
      {},
    );
    proxy = createProxy(config, { logger: quietLogger(lines), clock: new FakeClock() });
    await proxy.start();
    const pool = proxy.context.registry.pool("f")!;
    const pidBefore = text(await proxy.context.executor.call("f.pid", {}));

    const call = proxy.context.executor.call("f.block", { until: release });
    await eventually(() => lines.some((l) => l.includes("blocking")), 10_000, "the call to block");
    await pool.reset();
    // New calls get a fresh session (a new process) while the old one finishes its call.
    const pidAfter = text(await proxy.context.executor.call("f.pid", {}));
    expect(pidAfter).not.toBe(pidBefore);

    writeFileSync(release, "");
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("unblocked");
    // The dropped session closes once its last call is done: one session left.
    await eventually(() => pool.stats().open === 1, 5_000, "the old session to close");
  });
});
