/**
 * 2025-era session state shared by replicas through Redis (issue 31): a real redis-server, two
 * mcpx replicas with `"redis"` in one config behind real nginx round-robin, a real SDK client in
 * the 2025 era. The level a client sets through one replica filters the log messages of calls
 * the other runs; resource updates made on the replica without the client's GET stream reach
 * that stream in order, for subscriptions made through either replica; a session active on one
 * replica is not ended for idleness by the other; a task's notifications/tasks/status from the
 * replica running it reach the replica holding the session's GET stream, in order.
 *
 * Needs nginx and redis-server; skipped without them, except with MCPX_REQUIRE_NGINX=1 (.ci/run).
 */
import { writeFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newClient } from "../helpers/clients.js";
import { eventually } from "../helpers/eventually.js";
import { findNginx, serialFetch, type RunningNginx } from "../helpers/nginx.js";
import { fixtureServer, text, writeConfig } from "../helpers/proxy.js";
import { findRedis, type RunningRedis } from "../helpers/redis.js";
import { startReplicaSet, type Replica, type ReplicaSet } from "../helpers/replicas.js";
import { rawTaskCall, statusClient } from "../helpers/tasks.js";

const NGINX = findNginx();
const REDIS = findRedis();
const REQUIRED = process.env.MCPX_REQUIRE_NGINX === "1";
const ready = Boolean(NGINX && REDIS);
if (!ready && !REQUIRED) {
  console.warn("replicas-sessions.test.ts: SKIPPED, needs nginx and redis-server");
}

function config(redisUrl: string, description?: string) {
  return {
    sessionSecret: "redis-sessions-secret-0123456789abcdef0123456789",
    redis: redisUrl,
    sessionIdle: IDLE_MS,
    // Shared session: a call and a subscription land on one upstream process per replica.
    mcpServers: {
      modern: {
        ...fixtureServer("modern.mjs"),
        session: "shared",
        ...(description && { description }),
      },
      // Runs its tools as tasks, with a status message halfway (test/fixtures/upstreams/tasks.mjs).
      jobs: fixtureServer("tasks.mjs"),
    },
    callers: { alice: "default" },
  };
}

/** Short, so the idle case takes seconds: a replica writes last-seen every 500 ms, sweeps every 1 s. */
const IDLE_MS = 2_000;

