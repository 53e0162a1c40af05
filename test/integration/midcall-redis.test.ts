/**
 * Mid-call questions across replicas that share state through Redis (issue 31): a real
 * redis-server, two mcpx replicas with `"redis"` in one config, behind real nginx round-robin
 * (examples/nginx/mcpx.conf), an upstream that asks (modern.mjs `ask`) and a real SDK client
 * answering. Round-robin sends a client's answer (2025) or retry (2026-07-28) to the other
 * replica than its tools/call (elicitation, sampling and roots), which the test checks in
 * nginx's X-Replica header: the answer reaches the replica that asked through Redis and the call
 * completes with it. A client of another session cannot answer the request; with Redis stopped,
 * the answer or retry fails saying Redis is unreachable.
 *
 * Needs nginx and redis-server; skipped without them, except with MCPX_REQUIRE_NGINX=1 (.ci/run).
 */
import { pathToFileURL } from "node:url";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool } from "../helpers/asking.js";
import { eraOf, newClient, type Era } from "../helpers/clients.js";
import { eventually } from "../helpers/eventually.js";
import { findNginx, serialFetch, type RunningNginx } from "../helpers/nginx.js";
import { fixtureServer, tempDir, text, writeConfig } from "../helpers/proxy.js";
import { findRedis, type RunningRedis } from "../helpers/redis.js";
import { startReplicaSet, type Replica, type ReplicaSet } from "../helpers/replicas.js";

const NGINX = findNginx();
const REDIS = findRedis();
const REQUIRED = process.env.MCPX_REQUIRE_NGINX === "1";
/** How long a relayed question waits for its answer (the server's call timeout). */
const TIMEOUT_MS = 4_000;

/** The server's configured root, and the client's own root inside it. */
const ROOT = pathToFileURL(tempDir()).href;
const CLIENT_ROOT = `${ROOT}/project`;

const ready = Boolean(NGINX && REDIS);
if (!ready && !REQUIRED) {
  console.warn("midcall-redis.test.ts: SKIPPED, needs nginx and redis-server");
}

