/**
 * Bad input over raw HTTP, both eras: each gets the spec's error code and a clear message,
 * never a crash or a hang, and the endpoint keeps serving.
 */
import { request } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { memoryProxy } from "../helpers/inmemory.js";
import { DISCOVER, ENVELOPE, INITIALIZE, modernHeaders } from "../helpers/proxy.js";

let proxy: Proxy;
let http: HttpHandle;
/** The test's clock for session ids: issued at `now`, checked at `now`. */
let now = 1_800_000_000_000;
const DAY = 24 * 3600_000;

beforeAll(async () => {
  proxy = memoryProxy({ s: () => new McpServer({ name: "s", version: "1" }) });
  await proxy.start();
  http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0, now: () => now });
});
afterAll(async () => {
  await http?.close();
  await proxy?.close();
});

const JSON_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

interface Answer {
  status: number;
  code?: number;
  message: string;
  headers: Headers;
}

/** POST `body` (raw when a string); the JSON-RPC error of the answer, if it has one. */
async function post(body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(http.url, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return answer(res);
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  // An SSE answer carries its JSON-RPC message in a data line.
  const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  const parsed = JSON.parse(json) as { error?: { code: number; message: string } };
  return {
    status: res.status,
    ...(parsed.error && { code: parsed.error.code }),
    message: parsed.error?.message ?? text,
    headers: res.headers,
  };
}

/** A modern tools/list with its headers; `meta` replaces the envelope. */
function modernList(meta: unknown = ENVELOPE) {
  return { jsonrpc: "2.0", id: 7, method: "tools/list", params: { _meta: meta } };
}

/** A legacy session's id, from a real initialize. */
async function openSession(): Promise<string> {
  const res = await fetch(http.url, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify(INITIALIZE),
  });
  await res.text();
  const sid = res.headers.get("mcp-session-id");
  expect(sid).toBeTruthy();
  return sid!;
}

const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

describe("a request whose era cannot be told", () => {
  it("a body that is not JSON-RPC: 400, -32600", async () => {
    const a = await post({ foo: 1 });
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32600);
    expect(a.message).toMatch(/not a valid JSON-RPC message/);
  });

  it("a body that is not JSON: 400, -32700", async () => {
    const a = await post("{not json");
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32700);
  });

  it("a body that is not application/json: 415", async () => {
    const res = await fetch(http.url, {
      method: "POST",
      headers: { ...JSON_HEADERS, "content-type": "text/plain" },
      body: JSON.stringify(LIST),
    });
    expect(res.status).toBe(415);
    expect((await answer(res)).message).toMatch(/Content-Type must be application\/json/);
  });

  // Found by the HTTP fuzz (test/fuzz/http.test.ts): body-parser refused the charset and mcpx
  // answered 500, -32603, as if it were its own bug.
  it.each(["latin1", "bogus"])(
    "a JSON body in charset %s: 415, -32600 asking for UTF-8",
    async (charset) => {
      const a = await post(LIST, { "content-type": `application/json; charset=${charset}` });
      expect(a.status).toBe(415);
      expect(a.code).toBe(-32600);
      expect(a.message).toMatch(/UTF-8/);
    },
  );

  it("a compressed body mcpx does not inflate: 415, -32600", async () => {
    const a = await post(LIST, { "content-encoding": "br-nonsense" });
    expect(a.status).toBe(415);
    expect(a.code).toBe(-32600);
  });
});

/**
 * The same bodies in a live session: such requests are read in front of the Express app
 * (src/server/http-fast.ts) and must be answered exactly as the app answers them.
 */
