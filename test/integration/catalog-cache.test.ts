/**
 * The persistent catalog cache and `start: "lazy"` servers, with the real mcpx (spawned, or built
 * in-process where time must be driven) and a real stdio fixture upstream. Each test has its own
 * cache folder; upstream processes are counted from /proc.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig, type Config } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { launchKey } from "../../src/registry/catalog-cache.js";
import { FakeClock } from "../helpers/clock.js";
import { quietLogger } from "../helpers/inmemory.js";
import {
  descendants,
  eventually,
  fixtureServer,
  newCacheHome,
  onToolsChanged,
  startStdio,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

const describeText = async (client: Awaited<ReturnType<typeof startStdio>>["client"]) =>
  (await client.listTools()).tools.find((t) => t.name === "describe")?.description ?? "";

/** The cache entries (files) under an XDG_CACHE_HOME. */
function entries(cacheHome: string): string[] {
  const dir = path.join(cacheHome, "mcpx", "catalogs");
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
}

/** A fixture that starts only while `release` exists (a start the test holds up at will). */
function heldConfig() {
  const dir = tempDir();
  const release = path.join(dir, "release");
  writeFileSync(release, "");
  const file = writeConfig(
    { mcpServers: { slow: fixtureServer("faulty.mjs", { FAULT_START_UNTIL: release }) } },
    dir,
  );
  return {
    file,
    hold: () => rmSync(release, { force: true }),
    release: () => writeFileSync(release, ""),
  };
}

/** Run mcpx once on `file` so its catalog lands in `cacheHome`. */
async function fillCache(file: string, cacheHome: string): Promise<void> {
  const first = await startStdio(file, [], { cacheHome });
  expect(await describeText(first.client)).toMatch(/slow: .*echo/);
  await first.close();
  await eventually(() => entries(cacheHome).length === 1, 10_000, "the cache entry");
}

