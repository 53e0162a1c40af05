/**
 * OAuth sign-ins shared by replicas through Redis (issue 31), with real parts: oidc-provider as the
 * authorization server (test/helpers/oidc.ts), the OAuth-protected SDK fixture, one real
 * redis-server, and the built mcpx twice (two replicas over stdio, each with its own state
 * folder, as on two machines) with one config whose `redis` has an `encryptionKey`. One
 * `mcpx login` serves both; a refresh raced by two replicas happens once; Redis holds no token
 * and no key in clear; a wrong key and a Redis outage are clear errors, never a crash.
 *
 * Needs redis-server; skipped without it, except with MCPX_REQUIRE_NGINX=1 (.ci/run).
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/logger.js";
import { sessionKey } from "../../src/server/session-token.js";
import { openShared } from "../../src/shared/index.js";
import { SharedSignIns } from "../../src/upstream/oauth/shared-store.js";
import type { SignInRecord } from "../../src/upstream/oauth/store.js";
import { mcpxLogin } from "../helpers/oauth-login.js";
import { startAuthServer, type AuthServer } from "../helpers/oidc.js";
import {
  eventually,
  runMcpx,
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";
import { findRedis, startRedis, type RunningRedis } from "../helpers/redis.js";

const REDIS = findRedis();
const REQUIRED = process.env.MCPX_REQUIRE_NGINX === "1";
const KEY = "redis-key-7f3e9a1c5b2d4e6f8a0b1c2d3e4f5a6b";
const WRONG_KEY = "another-key-0000111122223333444455556666";

if (!REDIS && !REQUIRED) console.warn("oauth-redis.test.ts: SKIPPED, needs redis-server");

describe.skipIf(!REDIS && !REQUIRED)("OAuth sign-ins shared through Redis, sealed", () => {
  let as: AuthServer;
  let fixture: { url: string; base: string; child: ChildProcess };
  let redis: RunningRedis;
  /** Everything mcpx wrote, to grep for secrets at the end. */
  const outputs: string[] = [];

  beforeAll(async () => {
    if (!REDIS) throw new Error("MCPX_REQUIRE_NGINX=1 but redis-server is missing");
    [as, redis] = await Promise.all([startAuthServer(), startRedis(REDIS)]);
    fixture = await startHttpFixture({ ISSUER: as.issuer }, "oauth-protected.mjs");
  }, 60_000);

  afterAll(async () => {
    if (fixture) await stop(fixture.child);
    await as?.close();
    await redis?.stop();
  });

  /** A config every replica shares, and a fresh state folder per "machine". */
  function setup(health: Record<string, number> = {}) {
    const dir = tempDir("mcpx-oauth-redis-");
    const config = writeConfig(
      {
        sessionSecret: "oauth-redis-test-secret-0123456789abcdef",
        redis: { url: redis.url, encryptionKey: "${MCPX_REDIS_KEY}" },
        mcpServers: { remote: { type: "http", url: fixture.url } },
        health: { retryInitial: 100, retryMax: 300, interval: 300, failureThreshold: 1, ...health },
      },
      dir,
    );
    let machines = 0;
    const machine = (key = KEY): Record<string, string> => {
      const state = path.join(dir, `machine-${++machines}`);
      mkdirSync(state);
      return { XDG_STATE_HOME: state, MCPX_REDIS_KEY: key };
    };
    return { config, machine };
  }

  /** The sign-in store as the replicas see it (same namespace, same key), for the test to read. */
  async function withStore<T>(
    config: string,
    fn: (store: SharedSignIns) => Promise<T>,
    key = KEY,
  ): Promise<T> {
    const loaded = loadConfig(config, { ...process.env, MCPX_REDIS_KEY: key });
    const logger = createLogger({ level: "silent" });
    const shared = openShared({ redis: loaded.redis!, deployment: sessionKey(loaded), logger });
    try {
      return await fn(new SharedSignIns(shared, loaded.redisKey!));
    } finally {
      await shared.close();
    }
  }

  const call = (running: Running, tool = "whoami", args: Record<string, unknown> = {}) =>
    running.client.callTool({
      name: "call",
      arguments: { tool: `remote.${tool}`, arguments: args },
    });
  const describeRemote = async (running: Running) =>
    text(await running.client.callTool({ name: "describe", arguments: { server: "remote" } }));

  async function replica(config: string, env: Record<string, string>): Promise<Running> {
    const running = await startStdio(config, ["--log-level", "debug"], { env });
    return running;
  }

  it("one mcpx login serves both replicas, waiting ones pick it up without restart; no token file on any machine", async () => {
    // Reconnects an hour apart: only the sign-in's notice through Redis brings them back in time.
    const { config, machine } = setup({ retryInitial: 3_600_000, retryMax: 3_600_000 });
    const envs = [machine(), machine()];
    const [a, b] = await Promise.all(envs.map((env) => replica(config, env)));
    try {
      for (const r of [a!, b!]) expect(await describeRemote(r)).toContain("needs sign-in");
      const login = await mcpxLogin(config, "remote", machine());
      outputs.push(login.stderr);
      expect(login.code, login.stderr).toBe(0);
      expect(login.stderr).toContain(`tokens in Redis at 127.0.0.1:${redis.port}/0`);
      for (const r of [a!, b!]) {
        await eventually(async () => (await describeRemote(r)).includes("whoami"), 15_000);
        const whoami = await call(r);
        expect(whoami.isError, text(whoami)).toBeFalsy();
        expect(text(whoami)).toContain("user-1");
      }
      // The sign-in is in Redis only: no machine holds a token file.
      for (const env of envs) {
        expect(existsSync(path.join(env.XDG_STATE_HOME!, "mcpx", "oauth"))).toBe(false);
      }
    } finally {
      await Promise.all([a!.close(), b!.close()]);
      outputs.push(a!.stderr(), b!.stderr());
    }
  });

  it("two replicas refreshing an expired token at once spend the refresh token once", async () => {
    const { config, machine } = setup();
    expect((await mcpxLogin(config, "remote", machine())).code).toBe(0);
    const before = await withStore(config, (s) => s.read(fixture.url));
    expect(before?.tokens?.refresh_token).toBeTruthy();
    // Expired by the clock: both replicas refresh as they connect, at the same time.
    await withStore(config, (s) =>
      s.write({ ...before!, tokens: { ...before!.tokens!, expiresAt: Date.now() - 1_000 } }),
    );
    const refreshes = as.refreshes();
    const refused = as.refusedRefreshes();
    const [a, b] = await Promise.all([replica(config, machine()), replica(config, machine())]);
    try {
      for (const r of [a, b]) {
        const whoami = await call(r);
        expect(whoami.isError, text(whoami)).toBeFalsy();
        expect(text(whoami)).toContain("user-1");
      }
      expect(as.refreshes()).toBe(refreshes + 1);
      expect(as.refusedRefreshes()).toBe(refused);
      const after = await withStore(config, (s) => s.read(fixture.url));
      expect(after?.tokens?.refresh_token).not.toBe(before?.tokens?.refresh_token);
    } finally {
      await Promise.all([a.close(), b.close()]);
      outputs.push(a.stderr(), b.stderr());
    }
  });

  it("Redis holds no token, client secret or key in clear (SCAN + GET of every key)", async () => {
    const { config, machine } = setup();
    expect((await mcpxLogin(config, "remote", machine())).code).toBe(0);
    const record = (await withStore(config, (s) => s.read(fixture.url))) as SignInRecord;
    const secrets = [
      record.tokens!.access_token,
      record.tokens!.refresh_token!,
      ...(typeof record.client.client_secret === "string" ? [record.client.client_secret] : []),
      KEY,
    ];
    const client = new Redis(redis.url);
    try {
      const keys: string[] = [];
      let cursor = "0";
      do {
        const [next, batch] = await client.scan(cursor, "COUNT", 100);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== "0");
      const sealed = keys.filter((k) => k.includes(":values:oauth:"));
      expect(sealed.length).toBeGreaterThan(0);
      for (const key of keys) {
        const type = await client.type(key);
        if (type !== "string") continue;
        const value = (await client.get(key)) ?? "";
        for (const secret of secrets) expect(value.includes(secret), key).toBe(false);
        expect(key.includes(KEY)).toBe(false);
        if (sealed.includes(key)) {
          expect(value).toMatch(/^m1\.[A-Za-z0-9_-]+$/);
          expect(value).not.toContain("access_token");
        }
      }
    } finally {
      client.disconnect();
    }
  });

  it("a wrong encryptionKey is a clear error naming it, never a crash; the right key still reads", async () => {
    const { config, machine } = setup();
    expect((await mcpxLogin(config, "remote", machine())).code).toBe(0);
    await expect(withStore(config, (s) => s.read(fixture.url), WRONG_KEY)).rejects.toThrow(
      /redis\.encryptionKey does not open the sign-in in Redis/,
    );
    const wrong = await replica(config, machine(WRONG_KEY));
    try {
      const result = await call(wrong);
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("redis.encryptionKey");
      // Still serving: the proxy answers the next request.
      expect(await describeRemote(wrong)).toContain("redis.encryptionKey");
    } finally {
      await wrong.close();
      outputs.push(wrong.stderr());
    }
    const right = await withStore(config, (s) => s.read(fixture.url));
    expect(right?.tokens?.access_token).toBeTruthy();
  });

  it("Redis down: the call that needs the token names Redis; back up (empty), it needs sign-in, and a new login serves again", async () => {
    const { config, machine } = setup();
    expect((await mcpxLogin(config, "remote", machine())).code).toBe(0);
    const running = await replica(config, machine());
    try {
      expect(text(await call(running))).toContain("user-1");
      await redis.stop();
      const down = await call(running);
      expect(down.isError).toBe(true);
      expect(text(down)).toMatch(/Redis at 127\.0\.0\.1:\d+\/0 .*unreachable/);
      // Redis is back, empty (no persistence here): the sign-in is gone, said as such.
      await redis.start();
      await eventually(
        async () => text(await call(running)).includes("needs sign-in"),
        15_000,
        "needs sign-in after Redis came back empty",
      );
      expect((await mcpxLogin(config, "remote", machine())).code).toBe(0);
      await eventually(async () => text(await call(running)).includes("user-1"), 15_000);
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("no token, key or client secret in anything mcpx wrote (validate included)", async () => {
    const { config, machine } = setup();
    const validated = await runMcpx(["validate", config], 20_000, machine());
    expect(validated.code, validated.stderr).toBe(0);
    outputs.push(validated.stdout, validated.stderr);
    const all = outputs.join("\n");
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(WRONG_KEY);
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/); // a JWT
  });
});