describe.skipIf(!ready && !REQUIRED)(
  "2025-era sessions shared by two replicas through Redis",
  () => {
    let set: ReplicaSet | undefined;
    let redis: RunningRedis;
    let file: string;
    let replicas: Replica[] = [];
    let nginx: RunningNginx | undefined;
    const clients: Client[] = [];

    beforeAll(async () => {
      if (!NGINX || !REDIS)
        throw new Error("MCPX_REQUIRE_NGINX=1 but nginx or redis-server is missing");
      set = await startReplicaSet({ nginx: NGINX, redis: REDIS }, (url) =>
        writeConfig(config(url)),
      );
      ({ redis, replicas, nginx } = set);
      file = set.file;
    }, 60_000);

    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await set?.close();
    });

    /** A 2025 client through nginx, once its GET stream is open (on the replica `stream` names). */
    async function connect() {
      const lb = serialFetch();
      const client = newClient("legacy", "legacy-client");
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${nginx!.base}/mcp/alice`), { fetch: lb.fetch }),
      );
      clients.push(client);
      await eventually(
        () => lb.served.some((s) => s.http === "GET" && s.status === 200),
        10_000,
        "the GET stream to open",
      );
      const stream = lb.served.find((s) => s.http === "GET" && s.status === 200)!.replica;
      const call = async (method: string, args: Record<string, unknown>) => {
        const result = await client.callTool({
          name: "call",
          arguments: { method, arguments: args },
        });
        return { result, replica: lb.served.at(-1)!.replica };
      };
      return { client, lb, stream, call, replica: () => lb.served.at(-1)!.replica };
    }

    it("filters a call's log messages on either replica by the level set through one", async () => {
      const alice = await connect();
      const levels: string[] = [];
      alice.client.setNotificationHandler("notifications/message", (n) => {
        levels.push(n.params.level);
      });
      await alice.client.setLoggingLevel("error");
      const setOn = alice.replica();
      // Round-robin: two calls in a row run on both replicas; each logs below, then at, the level.
      const ran: { replica: string; logged: string[] }[] = [];
      for (const level of ["warning", "warning", "error", "error"]) {
        levels.length = 0;
        const { result, replica } = await alice.call("modern.log", { level, message: level });
        expect(text(result)).toMatch(/^logged /);
        ran.push({ replica, logged: [...levels] });
      }
      expect(new Set(ran.slice(0, 2).map((r) => r.replica)).size).toBe(2);
      expect(ran.some((r) => r.replica !== setOn)).toBe(true);
      // Warnings (the 2025 default level lets them through) reached the client from neither
      // replica; errors from both.
      expect(ran.map((r) => r.logged)).toEqual([[], [], ["error"], ["error"]]);
    });

    it("brings resource updates made on the replica without the GET stream to it, in order", async () => {
      const alice = await connect();
      const updates: string[] = [];
      alice.client.setNotificationHandler("notifications/resources/updated", (n) => {
        updates.push(n.params.uri);
      });
      const uris = [1, 2, 3, 4, 5].map((i) => `modern://item/${i}`);
      const subscribedOn = new Set<string>();
      for (const uri of uris) {
        await alice.client.subscribeResource({ uri });
        subscribedOn.add(alice.replica());
      }
      // Subscriptions went through both replicas, and each replica touches all five once.
      expect(subscribedOn.size).toBe(2);
      const touchedOn: string[] = [];
      for (let i = 0; i < 2; i++) {
        const { replica } = await alice.call("modern.touch", { uri: uris[0], then: uris.slice(1) });
        touchedOn.push(replica);
        await eventually(() => updates.length >= 5 * (i + 1), 5_000, `updates of touch ${i + 1}`);
      }
      expect(touchedOn).toContain(alice.stream);
      expect(touchedOn.some((r) => r !== alice.stream)).toBe(true);
      // Each exactly once, in the order the upstream sent them, whichever replica heard them.
      expect(updates).toEqual([...uris, ...uris]);

      // Unsubscribed through either replica: no more updates of those from either. A URI still
      // subscribed, touched last, marks the end of each touch (relays keep the upstream's order).
      for (const uri of uris) await alice.client.unsubscribeResource({ uri });
      const last = "modern://item/9";
      await alice.client.subscribeResource({ uri: last });
      for (let i = 0; i < 2; i++) {
        await alice.call("modern.touch", { uri: uris[0], then: [...uris.slice(1), last] });
        await eventually(() => updates.length >= 11 + i, 10_000, `the end of touch ${i + 1}`);
      }
      expect(updates.slice(10)).toEqual([last, last]);
    });

    it("brings a task's statuses from the replica running it to the one holding the GET stream, in order", async () => {
      const alice = await statusClient(`${nginx!.base}/mcp/alice`, "legacy-client");
      clients.push(alice.client);
      const stream = alice.served.find((s) => s.http === "GET" && s.status === 200)!.replica;
      const elsewhere = replicas.find((r) => !stream.endsWith(`:${r.port}`))!;
      expect(stream.endsWith(`:${elsewhere.port}`)).toBe(false);
      // The task call straight to the replica without the stream: its statuses must cross.
      const { task } = await rawTaskCall(
        `http://127.0.0.1:${elsewhere.port}/mcp/alice`,
        alice.transport,
        {
          name: "call",
          arguments: { method: "jobs.slow", arguments: { ms: 600, text: "crossing" } },
          task: {},
        },
      );
      await eventually(
        () => alice.statuses.some((s) => s.status === "completed"),
        15_000,
        "the completed status on the other replica's GET stream",
      );
      expect(alice.statuses.map((s) => [s.taskId, s.status, s.statusMessage])).toEqual([
        [task.taskId, "working", "halfway"],
        [task.taskId, "completed", undefined],
      ]);
    });

    it("keeps a session active on one replica alive on the other past sessionIdle", async () => {
      const [a, b] = replicas as [Replica, Replica];
      const post = async (port: number, body: unknown, sid?: string) => {
        const res = await fetch(`http://127.0.0.1:${port}/mcp/alice`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
            ...(sid !== undefined && { "mcp-session-id": sid }),
          },
          body: JSON.stringify(body),
        });
        await res.text();
        return res;
      };
      const init = await post(a.port, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "idle-check", version: "1.0.0" },
        },
      });
      const sid = init.headers.get("mcp-session-id")!;
      expect(sid).toBeTruthy();
      expect(
        (await post(a.port, { jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status,
      ).toBe(202);
      // Only B sees it for 2.5 × sessionIdle (pacing, not synchronization: idleness is time):
      // A's sweep finds it idle here several times and must ask Redis before ending it.
      const until = Date.now() + 2.5 * IDLE_MS;
      for (let id = 1; Date.now() < until; id++) {
        const ping = await post(b.port, { jsonrpc: "2.0", id, method: "ping" }, sid);
        expect(ping.status).toBe(200);
        await delay(200);
      }
      for (const r of [a, b]) {
        const res = await post(r.port, { jsonrpc: "2.0", id: 99, method: "tools/list" }, sid);
        expect(res.status, `replica ${r.port}`).toBe(200);
      }
    });

    it("tells a client of a config change once, though every replica reloads it", async () => {
      const alice = await connect();
      let changed = 0;
      alice.client.setNotificationHandler("notifications/tools/list_changed", () => {
        changed += 1;
      });
      const reloads = () => replicas.map((r) => r.stderr().split("config reloaded").length - 1);
      for (const [i, description] of ["first", "second"].entries()) {
        const before = reloads();
        writeFileSync(file, JSON.stringify(config(redis.url, description), null, 2));
        await eventually(
          () => reloads().every((n, r) => n > before[r]!),
          15_000,
          "both replicas to reload",
        );
        await eventually(() => changed >= i + 1, 10_000, `list_changed ${i + 1}`);
      }
      // Two changes (a description in the catalog), each told once: a second copy of the first
      // would have come before the second.
      await alice.client.listTools();
      expect(changed).toBe(2);
    });

    // Last: it stops Redis.
    it("falls back to each replica's own state while Redis is away, logged once, no call failing", async () => {
      const alice = await connect();
      await redis.stop();
      try {
        await eventually(
          async () => {
            const health = await Promise.all(
              replicas.map((r) =>
                fetch(`http://127.0.0.1:${r.port}/healthz`).then(
                  (res) => res.json() as Promise<{ shared?: { reachable: boolean } }>,
                ),
              ),
            );
            return health.every((h) => h.shared?.reachable === false);
          },
          10_000,
          "both replicas to see Redis gone",
        );
        const levels: string[] = [];
        alice.client.setNotificationHandler("notifications/message", (n) => {
          levels.push(n.params.level);
        });
        await alice.client.setLoggingLevel("error");
        await alice.client.subscribeResource({ uri: "modern://item/1" });
        const ran = new Set<string>();
        for (let i = 0; i < 4; i++) {
          const { result, replica } = await alice.call("modern.log", {
            level: "error",
            message: "e",
          });
          expect(result.isError, text(result)).toBeFalsy();
          ran.add(replica);
        }
        expect(ran.size).toBe(2);
        expect(levels.filter((l) => l === "error")).toHaveLength(4);
      } finally {
        await redis.start();
      }
      // Said once per replica that needed Redis for a session, however many requests failed it.
      const said = replicas.map(
        (r) => r.stderr().match(/2025-era sessions: could not .* in Redis/g)?.length ?? 0,
      );
      expect(said.every((n) => n <= 1)).toBe(true);
      expect(said.some((n) => n === 1)).toBe(true);
      expect(replicas.map((r) => r.stderr()).join("")).not.toMatch(/-32603|internal error/i);
    });
  },
);
