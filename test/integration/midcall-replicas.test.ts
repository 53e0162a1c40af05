/**
 * Mid-call questions across replicas without `redis` (two `mcpx` processes, one config, no
 * affinity; with Redis: midcall-redis.test.ts). What must
 * survive between two requests stays on the replica that asked: a 2025-era client's answer that
 * lands on the other replica is dropped there (202, logged), and the call ends with a clear
 * error at its timeout; a 2026-07-28 client's retry that lands on the other replica gets a clean
 * isError saying so; a forged requestState is refused.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool } from "../helpers/asking.js";
import {
  ENVELOPE,
  eventually,
  fixtureServer,
  modernHeaders,
  rawPost,
  startHttp,
  text,
  untilStarted,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

/** The relayed question waits this long for its answer (the server's call timeout). */
const TIMEOUT_MS = 2_000;
const file = writeConfig({
  mcpServers: { modern: { ...fixtureServer("modern.mjs"), timeout: TIMEOUT_MS } },
  compression: { results: "off" },
});
let a: RunningHttp;
let b: RunningHttp;

beforeAll(async () => {
  [a, b] = await Promise.all([startHttp(file), startHttp(file)]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

/** Sends a request to replica A unless `toB` says it goes to B. */
function router(toB: (body: Record<string, unknown> | undefined, n: number) => boolean) {
  let n = 0;
  return async (input: string | URL | Request, init?: RequestInit) => {
    const body =
      typeof init?.body === "string"
        ? (JSON.parse(init.body) as Record<string, unknown>)
        : undefined;
    const target = new URL(toB(body, n++) ? b.url : a.url);
    const url = new URL(input instanceof Request ? input.url : input);
    url.host = target.host;
    return fetch(url, init);
  };
}

describe("a 2025-era client whose answer reaches the other replica", () => {
  it("is dropped there with a 202, and the call ends at its timeout saying the client did not answer", async () => {
    const { client, asked } = askingClient("legacy", "roaming");
    // Everything goes to A, except the client's answers (JSON-RPC responses): B.
    const fetchVia = router((body) => body !== undefined && !("method" in body));
    await client.connect(new StreamableHTTPClientTransport(new URL(a.url), { fetch: fetchVia }));
    try {
      await untilStarted(client);
      const result = await callTool(client, "modern.ask", { kind: "elicit" });
      expect(asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect(text(result)).toContain(
        `did not answer the elicitation request (relayed by mcpx, waited up to ${TIMEOUT_MS} ms)`,
      );
      await eventually(
        () => b.stderr().includes("answered a request no exchange on this replica waits for"),
        5_000,
        "replica B to log the dropped answer",
      );
    } finally {
      await client.close();
    }
  });
});

describe("a 2026-07-28 client whose retry reaches the other replica", () => {
  it("gets a clean isError: the call's state is held by another replica", async () => {
    const { client, asked } = askingClient("modern", "roaming");
    // The first tools/call goes to A; its retry (carrying requestState) to B.
    const fetchVia = router((body) => {
      const params = body?.params as Record<string, unknown> | undefined;
      return params?.requestState !== undefined;
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(a.url), { fetch: fetchVia }));
    try {
      await untilStarted(client);
      const result = await callTool(client, "modern.ask", { kind: "elicit" });
      expect(asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("This call's state is held by another mcpx replica");
    } finally {
      await client.close();
    }
  });

  it("is refused a forged requestState (-32602), on either replica", async () => {
    for (const replica of [a, b]) {
      const response = await rawPost(
        replica.url,
        {
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: {
            name: "call",
            arguments: { method: "modern.ask", arguments: { kind: "elicit" } },
            inputResponses: { "elicitation-1": { action: "accept", content: { answer: "x" } } },
            requestState: "mcp-forged.state",
            _meta: ENVELOPE,
          },
        },
        modernHeaders("tools/call", "call"),
      );
      expect(response.body).toContain("-32602");
      expect(response.body).toContain("Invalid or expired requestState");
    }
  });
});