describe("a session's request with a bad body, read in front of the app", () => {
  const deep = `${"[".repeat(101)}${"]".repeat(101)}`;
  it.each([
    ["not JSON", "{not json", 400, -32700, /^Parse error: the body is not valid JSON\.$/],
    ["JSON that is not an object or array", '"x"', 400, -32700, /^Parse error/],
    ["nested too deep", deep, 400, -32600, /more than 100 levels deep/],
  ])("%s: the app's answer", async (_what, body, status, code, message) => {
    const sid = await openSession();
    const inSession = await post(body, { "mcp-session-id": sid });
    expect(inSession).toMatchObject({ status, code });
    expect(inSession.message).toMatch(message);
  });

  it("a malformed initialize in a live session: 400, -32600, never -32603 (found by the HTTP fuzz)", async () => {
    const sid = await openSession();
    const bad = { jsonrpc: "2.0", id: 0, method: "initialize", params: { name: "describe" } };
    const a = await post(bad, { "mcp-session-id": sid });
    expect(a).toMatchObject({ status: 400, code: -32600 });
    expect(a.message).toMatch(/already initialized/);
  });

  it("a completion/complete without ref or argument in a live session: -32602, never -32603 (found by the HTTP fuzz)", async () => {
    const sid = await openSession();
    const bad = {
      jsonrpc: "2.0",
      id: "",
      method: "completion/complete",
      params: { name: "describe", arguments: {} },
    };
    const a = await post(bad, { "mcp-session-id": sid });
    expect(a.code).toBe(-32602);
  });

  it("a JSON body in charset latin1, or compressed: 415 from the app", async () => {
    const sid = await openSession();
    const latin1 = await post(LIST, {
      "mcp-session-id": sid,
      "content-type": "application/json; charset=latin1",
    });
    expect(latin1).toMatchObject({ status: 415, code: -32600 });
    const compressed = await post(LIST, { "mcp-session-id": sid, "content-encoding": "gzip" });
    expect(compressed.status).toBe(400);
  });

  it("a byte-order mark, a charset of utf-8, and good JSON the app serves (a notification, a batch)", async () => {
    const sid = await openSession();
    const bom = await post(`\ufeff${JSON.stringify(LIST)}`, { "mcp-session-id": sid });
    expect(bom.status).toBe(200);
    expect(bom.message).toContain('"name":"describe"');
    const utf8 = await post(LIST, {
      "mcp-session-id": sid,
      "content-type": "application/json; charset=UTF-8",
    });
    expect(utf8.message).toContain('"name":"describe"');
    const note = await fetch(http.url, {
      method: "POST",
      headers: { ...JSON_HEADERS, "mcp-session-id": sid },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    expect(note.status).toBe(202);
    const batch = await post([LIST], { "mcp-session-id": sid });
    expect(batch.status).toBe(200);
    expect(batch.message).toContain('"name":"describe"');
  });
});

describe("unsupported protocol versions", () => {
  it("in the envelope: 400, -32022 naming the supported version", async () => {
    const a = await post(
      modernList({ ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01" }),
      { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" },
    );
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32022);
    expect(a.message).toMatch(/2099-01-01/);
  });

  it("in MCP-Protocol-Version of a 2025-era session request: 400 naming the supported ones", async () => {
    const sid = await openSession();
    const a = await post(LIST, { "mcp-session-id": sid, "mcp-protocol-version": "1999-01-01" });
    expect(a.status).toBe(400);
    expect(a.message).toMatch(/Unsupported protocol version: 1999-01-01/);
  });

  it("in a 2025 initialize: the spec's answer, the latest version we speak", async () => {
    const a = await post({
      ...INITIALIZE,
      params: { ...INITIALIZE.params, protocolVersion: "1999-01-01" },
    });
    expect(a.status).toBe(200);
    expect(a.message).toContain('"protocolVersion":"2025-11-25"');
  });
});

describe("2026-07-28 requests missing what the revision requires", () => {
  it("no _meta envelope: 400, -32602", async () => {
    const a = await post(
      { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} },
      modernHeaders("tools/list"),
    );
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32602);
    expect(a.message).toMatch(/_meta/);
  });

  it("an envelope without clientCapabilities: 400, -32602 naming the key", async () => {
    const { "io.modelcontextprotocol/clientCapabilities": _, ...partial } = ENVELOPE;
    const a = await post(modernList(partial), modernHeaders("tools/list"));
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32602);
    expect(a.message).toMatch(/clientCapabilities/);
  });

  it("no Mcp-Method header: 400 naming it", async () => {
    const a = await post(modernList(), { "mcp-protocol-version": "2026-07-28" });
    expect(a.status).toBe(400);
    expect(a.message).toMatch(/Mcp-Method header is absent/);
  });

  it("a tools/call without Mcp-Name: 400 naming it", async () => {
    const call = {
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "describe", arguments: {}, _meta: ENVELOPE },
    };
    const a = await post(call, modernHeaders("tools/call"));
    expect(a.status).toBe(400);
    expect(a.message).toMatch(/Mcp-Name header is absent/);
    // With it, the same call is answered.
    const ok = await post(call, modernHeaders("tools/call", "describe"));
    expect(ok.status).toBe(200);
    expect(ok.code).toBeUndefined();
  });

  it("a batch with a 2026-07-28 request: 400, -32600", async () => {
    const a = await post([modernList(), LIST], modernHeaders("tools/list"));
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32600);
    expect(a.message).toMatch(/batches may not contain requests for protocol revision 2026-07-28/);
  });
});

