/**
 * Trust pins shared by replicas through Redis (issue 31), with real parts: one redis-server, the
 * built mcpx as two replicas over stdio, each with its own state folder (two machines), one
 * config with `"trust": "hold"` and `redis` with an `encryptionKey`, and the defs.mjs fixture
 * whose definitions change between starts. A machine that never saw the server holds its changed
 * tools by the pins in Redis; one `mcpx trust approve` on a third machine releases the held tool
 * on both running replicas, without restart; Redis holds the pins sealed.
 *
 * Needs redis-server; skipped without it, except with MCPX_REQUIRE_NGINX=1 (.ci/run).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cacheEnv,
  eventually,
  fixtureServer,
  newCacheHome,
  runMcpx,
  startStdio,
  tempDir,
  text,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";
import { findRedis, startRedis, type RunningRedis } from "../helpers/redis.js";

const REDIS = findRedis();
const REQUIRED = process.env.MCPX_REQUIRE_NGINX === "1";
const KEY = "trust-redis-key-0123456789abcdef01234567";

const schema = (props: Record<string, string>) => ({
  type: "object",
  properties: Object.fromEntries(Object.entries(props).map(([k, t]) => [k, { type: t }])),
});
const V1 = {
  tools: [
    { name: "add", description: "Add two numbers.", inputSchema: schema({ a: "number" }) },
    { name: "mul", description: "Multiply two numbers.", inputSchema: schema({ a: "number" }) },
  ],
};
/** mul's schema changed: held under "hold" until approved. */
const V2 = {
  tools: [
    V1.tools[0],
    {
      name: "mul",
      description: "Multiply two numbers.",
      inputSchema: schema({ a: "number", b: "number" }),
    },
  ],
};

if (!REDIS && !REQUIRED) console.warn("trust-redis.test.ts: SKIPPED, needs redis-server");

describe.skipIf(!REDIS && !REQUIRED)(
  "trust pins shared through Redis",
  { timeout: 120_000 },
  () => {
    let redis: RunningRedis;

    beforeAll(async () => {
      if (!REDIS) throw new Error("MCPX_REQUIRE_NGINX=1 but redis-server is missing");
      redis = await startRedis(REDIS);
    });

    afterAll(async () => {
      await redis?.stop();
    });

    const machine = () => ({ ...cacheEnv(newCacheHome()), MCPX_REDIS_KEY: KEY });
    const call = (r: Running, method: string) =>
      r.client.callTool({ name: "call", arguments: { method, arguments: { a: 1 } } });
    const describeAll = async (r: Running) =>
      text(await r.client.callTool({ name: "describe", arguments: {} }));

    it("an approval on one machine releases the held change on every replica, without restart; pins in Redis are sealed", async () => {
      const dir = tempDir();
      const defs = path.join(dir, "defs.json");
      writeFileSync(defs, JSON.stringify(V1));
      const file = writeConfig(
        {
          trust: "hold",
          sessionSecret: "trust-redis-test-secret-0123456789abcdef",
          redis: { url: redis.url, encryptionKey: "${MCPX_REDIS_KEY}" },
          mcpServers: { defs: fixtureServer("defs.mjs", { DEFS_FILE: defs }) },
        },
        dir,
      );
      // Machine 1 pins V1 on first sight; the pins go to Redis.
      const first = await startStdio(file, [], { env: machine() });
      expect(await describeAll(first)).toMatch(/defs\.mul/);
      await first.close();

      writeFileSync(defs, JSON.stringify(V2));
      // Two more machines, neither of which saw V1: both hold mul by Redis's pins.
      const replicas = await Promise.all([
        startStdio(file, ["--log-level", "debug"], { env: machine() }),
        startStdio(file, ["--log-level", "debug"], { env: machine() }),
      ]);
      try {
        for (const r of replicas) {
          const held = await call(r, "defs.mul");
          expect(held.isError).toBe(true);
          expect(text(held)).toContain('Tool "defs.mul" is held');
          expect(text(await call(r, "defs.add"))).not.toContain("held");
        }
        // Approved on a fourth machine, by the command: every replica serves mul, no restart.
        const approved = await runMcpx(["trust", "approve", file, "defs.mul"], 20_000, machine());
        expect(approved.code, approved.stderr).toBe(0);
        expect(approved.stdout).toContain("defs: approved tool mul");
        for (const r of replicas) {
          await eventually(
            async () => !(await call(r, "defs.mul")).isError,
            10_000,
            "mul served after the approval elsewhere",
          ).catch((err: unknown) => {
            throw new Error(`${String(err)}\n${r.stderr()}`);
          });
        }

        // Redis holds the pins sealed: no definition text in clear.
        const client = new Redis(redis.url);
        try {
          const keys = await client.keys("*:values:pins:*");
          expect(keys.length).toBeGreaterThan(0);
          for (const key of keys) {
            const value = (await client.get(key)) ?? "";
            expect(value).toMatch(/^m1\.[A-Za-z0-9_-]+$/);
            expect(value).not.toContain("Multiply");
          }
        } finally {
          client.disconnect();
        }
      } finally {
        await Promise.all(replicas.map((r) => r.close()));
      }
      const logs = replicas.map((r) => r.stderr()).join("\n");
      expect(logs).not.toContain(KEY);
    });
  },
);