describe.skipIf(!ready && !REQUIRED)("mid-call questions answered through another replica", () => {
  let set: ReplicaSet | undefined;
  let redis: RunningRedis;
  let replicas: Replica[] = [];
  let nginx: RunningNginx | undefined;
  const clients: Client[] = [];

  beforeAll(async () => {
    if (!NGINX || !REDIS)
      throw new Error("MCPX_REQUIRE_NGINX=1 but nginx or redis-server is missing");
    set = await startReplicaSet({ nginx: NGINX, redis: REDIS }, (url) =>
      writeConfig({
        sessionSecret: "midcall-redis-secret-0123456789abcdef0123456789abcdef",
        redis: url,
        // Configured roots: over HTTP a client's roots are held within them (none: never asked).
        mcpServers: {
          modern: { ...fixtureServer("modern.mjs"), timeout: TIMEOUT_MS, roots: [ROOT] },
        },
        compression: { results: "off" },
        callers: { alice: "default", bob: "default" },
      }),
    );
    ({ redis, replicas, nginx } = set);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await set?.close();
  });

  /** `client` connected through nginx as `caller`, one request at a time (served in order). */
  async function connect(client: Client, caller: string) {
    const lb = serialFetch();
    const transport = new StreamableHTTPClientTransport(new URL(`${nginx!.base}/mcp/${caller}`), {
      fetch: lb.fetch,
    });
    await client.connect(transport);
    clients.push(client);
    // A 2025 client opens its GET stream after initialize: let it take its turn in the
    // round-robin now, not between a call and its answer.
    if (eraOf(client) === "legacy")
      await eventually(() => lb.served.some((s) => s.http === "GET"), 5_000, "the GET stream");
    return { lb, transport };
  }

  /** The replica that served the client's tools/call and the one that got its answer. */
  function hops(era: Era, served: { rpc: string; replica: string }[]) {
    const calls = served.filter((s) => s.rpc === "tools/call");
    if (era === "modern") return { asked: calls[0]?.replica, answered: calls[1]?.replica };
    return {
      asked: calls[0]?.replica,
      answered: served.find((s) => s.rpc === "response")?.replica,
    };
  }

  const KINDS = [
    { kind: "elicit", method: "elicitation/create", answer: '"answer":"roaming"' },
    { kind: "sample", method: "sampling/createMessage", answer: "sampled by roaming" },
    { kind: "roots", method: "roots/list", answer: CLIENT_ROOT },
  ];

  describe.each(["legacy", "modern"] as const)("a %s client", (era) => {
    it.each(KINDS)(
      "answers $method through the other replica, and the call completes with its answer",
      async ({ kind, method, answer }) => {
        const { client, asked } = askingClient(era, "roaming", {
          roots: () => [{ uri: CLIENT_ROOT }],
        });
        const { lb } = await connect(client, "alice");
        const result = await callTool(client, "modern.ask", { kind });
        expect(result.isError, text(result)).toBeFalsy();
        expect(text(result)).toContain(answer);
        expect(asked.map((a) => a.method)).toEqual([method]);
        // The question went out on one replica, its answer (2025) or retry (2026) reached the other.
        // A 2025 client's answer POST is recorded when its 202 arrives, which can be after the
        // call's result: the replica answers once the answer was forwarded through Redis.
        await eventually(
          () => hops(era, lb.served).answered !== undefined,
          5_000,
          "the answer's POST",
        );
        const { asked: on, answered } = hops(era, lb.served);
        expect(on).toBeDefined();
        expect(answered).toBeDefined();
        expect(answered).not.toBe(on);
      },
    );
  });

  it("never takes an answer to one session's request from another session", async () => {
    const bob = newClient("legacy", "bob-client");
    const { transport: bobs } = await connect(bob, "bob");
    const victim = newClient("legacy", "victim");
    victim.registerCapabilities({ elicitation: { form: {} } });
    let forged: { status: number; on: string } | undefined;
    victim.setRequestHandler("elicitation/create", async (_request, ctx) => {
      // Bob replays the request's id, with his own session, at the replica that did not ask.
      const other = replicas.find((r) => !on().endsWith(`:${r.port}`))!;
      const res = await fetch(`http://127.0.0.1:${other.port}/mcp/bob`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": bobs.sessionId!,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: ctx.mcpReq.id,
          result: { action: "accept", content: { answer: "forged by bob" } },
        }),
      });
      forged = { status: res.status, on: on() };
      return { action: "accept", content: { answer: "the victim's own" } };
    });
    const { lb } = await connect(victim, "alice");
    const on = () => lb.served.find((s) => s.rpc === "tools/call")!.replica;
    const result = await callTool(victim, "modern.ask", { kind: "elicit" });
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toContain("the victim's own");
    expect(text(result)).not.toContain("forged");
    // Bob's answer was taken (202) and forwarded, but the replica that asked waits for it from
    // the victim's session only: it dropped it.
    expect(forged?.status).toBe(202);
    const asker = replicas.find((r) => forged!.on.endsWith(`:${r.port}`))!;
    await eventually(
      () => asker.stderr().includes("found no exchange waiting for it here"),
      5_000,
      "the asking replica to drop the other session's answer",
    );
  });

  it("with Redis stopped: the crossing answer and retry fail naming Redis; then work again", async () => {
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
      // 2026-07-28: the retry reaches the other replica, which cannot forward it.
      const modern = askingClient("modern", "roaming");
      const m = await connect(modern.client, "alice");
      const retried = await callTool(modern.client, "modern.ask", { kind: "elicit" });
      expect(retried.isError).toBe(true);
      expect(text(retried)).toMatch(
        /held by another mcpx replica \(\w+\), and the retry could not be forwarded there: Redis at 127\.0\.0\.1:\d+\/0 .*unreachable/,
      );
      const mh = hops("modern", m.lb.served);
      expect(mh.answered).not.toBe(mh.asked);
      // 2025: the answer reaches the other replica, which says Redis is unreachable (503, and
      // its log); the call ends at its timeout, as without Redis.
      const legacy = askingClient("legacy", "roaming");
      const l = await connect(legacy.client, "alice");
      const unanswered = await callTool(legacy.client, "modern.ask", { kind: "elicit" });
      expect(unanswered.isError).toBe(true);
      expect(text(unanswered)).toContain("did not answer the elicitation request");
      const lh = hops("legacy", l.lb.served);
      expect(lh.answered).not.toBe(lh.asked);
      expect(l.lb.served.find((s) => s.rpc === "response")?.status).toBe(503);
      const other = replicas.find((r) => lh.answered!.endsWith(`:${r.port}`))!;
      expect(other.stderr()).toMatch(
        /could not reach the mcpx replica that asked \(\w+\): Redis at \S+ .*unreachable/,
      );
    } finally {
      await redis.start();
    }
    await eventually(
      async () => (await Promise.all(replicas.map(healthz))).every((h) => h.status === "ok"),
      15_000,
      "both replicas to reconnect to Redis",
    );
    // Back: an answer through the other replica completes the call again.
    const { client } = askingClient("legacy", "roaming");
    const { lb } = await connect(client, "alice");
    const result = await callTool(client, "modern.ask", { kind: "elicit" });
    expect(result.isError, text(result)).toBeFalsy();
    const { asked: on, answered } = hops("legacy", lb.served);
    expect(answered).not.toBe(on);
  });
});