describe("sessions", () => {
  it("a 2026-07-28 request with a 2025 session id: 400, mixed eras refused", async () => {
    const sid = await openSession();
    const a = await post(modernList(), { ...modernHeaders("tools/list"), "mcp-session-id": sid });
    expect(a.status).toBe(400);
    expect(a.code).toBe(-32600);
    expect(a.message).toMatch(/cannot use a 2025-era session/);
  });

  it("a body that is no JSON-RPC message, with a 2025 session id: 400 saying what is wrong with it", async () => {
    const sid = await openSession();
    const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" };
    for (const body of [{ foo: 1 }, { jsonrpc: "2.0", id: 2 }]) {
      const a = await post(body, headers);
      expect(a.status).toBe(400);
      expect(a.code).toBe(-32600);
      expect(a.message).toBe("Bad Request: the request body is not a valid JSON-RPC message");
    }
    const empty = await post([], headers);
    expect(empty.status).toBe(400);
    expect(empty.message).toMatch(/empty JSON-RPC batch/);
    // The session still serves.
    expect((await post(LIST, headers)).status).toBe(200);
  });

  it("a 2026-07-28 discover is never given a session", async () => {
    const a = await post(DISCOVER, modernHeaders("server/discover"));
    expect(a.status).toBe(200);
    expect(a.headers.get("mcp-session-id")).toBeNull();
  });

  it("a 2025 request without a session id: 400 saying to initialize", async () => {
    const a = await post(LIST);
    expect(a.status).toBe(400);
    expect(a.message).toMatch(/Mcp-Session-Id header is required/);
  });

  it("a forged session id: 404, -32001", async () => {
    const sid = await openSession();
    const [body, mac] = sid.split(".") as [string, string];
    // Another client name in the claims, the old signature.
    const claims = JSON.parse(Buffer.from(body, "base64url").toString()) as {
      ci: { name: string };
    };
    claims.ci.name = "claude-code";
    const forged = `${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${mac}`;
    for (const bad of [forged, `${body}.${mac.slice(1)}`, "not-a-session", `${body}`]) {
      const a = await post(LIST, { "mcp-session-id": bad });
      expect(a.status, bad).toBe(404);
      expect(a.code).toBe(-32001);
    }
    expect((await post(LIST, { "mcp-session-id": sid })).status).toBe(200);
  });

  it("an expired session id: 404, -32001, on every request kind", async () => {
    const sid = await openSession();
    expect((await post(LIST, { "mcp-session-id": sid })).status).toBe(200);
    now += DAY + 1;
    try {
      expect((await post(LIST, { "mcp-session-id": sid })).status).toBe(404);
      const get = await fetch(http.url, {
        headers: { accept: "text/event-stream", "mcp-session-id": sid },
      });
      expect(get.status).toBe(404);
      await get.body?.cancel();
    } finally {
      now -= DAY + 1;
    }
  });

  it("a deleted session: 404 afterwards", async () => {
    const sid = await openSession();
    const del = await fetch(http.url, { method: "DELETE", headers: { "mcp-session-id": sid } });
    expect(del.status).toBe(200);
    expect((await post(LIST, { "mcp-session-id": sid })).status).toBe(404);
  });

  it("a DELETE that declares an empty body in charset latin1: 415 from the app, the session kept", async () => {
    const sid = await openSession();
    // node's own client: fetch sends no Content-Length for an empty DELETE.
    const url = new URL(http.url);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "DELETE",
          headers: {
            "mcp-session-id": sid,
            "content-length": "0",
            "content-type": "application/json; charset=latin1",
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(415);
    expect((await post(LIST, { "mcp-session-id": sid })).status).toBe(200);
  });

  it("two identical clients initializing at the same instant get two sessions", async () => {
    // The test's clock stands still: same claims, same issue time.
    const first = await openSession();
    const second = await openSession();
    expect(second).not.toBe(first);
    await fetch(http.url, { method: "DELETE", headers: { "mcp-session-id": first } });
    expect((await post(LIST, { "mcp-session-id": second })).status).toBe(200);
  });

  it("still serves after all of the above", async () => {
    const sid = await openSession();
    const a = await post(LIST, { "mcp-session-id": sid });
    expect(a.status).toBe(200);
    expect(a.message).toContain('"name":"describe"');
    const m = await post(modernList(), modernHeaders("tools/list"));
    expect(m.status).toBe(200);
    expect(m.message).toContain('"name":"describe"');
  });
});
