/**
 * Replicas that share state through Redis (issue 31): a real redis-server, two mcpx replicas with
 * `"redis"` in one config, behind real nginx round-robin (examples/nginx/mcpx.conf). A result
 * handle made on one replica pages on every replica; a second caller cannot read it; Redis
 * stopped mid-run leaves calls working and makes handle reads fail clearly, naming Redis, once
 * per outage in each replica's log and in /healthz, and everything works again once it is back.
 *
 * Needs nginx and redis-server; skipped without them, except with MCPX_REQUIRE_NGINX=1 (.ci/run).
 */
import path from "node:path";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { decode as decodeToon } from "@toon-format/toon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newClient, type Era } from "../helpers/clients.js";
import { eventually } from "../helpers/eventually.js";
import { findNginx, serialFetch, type RunningNginx } from "../helpers/nginx.js";
import { fixtureServer, tempDir, text, writeConfig } from "../helpers/proxy.js";
import { findRedis, type RunningRedis } from "../helpers/redis.js";
import { startReplicaSet, type Replica, type ReplicaSet } from "../helpers/replicas.js";
import { mkdirSync } from "node:fs";

const NGINX = findNginx();
const REDIS = findRedis();
const REQUIRED = process.env.MCPX_REQUIRE_NGINX === "1";

/** The rows replay.mjs's uniform_rows answers. */
function makeRows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `item-${i + 1}`,
    state: i % 3 === 0 ? "closed" : "open",
    created_at: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString(),
    score: (i * 37) % 100,
  }));
}

function config(redisUrl: string) {
  const dir = tempDir();
  const empty = path.join(dir, "no-recorded-tools");
  mkdirSync(empty);
  return writeConfig(
    {
      sessionSecret: "redis-test-secret-0123456789abcdef0123456789abcdef",
      redis: redisUrl,
      mcpServers: {
        replay: fixtureServer("replay.mjs", { REPLAY_EXTRA: "1", REPLAY_DIR: empty }),
        modern: fixtureServer("modern.mjs"),
      },
      callers: { alice: "default", bob: "default" },
    },
    dir,
  );
}

const next = (notice: string) => {
  const m = /resources\(\{ uri: "([^"]+)", offset: (\d+) \}\)/.exec(notice);
  return m ? { uri: m[1]!, offset: Number(m[2]) } : undefined;
};
const texts = (r: unknown) =>
  ((r as { content: { type: string; text?: string }[] }).content ?? [])
    .filter((b) => b.type === "text")
    .map((b) => b.text!);

const ready = Boolean(NGINX && REDIS);
if (!ready && !REQUIRED) {
  console.warn("replicas-redis.test.ts: SKIPPED, needs nginx and redis-server");
}

