/**
 * Fuzz (fast-check): raw HTTP requests to the built mcpx's `/mcp` — malformed JSON, JSON-RPC
 * with wrong types, batches, bodies over the size limit, deep nesting, invalid UTF-8, wrong
 * Accept / Content-Type, unknown and stale session ids, other HTTP methods, either era's headers.
 * Each gets an answer within 30 s with a status under 500, JSON that parses when it says JSON,
 * and no stack trace or internal path; mcpx stays up and healthy and keeps no process it did not
 * have. `npm run fuzz` runs more cases (MCPX_FUZZ_RUNS).
 */
import { request } from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LIMITS } from "../../src/limits.js";
import { SeenProcesses } from "../helpers/procfs.js";
import {
  deepRawJson,
  fuzzRuns,
  fuzzTimeout,
  leaksInternals,
  nastyString,
  rawJson,
} from "../helpers/fuzz.js";
import {
  descendants,
  ENVELOPE,
  fixtureServer,
  startHttp,
  stop,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";
import { HttpRpc, initializeParams, parseMessages } from "../helpers/rpc.js";
import { eventually } from "../helpers/eventually.js";

const RUNS = fuzzRuns(250);
let mcpx: RunningHttp;
let live: string;
let stale: string;
let upstreamsBefore: number;
const seen = new SeenProcesses();

/** A 2025-era session's id: opened with a raw initialize. */
async function openSession(url: string): Promise<string> {
  const x = await new HttpRpc(url, "legacy", "fuzz").post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: initializeParams("fuzz"),
  });
  if (!x.sessionId) throw new Error(`no session: ${x.status} ${x.body}`);
  return x.sessionId;
}

beforeAll(async () => {
  const file = writeConfig({
    callTimeout: 5000,
    mcpServers: {
      fixture: { ...fixtureServer("faulty.mjs"), session: "shared" },
      spare: { ...fixtureServer("faulty.mjs"), session: "isolated" },
    },
  });
  mcpx = await startHttp(file, ["--log-level", "warn"]);
  live = await openSession(mcpx.url);
  stale = await openSession(mcpx.url);
  const del = await fetch(mcpx.url, {
    method: "DELETE",
    headers: { "mcp-session-id": stale, "mcp-protocol-version": "2025-06-18" },
  });
  await del.arrayBuffer();
  upstreamsBefore = descendants(mcpx.pid).length;
}, 60_000);

afterAll(async () => {
  seen.add(descendants(mcpx.pid));
  await mcpx?.close();
  expect(await seen.untilGone(15_000)).toEqual([]);
}, 60_000);

interface Frame {
  method: string;
  headers: Record<string, string>;
  body: Buffer;
}

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/).map((s) => s.trim());
const str = (s: string) => JSON.stringify(s);

/** A JSON-RPC request's text with every part possibly of the wrong type. */
const rpcJson: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(fc.constant('"2.0"'), rawJson),
    fc.oneof(fc.nat().map(String), nastyString.map(str), rawJson, fc.constant("null")),
    fc.oneof(
      fc
        .constantFrom(
          "initialize",
          "tools/list",
          "tools/call",
          "resources/list",
          "resources/read",
          "prompts/get",
          "server/discover",
          "ping",
          "notifications/initialized",
          "completion/complete",
          "logging/setLevel",
        )
        .map(str),
      nastyString.map(str),
      rawJson,
    ),
    fc.oneof(
      rawJson,
      fc
        .tuple(fc.constantFrom("describe", "call", "resources"), rawJson)
        .map(([n, a]) => `{"name":${str(n)},"arguments":${a}}`),
      fc.constant(
        `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}`,
      ),
      fc.constant(`{"_meta":${JSON.stringify(ENVELOPE)}}`),
      deepRawJson.map(
        (d) => `{"name":"call","arguments":{"method":"fixture.echo","arguments":${d}}}`,
      ),
    ),
  )
  .map(
    ([v, id, method, params]) =>
      `{"jsonrpc":${v},"id":${id},"method":${method},"params":${params}}`,
  );

const body: fc.Arbitrary<Buffer> = fc.oneof(
  { arbitrary: rpcJson.map((t) => Buffer.from(t)), weight: 6 },
  {
    arbitrary: fc
      .array(rpcJson, { maxLength: 6 })
      .map((items) => Buffer.from(`[${items.join(",")}]`)),
    weight: 2,
  },
  { arbitrary: rawJson.map((t) => Buffer.from(t)), weight: 2 },
  { arbitrary: fc.string().map((t) => Buffer.from(t)), weight: 2 },
  { arbitrary: deepRawJson.map((t) => Buffer.from(t)), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)), weight: 1 },
  // Valid JSON-RPC around bytes that are not UTF-8.
  {
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 20 })
      .map((b) =>
        Buffer.concat([
          Buffer.from(
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call","arguments":{"method":"fixture.echo","arguments":{"message":"',
          ),
          Buffer.from([0xff, 0xfe, ...b, 0xc3]),
          Buffer.from('"}}}}'),
        ]),
      ),
    weight: 1,
  },
  { arbitrary: fc.constant(Buffer.alloc(0)), weight: 1 },
  // Just over the body limit, as JSON-RPC.
  {
    arbitrary: fc
      .constant(null)
      .map(() =>
        Buffer.from(
          `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${"z".repeat(LIMITS.httpBodyBytes)}"}}`,
        ),
      ),
    weight: 1,
  },
);

