/**
 * Scale-out without affinity: two mcpx processes started with one config, and clients whose
 * every request goes to the other one than the last. A 2025-era session opened on one replica
 * is served by the other, which never saw its initialize; 2026-07-28 requests need nothing.
 */
import { writeFileSync } from "node:fs";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ERAS,
  eventually,
  fixtureServer,
  newClient,
  onToolsChanged,
  startHttp,
  text,
  untilStarted,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

const SERVERS = { faulty: fixtureServer("faulty.mjs"), other: fixtureServer("replay.mjs") };
const ACCESS = {
  profiles: { default: { servers: ["other"] }, coding: { servers: ["faulty"] } },
  callers: { "claude-code": "coding" },
};
const file = writeConfig({ mcpServers: SERVERS, ...ACCESS });
let a: RunningHttp;
let b: RunningHttp;

beforeAll(async () => {
  [a, b] = await Promise.all([
    startHttp(file, [], {}, { era: "legacy" }),
    startHttp(file, [], {}, { era: "legacy" }),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

/** A fetch that sends each request to the replica the last one did not go to. */
function alternating() {
  const served: { replica: "a" | "b"; method: string; body: string }[] = [];
  /** GET streams whose answer began: the replica holds them. */
  const streams: ("a" | "b")[] = [];
  let next: "a" | "b" = "a";
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const replica = next;
    next = next === "a" ? "b" : "a";
    const target = new URL(replica === "a" ? a.url : b.url);
    const url = new URL(input instanceof Request ? input.url : input);
    url.host = target.host;
    served.push({
      replica,
      method: init?.method ?? "GET",
      body: typeof init?.body === "string" ? init.body : "",
    });
    const res = await fetch(url, init);
    if ((init?.method ?? "GET") === "GET" && res.ok) streams.push(replica);
    return res;
  };
  return { fetch: fetchImpl, served, streams };
}

describe.each(ERAS)("two replicas, a %s client alternating between them", (era) => {
  it("serves every request on either replica, with the client's caller", async () => {
    const lb = alternating();
    const client = newClient(era, "claude-code");
    await client.connect(new StreamableHTTPClientTransport(new URL(a.url), { fetch: lb.fetch }));
    try {
      await untilStarted(client);
      for (let i = 0; i < 4; i++) {
        const r = await client.callTool({
          name: "call",
          arguments: { method: "faulty.echo", arguments: { message: `m${i}` } },
        });
        expect(r.isError).toBeFalsy();
        expect(text(r)).toBe(`m${i}`);
        // The caller came from clientInfo: the coding profile, on whichever replica answered.
        const described = text(await client.callTool({ name: "describe", arguments: {} }));
        expect(described).toContain("faulty.echo");
        expect(described).not.toContain("other.");
      }
      const calls = lb.served.filter((s) => s.body.includes('"tools/call"'));
      expect(new Set(calls.map((c) => c.replica))).toEqual(new Set(["a", "b"]));
      if (era === "legacy") {
        // The session opened on a: b served its requests without ever seeing the initialize.
        const init = lb.served.findIndex((s) => s.body.includes('"initialize"'));
        expect(lb.served[init]?.replica).toBe("a");
      } else {
        expect(lb.served.some((s) => s.body.includes('"initialize"'))).toBe(false);
      }
    } finally {
      await client.close();
    }
  });
});

it("a 2025 session's list_changed reaches it through the replica holding its GET stream", async () => {
  const lb = alternating();
  const client = newClient("legacy", "claude-code");
  const transport = new StreamableHTTPClientTransport(new URL(a.url), { fetch: lb.fetch });
  await client.connect(transport);
  try {
    await untilStarted(client);
    let changed = 0;
    await onToolsChanged(client, () => {
      changed += 1;
    });
    await eventually(() => lb.streams.length > 0, 10_000, "the GET stream");
    // Both replicas reload the same file; the one holding the stream tells the client.
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: SERVERS,
        ...ACCESS,
        profiles: { ...ACCESS.profiles, coding: { servers: ["faulty", "other"] } },
      }),
    );
    await eventually(() => changed > 0, 15_000, "tools/list_changed");
    // The other replica may reload a moment later: both must show the new catalog.
    const seen = new Set<string>();
    for (let i = 0; seen.size < 2; i++) {
      if (i > 300) throw new Error("the replicas never both showed the reloaded catalog");
      const { tools } = await client.listTools();
      const replica = lb.served.at(-1)!.replica;
      if (/\bother\b/.test(tools[0]?.description ?? "")) seen.add(replica);
      else await new Promise((r) => setTimeout(r, 50));
    }
    await transport.terminateSession();
  } finally {
    await client.close();
  }
});