describe.skipIf(!ready && !REQUIRED)(
  "two replicas sharing state through Redis, behind nginx",
  () => {
    let set: ReplicaSet | undefined;
    let redis: RunningRedis;
    let replicas: Replica[] = [];
    let nginx: RunningNginx | undefined;
    const clients: Client[] = [];

    beforeAll(async () => {
      if (!NGINX || !REDIS)
        throw new Error("MCPX_REQUIRE_NGINX=1 but nginx or redis-server is missing");
      set = await startReplicaSet({ nginx: NGINX, redis: REDIS }, config);
      ({ redis, replicas, nginx } = set);
    }, 60_000);

    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await set?.close();
    });

    async function connect(era: Era, caller: string) {
      const lb = serialFetch();
      const client = newClient(era, `${era}-client`);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${nginx!.base}/mcp/${caller}`), {
          fetch: lb.fetch,
        }),
      );
      clients.push(client);
      const call = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args });
      return { client, lb, call, replica: () => lb.served.at(-1)!.replica };
    }

    describe.each(["modern", "legacy"] as const)("a %s client", (era) => {
      it("pages a 20,000-row result's handle on every read, whichever replica answers", async () => {
        const alice = await connect(era, "alice");
        const cut = await alice.call("call", {
          method: "replay.uniform_rows",
          arguments: { count: 20_000 },
        });
        const [notice, head] = texts(cut);
        const rows = [...(decodeToon(head!) as unknown[])];
        let at = next(notice!);
        expect(at, notice).toBeDefined();
        const readers: string[] = [];
        for (let read = 0; read < 6; read++) {
          const page = await alice.call("resources", at!);
          readers.push(alice.replica());
          expect(page.isError, texts(page)[0]).toBeFalsy();
          const [heading, data] = texts(page);
          rows.push(...(decodeToon(data!) as unknown[]));
          at = next(heading!);
        }
        // 6 of 6 reads paged, on both replicas, and the rows are exactly the tool's, in order.
        expect(new Set(readers).size).toBe(2);
        expect(rows).toEqual(makeRows(rows.length));
        expect(rows.length).toBeGreaterThan(6);
      });
    });

    it("never lets a second caller read the first's handle, on any replica", async () => {
      const alice = await connect("modern", "alice");
      const bob = await connect("modern", "bob");
      const cut = await alice.call("call", {
        method: "replay.uniform_rows",
        arguments: { count: 2_000 },
      });
      const at = next(texts(cut)[0]!)!;
      // Two reads in a row: round-robin sends them to both replicas.
      const seen = new Set<string>();
      for (let i = 0; i < 2; i++) {
        const theirs = await bob.call("resources", at);
        seen.add(bob.replica());
        expect(theirs.isError).toBe(true);
        expect(text(theirs)).toMatch(/^No result mcpx:\/\/results\//);
      }
      for (let i = 0; i < 2; i++) {
        const mine = await alice.call("resources", at);
        expect(mine.isError, text(mine)).toBeFalsy();
      }
      expect(seen.size).toBe(2);
    });

    it("cancels a 2025 client's call on the replica running it, the cancel sent to the other", async () => {
      const alice = await connect("legacy", "alice");
      const count = (line: string) => replicas.map((r) => r.stderr().split(line).length - 1);
      const callsBefore = count("modern: rpc tools/call");
      const controller = new AbortController();
      const running = alice.client
        .callTool(
          { name: "call", arguments: { method: "modern.slow", arguments: { ms: 30_000 } } },
          { signal: controller.signal },
        )
        .catch((err: unknown) => err);
      await eventually(
        () => alice.lb.served.some((s) => s.rpc === "tools/call"),
        10_000,
        "the call to reach a replica",
      );
      const ran = alice.lb.served.find((s) => s.rpc === "tools/call")!.replica;
      // Under way once the upstream has it (its `rpc tools/call` line, relayed into the replica's
      // log); the answer's headers above come before the call is even given a session.
      await eventually(
        () => count("modern: rpc tools/call").some((n, i) => n > callsBefore[i]!),
        10_000,
        "the call to reach the upstream",
      );
      const before = count("slow aborted");
      controller.abort();
      await running;
      await eventually(
        () => alice.lb.served.some((s) => s.rpc === "notifications/cancelled"),
        10_000,
        "the cancellation to be sent",
      );
      const cancelled = alice.lb.served.find((s) => s.rpc === "notifications/cancelled")!;
      expect(cancelled.replica).not.toBe(ran);
      // The upstream saw the cancel: its "slow aborted" line, in the log of the replica running it.
      await eventually(
        () => count("slow aborted").some((n, i) => n > before[i]!),
        10_000,
        "the upstream to see the cancellation",
      );
    });

    it("ends a 2025 session on every replica when one of them gets its DELETE", async () => {
      const lb = serialFetch();
      const client = newClient("legacy", "legacy-client");
      const transport = new StreamableHTTPClientTransport(new URL(`${nginx!.base}/mcp/alice`), {
        fetch: lb.fetch,
      });
      await client.connect(transport);
      await client.listTools();
      const sid = transport.sessionId!;
      await transport.terminateSession();
      await client.close();
      for (const r of replicas) {
        await eventually(
          async () => {
            const res = await fetch(`http://127.0.0.1:${r.port}/mcp/alice`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-session-id": sid,
                "mcp-protocol-version": "2025-11-25",
              },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
            });
            return res.status === 404;
          },
          10_000,
          `replica ${r.port} to refuse the ended session`,
        );
      }
    });

    it("rides out Redis stopped mid-run: calls work, handles fail naming Redis, then work again", async () => {
      const alice = await connect("modern", "alice");
      const before = await alice.call("call", {
        method: "replay.uniform_rows",
        arguments: { count: 2_000 },
      });
      const old = next(texts(before)[0]!)!;
      await redis.stop();
      const healthz = (r: Replica) =>
        fetch(`http://127.0.0.1:${r.port}/healthz`).then(
          (res) => res.json() as Promise<{ status: string; shared?: { reachable: boolean } }>,
        );
      try {
        await eventually(
          async () =>
            (await Promise.all(replicas.map(healthz))).every((h) => h.shared?.reachable === false),
          10_000,
          "both replicas to see Redis gone",
        );
        for (const r of replicas) expect((await healthz(r)).status).toBe("degraded");
        for (let i = 0; i < 2; i++) {
          // A call needing no shared state answers as always, on both replicas.
          const echo = await alice.call("call", {
            method: "modern.echo",
            arguments: { message: `m${i}` },
          });
          expect(text(echo)).toBe(`m${i} (modern)`);
          // A handle read fails clearly, naming Redis, never "No result".
          const page = await alice.call("resources", old);
          expect(page.isError).toBe(true);
          expect(text(page)).toMatch(
            /cannot be read now: Redis at 127\.0\.0\.1:\d+\/0 .*unreachable/,
          );
          // A cut result still answers with its head, saying why the rest was not kept.
          const cut = await alice.call("call", {
            method: "replay.uniform_rows",
            arguments: { count: 2_000 },
          });
          expect(cut.isError).toBeFalsy();
          expect(texts(cut)[0]).toMatch(/The rest was not kept for paging: Redis at .*unreachable/);
          expect(texts(cut)[1]!.length).toBeGreaterThan(0);
        }
      } finally {
        await redis.start();
      }
      await eventually(
        async () => (await Promise.all(replicas.map(healthz))).every((h) => h.status === "ok"),
        15_000,
        "both replicas to reconnect to Redis",
      );
      // Logged once per outage, and once when it ended, on each replica.
      for (const r of replicas) {
        expect(r.stderr().match(/Redis at \S+ unreachable/g)?.length).toBe(1);
        expect(r.stderr()).toMatch(/Redis at \S+ reachable again/);
      }
      // Handles work again across both replicas (the restarted server kept nothing: a new one).
      const after = await alice.call("call", {
        method: "replay.uniform_rows",
        arguments: { count: 2_000 },
      });
      const at = next(texts(after)[0]!)!;
      const seen = new Set<string>();
      for (let i = 0; i < 2; i++) {
        const page = await alice.call("resources", at);
        seen.add(alice.replica());
        expect(page.isError, text(page)).toBeFalsy();
      }
      expect(seen.size).toBe(2);
    });
  },
);