const frame: fc.Arbitrary<Frame> = fc
  .record({
    method: fc.oneof(
      { arbitrary: fc.constant("POST"), weight: 8 },
      { arbitrary: fc.constantFrom("GET", "DELETE", "PUT", "PATCH", "OPTIONS"), weight: 1 },
    ),
    contentType: fc.oneof(
      { arbitrary: fc.constant("application/json"), weight: 5 },
      fc.constantFrom(
        "",
        "text/plain",
        "application/json; charset=latin1",
        "application/x-www-form-urlencoded",
        "text/event-stream",
      ),
      headerValue,
    ),
    accept: fc.oneof(
      { arbitrary: fc.constant("application/json, text/event-stream"), weight: 5 },
      fc.constantFrom("", "application/json", "text/event-stream", "*/*", "text/html"),
      headerValue,
    ),
    session: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      fc.constantFrom("live", "stale"),
      headerValue,
    ),
    version: fc.option(
      fc.oneof(
        fc.constantFrom("2025-06-18", "2025-03-26", "2026-07-28", "1999-01-01"),
        headerValue,
      ),
    ),
    mcpMethod: fc.option(fc.oneof(fc.constantFrom("tools/call", "server/discover"), headerValue)),
    body,
  })
  .map(({ method, contentType, accept, session, version, mcpMethod, body }) => {
    const headers: Record<string, string> = {};
    if (contentType) headers["content-type"] = contentType;
    if (accept) headers.accept = accept;
    const id = session === "live" ? live : session === "stale" ? stale : session;
    if (id) headers["mcp-session-id"] = id;
    if (version) headers["mcp-protocol-version"] = version;
    if (mcpMethod) headers["mcp-method"] = mcpMethod;
    return { method, headers, body };
  });

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** Send one frame; a GET's event stream is cut once its headers arrive (it stays open). */
function send(url: string, f: Frame): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: f.method, headers: { ...f.headers, "content-length": String(f.body.length) } },
      (res) => {
        const contentType = String(res.headers["content-type"] ?? "");
        if (f.method === "GET" && contentType.includes("text/event-stream")) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, contentType, body: "" });
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        res.on("error", reject);
      },
    );
    req.setTimeout(30_000, () =>
      req.destroy(
        new Error(`no answer in 30 s to ${f.method} ${f.body.subarray(0, 200).toString()}`),
      ),
    );
    // A connection closed with no answer: `check` allows it only for a body over the limit
    // (mcpx may answer 413 and close before the client has sent it all).
    req.on("error", (e: NodeJS.ErrnoException) =>
      e.code === "EPIPE" || e.code === "ECONNRESET"
        ? resolve({ status: 0, contentType: "", body: `connection closed: ${e.code}` })
        : reject(e),
    );
    req.end(f.body);
  });
}

function check(f: Frame, a: Answer): void {
  const shown = `${f.method} ${JSON.stringify(f.headers)} ${f.body.subarray(0, 300).toString()} → ${a.status} ${a.body.slice(0, 500)}`;
  if (a.status === 0 && f.body.length > LIMITS.httpBodyBytes) return;
  expect(a.status, shown).toBeGreaterThanOrEqual(200);
  expect(a.status, shown).toBeLessThan(500);
  expect(leaksInternals(a.body), shown).toBe(false);
  if (a.contentType.includes("application/json") && a.body.trim() !== "") {
    expect(() => JSON.parse(a.body) as unknown, shown).not.toThrow();
  }
  // A JSON-RPC error mcpx counts as its own bug.
  const messages = parseMessages(a.contentType, a.body);
  for (const m of messages)
    expect((m.error as { code?: number } | undefined)?.code, shown).not.toBe(-32603);
}

it(
  `answers ${RUNS} hostile HTTP requests with 2xx-4xx, no stack traces, and stays up`,
  async () => {
    await fc.assert(
      fc.asyncProperty(frame, async (f) => {
        check(f, await send(mcpx.url, f));
        expect(mcpx.child.exitCode).toBeNull();
        seen.add(descendants(mcpx.pid));
      }),
      { numRuns: RUNS },
    );
    const health = await fetch(new URL("/healthz", mcpx.url));
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    // Isolated sessions' processes exit after their calls: the count settles back.
    await eventually(
      () => descendants(mcpx.pid).length <= upstreamsBefore,
      20_000,
      "the isolated sessions' upstreams to exit",
    );
    expect(descendants(mcpx.pid).length).toBeLessThanOrEqual(upstreamsBefore);
    await stop(mcpx.child);
  },
  fuzzTimeout(RUNS, 400),
);