describe("persistent catalog cache (spawned mcpx)", () => {
  it("second start: the first tools/list answers at once from the cache; a call waits for the server and succeeds", async () => {
    const cacheHome = newCacheHome();
    const { file, hold, release } = heldConfig();
    try {
      await fillCache(file, cacheHome);
      // From now on the server cannot start until release(): as slow as the test wants.
      hold();
      const second = await startStdio(file, [], { cacheHome, waitReady: false });
      try {
        // The server is held: whatever it names, the list came from the cache, not after the
        // bounded first wait (that list would say [starting]). How soon: `npm run bench -- startup`.
        const listed = await describeText(second.client);
        expect(listed).toMatch(/slow: .*echo/);
        expect(listed).not.toMatch(/\[starting\]/);
        const catalog = await second.client.callTool({ name: "describe", arguments: {} });
        expect(text(catalog)).toMatch(/slow .*\[starting; catalog from cache\]/);

        const call = second.client.callTool({
          name: "call",
          arguments: { method: "slow.echo", arguments: { message: "waited" } },
        });
        release();
        expect(text(await call)).toBe("waited");
      } finally {
        release();
        await second.close();
      }
    } finally {
      release();
    }
  });

  it("sends tools/list_changed when the live catalog differs from the cached one", async () => {
    const cacheHome = newCacheHome();
    const { file, hold, release } = heldConfig();
    try {
      await fillCache(file, cacheHome);
      // The cached catalog names a tool the server no longer has.
      const entry = path.join(cacheHome, "mcpx", "catalogs", entries(cacheHome)[0]!);
      const saved = JSON.parse(readFileSync(entry, "utf8")) as {
        catalog: { tools: { name: string }[] };
      };
      for (const t of saved.catalog.tools) if (t.name === "echo") t.name = "echo_before";
      writeFileSync(entry, JSON.stringify(saved));
      hold();
      const second = await startStdio(file, [], { cacheHome, waitReady: false });
      try {
        let changed = 0;
        await onToolsChanged(second.client, () => (changed += 1));
        const before = await describeText(second.client);
        expect(before).toContain("echo_before");
        release();
        await eventually(() => changed > 0, 15_000, "tools/list_changed");
        const after = await describeText(second.client);
        expect(after).not.toContain("echo_before");
        expect(after).toMatch(/slow: .*echo/);
        // The entry now holds the live catalog.
        await eventually(
          () => !readFileSync(entry, "utf8").includes("echo_before"),
          10_000,
          "the refreshed entry",
        );
      } finally {
        await second.close();
      }
    } finally {
      release();
    }
  });

  it('start: "lazy": discovered once then closed; next start lists it with no process; the first call starts it', async () => {
    const cacheHome = newCacheHome();
    const dir = tempDir();
    const starts = path.join(dir, "starts");
    const file = writeConfig(
      {
        mcpServers: {
          lazy: {
            ...fixtureServer("faulty.mjs", { FAULT_FAIL_STARTS: "0", FAULT_STATE_FILE: starts }),
            start: "lazy",
          },
        },
      },
      dir,
    );
    const startCount = () => Number(readFileSync(starts, "utf8"));

    const first = await startStdio(file, [], { cacheHome });
    try {
      expect(await describeText(first.client)).toMatch(/lazy: .*echo/);
      await eventually(() => descendants(first.pid).length === 0, 10_000, "the lazy server closed");
      expect(startCount()).toBe(1);
    } finally {
      await first.close();
    }
    await eventually(() => entries(cacheHome).length === 1, 10_000, "the cache entry");

    const second = await startStdio(file, [], { cacheHome });
    try {
      expect(await describeText(second.client)).toMatch(/lazy: .*echo/);
      const catalog = text(await second.client.callTool({ name: "describe", arguments: {} }));
      expect(catalog).toMatch(/lazy .*\[not running: starts on first use\]/);
      expect(descendants(second.pid)).toEqual([]);
      expect(startCount()).toBe(1);

      const result = await second.client.callTool({
        name: "call",
        arguments: { method: "lazy.echo", arguments: { message: "woke" } },
      });
      expect(text(result)).toBe("woke");
      expect(startCount()).toBeGreaterThanOrEqual(2);
      expect(descendants(second.pid).length).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  });
});

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function config(servers: Record<string, unknown>, dir: string): Config {
  return parseConfig({ mcpServers: servers }, path.join(dir, "mcpx.json"), {});
}

describe("persistent catalog cache (in-process)", () => {
  it("keeps entries 0600 with no env value, and gives a server whose launch changed a fresh entry", async () => {
    const dir = tempDir();
    const cacheDir = path.join(tempDir(), "mcpx");
    const secret = "sk-live-4f3e2d1c0b9a";
    const withEnv = (value: string) =>
      config({ f: fixtureServer("faulty.mjs", { API_KEY: value }) }, dir);

    proxy = createProxy(withEnv(secret), { logger: quietLogger(), cacheDir });
    expect(proxy.context.registry.server("f")?.catalogFrom).toBeUndefined();
    await proxy.start();
    await proxy.close();
    const file = path.join(cacheDir, "catalogs", `${launchKey(withEnv(secret).servers[0]!)}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).not.toContain(secret);
    expect(readFileSync(file, "utf8")).toContain('"echo"');

    // Same launch: its catalog is there before any discovery.
    proxy = createProxy(withEnv(secret), { logger: quietLogger(), cacheDir });
    const cached = proxy.context.registry.server("f")!;
    expect(cached.catalogFrom).toBe("cache");
    expect(cached.tools.map((t) => t.name)).toContain("echo");
    await proxy.close();

    // Another env value is another launch: no catalog until discovered, then its own entry.
    proxy = createProxy(withEnv("sk-live-other-value"), { logger: quietLogger(), cacheDir });
    expect(proxy.context.registry.server("f")?.catalogFrom).toBeUndefined();
    expect(proxy.context.registry.server("f")?.tools).toEqual([]);
    await proxy.start();
    expect(proxy.context.registry.server("f")?.catalogFrom).toBe("live");
    await proxy.close();
    expect(
      readdirSync(path.join(cacheDir, "catalogs")).filter((f) => f.endsWith(".json")),
    ).toHaveLength(2);
  });

  it("ignores a corrupt entry with one log line and rebuilds it from the server", async () => {
    const dir = tempDir();
    const cacheDir = path.join(tempDir(), "mcpx");
    const cfg = config({ f: fixtureServer("faulty.mjs") }, dir);
    const file = path.join(cacheDir, "catalogs", `${launchKey(cfg.servers[0]!)}.json`);
    proxy = createProxy(cfg, { logger: quietLogger(), cacheDir });
    await proxy.start();
    await proxy.close();
    writeFileSync(file, '{"format":1,"tools":[');

    const lines: string[] = [];
    proxy = createProxy(cfg, { logger: quietLogger(lines), cacheDir });
    expect(lines.filter((l) => l.includes("corrupt"))).toHaveLength(1);
    expect(proxy.context.registry.server("f")?.catalogFrom).toBeUndefined();
    await proxy.start();
    await proxy.close();
    expect(lines.filter((l) => l.includes("corrupt"))).toHaveLength(1);
    const rebuilt = JSON.parse(readFileSync(file, "utf8")) as { catalog: { tools: unknown[] } };
    expect(rebuilt.catalog.tools.length).toBeGreaterThan(0);
  });

  it("closes a lazy server after idleTimeout without calls (injected clock), and restarts it on the next call", async () => {
    const dir = tempDir();
    const cacheDir = path.join(tempDir(), "mcpx");
    const clock = new FakeClock();
    const cfg = config(
      { lazy: { ...fixtureServer("faulty.mjs"), start: "lazy", idleTimeout: 1_000 } },
      dir,
    );
    proxy = createProxy(cfg, { logger: quietLogger(), clock, cacheDir });
    await proxy.start();
    const state = () => proxy!.context.registry.server("lazy")!;
    // No cache entry: started once to discover it, then closed.
    expect(state().status).toBe("ready");
    await eventually(() => state().running === false, 10_000, "closed after discovery");
    await eventually(() => descendants(process.pid).length === 0, 10_000, "no upstream process");

    const pid = text(await proxy.context.executor.call("lazy.pid", {}));
    expect(state().running).toBe(true);
    await clock.advance(999);
    expect(state().running).toBe(true);
    expect(descendants(process.pid).length).toBeGreaterThan(0);
    await clock.advance(1);
    await eventually(() => state().running === false, 10_000, "closed when idle");
    await eventually(() => descendants(process.pid).length === 0, 10_000, "no upstream process");
    // Not down: a lazy server that is not running is ready to start.
    expect(state().status).toBe("ready");
    // Health checks leave it alone: a ping would start it.
    await clock.advance(cfg.health.intervalMs * 3);
    expect(descendants(process.pid)).toEqual([]);
    expect(state().running).toBe(false);
    expect(state().health.lastCheckAt).toBeUndefined();

    const again = text(await proxy.context.executor.call("lazy.pid", {}));
    expect(again).not.toBe(pid);
    expect(state().running).toBe(true);
  });
});
