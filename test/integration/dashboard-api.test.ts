/**
 * The dashboard's JSON API and event stream, served by the real HTTP server over a proxy whose
 * upstreams are real SDK servers (in memory): what each viewer sees, what it never sees
 * (arguments, secrets, other callers), and the sign-in scheme under `auth`.
 */
import { networkInterfaces } from "node:os";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { mountDashboard } from "../../src/dashboard/index.js";
import { measure } from "../../src/economy/report.js";
import { listMetaTools } from "../../src/server/mcp-server.js";
import { loadTokenCounter } from "../../src/economy/tokens.js";
import { parseConfig, type Config } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { connectTransport } from "../../src/upstream/factory.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { newClient } from "../helpers/clients.js";
import { quietLogger } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";

const ENV_SECRET = "env-value-never-shown-123";
const HEADER_SECRET = "header-value-never-shown-456";
const URL_SECRET = "query-key-never-shown-789";
const TOKEN_CI = "token-of-the-ci-bot-0001";
const TOKEN_DEV = "token-of-the-developer-02";
const ARG_SECRET = "argument-never-shown-0042";

let proxy: Proxy | undefined;
let http: HttpHandle | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await http?.close();
  await proxy?.close();
  http = undefined;
  proxy = undefined;
});

function upstream(name: string): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: `Echoes the message back. From ${name}.`, inputSchema: { message: z.string() } },
    ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  server.registerTool(
    "rows",
    {
      description: "Returns a table of records as JSON.",
      annotations: { readOnlyHint: true },
    },
    () => ({
      content: [
        {
          type: "text",
          text: JSON.stringify(
            Array.from({ length: 40 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 2 === 0 })),
          ),
        },
      ],
    }),
  );
  server.registerPrompt(
    "greet",
    { description: "Say hello.", argsSchema: { who: z.string() } },
    ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: `hi ${who}` } }] }),
  );
  server.registerResource("readme", "mem://readme", { mimeType: "text/plain" }, () => ({
    contents: [{ uri: "mem://readme", text: "read me" }],
  }));
  return server;
}

function config(extra: Record<string, unknown> = {}): Config {
  return parseConfig(
    {
      mcpServers: {
        alpha: { command: "in-memory-alpha", env: { API_KEY: ENV_SECRET } },
        beta: {
          url: `https://user:pw@example.com/mcp?key=${URL_SECRET}`,
          headers: { Authorization: `Bearer ${HEADER_SECRET}` },
        },
      },
      ...extra,
    },
    "/memory/mcpx.json",
    {},
  );
}

async function start(cfg: Config = config(), host = "127.0.0.1"): Promise<string> {
  proxy = createProxy(cfg, {
    logger: quietLogger(),
    factoryFor: (server) => async () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await upstream(server.name).connect(serverSide);
      return connectTransport(clientSide, { timeoutMs: 5_000 });
    },
  });
  await proxy.start();
  http = await serveHttp(proxy.context, { host, port: 0, mount: mountDashboard });
  return http.url.replace(/\/mcp$/, "");
}

async function mcpClient(base: string, name: string, token?: string): Promise<Client> {
  const client = newClient("modern", name);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
    }),
  );
  clients.push(client);
  return client;
}

const call = (client: Client, method: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name: "call", arguments: { method, arguments: args } });

async function getJson<T = Record<string, unknown>>(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; raw: string }> {
  const res = await fetch(url, { headers });
  const raw = await res.text();
  return { status: res.status, body: (raw.startsWith("{") ? JSON.parse(raw) : {}) as T, raw };
}

/** Read server-sent events from /api/events until `until` holds for one of them. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  until: (type: string, data: string) => boolean,
  whileOpen: () => Promise<void> = async () => {},
): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  void whileOpen();
  const deadline = Date.now() + 10_000;
  try {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`no matching event in: ${seen}`);
      const { value, done } = (await reader.read()) as {
        value?: Uint8Array;
        done: boolean;
      };
      if (done) throw new Error(`stream ended: ${seen}`);
      seen += decoder.decode(value, { stream: true });
      for (const frame of seen.split("\n\n")) {
        const type = /^event: (.+)$/m.exec(frame)?.[1];
        const data = /^data: (.+)$/m.exec(frame)?.[1];
        if (type && data && until(type, data)) return seen;
      }
    }
  } finally {
    controller.abort();
  }
}

describe("dashboard API without auth (this machine)", () => {
  it("serves the page and every server's status, tools, prompts and resources", async () => {
    const base = await start();
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain('<script type="module" src="/assets/app.js">');
    expect((await fetch(`${base}/assets/app.js`)).status).toBe(200);
    expect((await fetch(`${base}/assets/..%2Fpackage.json`)).status).toBe(404);

    const status = await getJson<{ servers: { name: string; status: string }[] }>(
      `${base}/api/status`,
    );
    expect(status.body.servers.map((s) => [s.name, s.status])).toEqual([
      ["alpha", "ready"],
      ["beta", "ready"],
    ]);
    const alpha = await getJson<{
      tools: { name: string; tokens: number; annotations: Record<string, unknown> }[];
      prompts: { name: string; arguments: { name: string }[] }[];
      resources: { uri: string }[];
      target: { env: Record<string, string> };
    }>(`${base}/api/servers/alpha`);
    expect(alpha.body.tools.map((t) => t.name)).toEqual(["echo", "rows"]);
    expect(alpha.body.tools[0]!.tokens).toBeGreaterThan(10);
    expect(alpha.body.tools[1]!.annotations.readOnlyHint).toBe(true);
    expect(alpha.body.prompts).toMatchObject([{ name: "greet", arguments: [{ name: "who" }] }]);
    expect(alpha.body.resources).toMatchObject([{ uri: "mem://readme" }]);
    expect(alpha.body.target.env).toEqual({ API_KEY: "***" });
    expect((await fetch(`${base}/api/servers/nope`)).status).toBe(404);
  });

  it("never shows env values, header values or URL credentials", async () => {
    const base = await start();
    const everything = await Promise.all(
      ["/api/status", "/api/servers/alpha", "/api/servers/beta", "/api/logs", "/api/calls"].map(
        (p) => getJson(`${base}${p}`),
      ),
    );
    const all = everything.map((r) => r.raw).join("\n");
    for (const secret of [ENV_SECRET, HEADER_SECRET, URL_SECRET, ":pw@"])
      expect(all).not.toContain(secret);
    expect(all).toContain('"Authorization":"***"');
  });

  it("lists calls with caller, tool, duration and outcome, never arguments, live too", async () => {
    const base = await start();
    const client = await mcpClient(base, "claude-code");
    const stream = readEvents(
      `${base}/api/events`,
      {},
      (type, data) => type === "call" && data.includes('"outcome":"ok"'),
      async () => {
        await call(client, "alpha.echo", { message: ARG_SECRET });
      },
    );
    const frames = await stream;
    expect(frames).toContain('"caller":"claude-code"');
    expect(frames).not.toContain(ARG_SECRET);
    await call(client, "alpha.rows");
    await call(client, "alpha.nope");
    const calls = await getJson<{
      recent: { caller: string; server: string; tool: string; outcome: string }[];
      perServer: {
        server: string;
        calls: number;
        p50: number;
        compression: { results: number; saved: number };
      }[];
    }>(`${base}/api/calls`);
    expect(calls.raw).not.toContain(ARG_SECRET);
    expect(calls.body.recent.map((c) => `${c.caller} ${c.server}.${c.tool} ${c.outcome}`)).toEqual([
      "claude-code alpha.nope refused",
      "claude-code alpha.rows ok",
      "claude-code alpha.echo ok",
    ]);
    const alpha = calls.body.perServer.find((p) => p.server === "alpha")!;
    expect(alpha.calls).toBe(2);
    expect(alpha.p50).toBeGreaterThan(0);
    // The table of records went out as TOON: one result compressed, tokens saved.
    expect(alpha.compression.results).toBe(1);
    expect(alpha.compression.saved).toBeGreaterThan(0);
    const status = await getJson<{ callers: { caller: string; calls: number }[] }>(
      `${base}/api/status`,
    );
    expect(status.body.callers).toMatchObject([{ caller: "claude-code", calls: 3 }]);
  });

  it("lists calls made before the dashboard was first opened, though its routes load only then", async () => {
    const base = await start();
    // A 2025-era session is served in front of the app (http-fast.ts): nothing has built it yet.
    const client = newClient("legacy", "cursor");
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    clients.push(client);
    await call(client, "alpha.echo", { message: "early" });
    const calls = await getJson<{ recent: { caller: string; tool: string; outcome: string }[] }>(
      `${base}/api/calls`,
    );
    expect(calls.status).toBe(200);
    expect(calls.body.recent.map((c) => `${c.caller} ${c.tool} ${c.outcome}`)).toEqual([
      "cursor echo ok",
    ]);
  });

  it("searches with describe's ranking and describes a tool exactly as describe does", async () => {
    const base = await start();
    const search = await getJson<{ hits: { server: string; tool: string }[] }>(
      `${base}/api/search?q=echo`,
    );
    expect(search.body.hits.slice(0, 2).map((h) => h.tool)).toEqual(["echo", "echo"]);
    const client = await mcpClient(base, "someone");
    const expected = text(
      await client.callTool({ name: "describe", arguments: { method: "alpha.echo" } }),
    );
    const described = await getJson<{ text: string }>(`${base}/api/describe?name=alpha.echo`);
    expect(described.body.text).toBe(expected);
  });

  it("reports the token economy exactly as mcpx stats measures it", async () => {
    const base = await start();
    const economy = await getJson<{ total: unknown; rows: unknown }>(`${base}/api/economy`);
    const expected = measure(
      proxy!.context.registry,
      proxy!.context.config.profiles.default!,
      await loadTokenCounter(),
      listMetaTools,
    );
    expect(economy.body.total).toEqual(expected.total);
    expect(economy.body.rows).toEqual(expected.rows);
  });

  it("streams log lines and filters them by source and level", async () => {
    const base = await start();
    proxy!.context.logger.child("alpha").warn("alpha says something");
    proxy!.context.logger.info("mcpx says something");
    const warn = await getJson<{ lines: { source: string; level: string; text: string }[] }>(
      `${base}/api/logs?server=alpha&level=warn`,
    );
    expect(warn.body.lines).toMatchObject([
      { source: "alpha", level: "warn", text: "alpha says something" },
    ]);
    const frames = await readEvents(
      `${base}/api/events`,
      {},
      (type, data) => type === "log" && data.includes("live line"),
      () => Promise.resolve(proxy!.context.logger.info("live line")),
    );
    expect(frames).toContain('"source":"mcpx"');
  });

  it("refuses another machine when the config has no auth", async () => {
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    if (lan === undefined) return; // no other interface on this machine: nothing to check
    await start(config(), "0.0.0.0");
    const res = await fetch(`http://${lan}:${http!.port}/api/status`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain('no "auth"');
    expect((await fetch(`http://${lan}:${http!.port}/api/trust`)).status).toBe(403);
    const approve = await fetch(`http://${lan}:${http!.port}/api/trust/approve`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ref: "alpha" }),
    });
    expect(approve.status).toBe(403);
  });

  it("caps the number of open dashboards", async () => {
    const base = await start();
    const controllers: AbortController[] = [];
    // Kept: undici cancels the body of a Response that is garbage-collected, which closes that
    // dashboard's stream (a GC in the loop let a 17th in).
    const open: Response[] = [];
    try {
      for (let i = 0; i < 16; i++) {
        const c = new AbortController();
        controllers.push(c);
        open.push(await fetch(`${base}/api/events`, { signal: c.signal }));
        expect(open.at(-1)!.status).toBe(200);
      }
      const refused = await fetch(`${base}/api/events`);
      expect(refused.status).toBe(503);
      expect(await refused.text()).toContain("Too many dashboards open");
    } finally {
      for (const c of controllers) c.abort();
      open.length = 0;
    }
  });
});

describe("dashboard API with auth (token holders)", () => {
  const withAuth = () =>
    config({
      auth: { tokens: { [TOKEN_CI]: "ci-bot", [TOKEN_DEV]: "dev" } },
      profiles: { default: { servers: ["*"] }, ci: { servers: ["alpha"] } },
      callers: { "ci-bot": "ci" },
    });

  it("answers 401 without a token, with the sign-in form for the page", async () => {
    const base = await start(withAuth());
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('<form method="post" action="/login">');
    for (const p of ["/api/status", "/api/calls", "/api/events", "/api/servers/alpha"]) {
      expect((await fetch(`${base}${p}`)).status).toBe(401);
    }
    expect(
      (await fetch(`${base}/api/status`, { headers: { Authorization: "Bearer wrong-token" } }))
        .status,
    ).toBe(401);
  });

  it("shows a token holder only their caller's servers and calls", async () => {
    const base = await start(withAuth());
    const ci = await mcpClient(base, "x", TOKEN_CI);
    const dev = await mcpClient(base, "y", TOKEN_DEV);
    await call(ci, "alpha.echo", { message: "from ci" });
    await call(dev, "beta.echo", { message: "from dev" });
    const auth = { Authorization: `Bearer ${TOKEN_CI}` };
    const status = await getJson<{
      viewer: { caller: string };
      servers: { name: string }[];
      callers: { caller: string }[];
    }>(`${base}/api/status`, auth);
    expect(status.body.viewer.caller).toBe("ci-bot");
    expect(status.body.servers.map((s) => s.name)).toEqual(["alpha"]);
    expect(status.body.callers.map((c) => c.caller)).toEqual(["ci-bot"]);
    const calls = await getJson<{ recent: { caller: string }[] }>(`${base}/api/calls`, auth);
    expect(calls.body.recent.map((c) => c.caller)).toEqual(["ci-bot"]);
    expect((await fetch(`${base}/api/servers/beta`, { headers: auth })).status).toBe(404);
    const search = await getJson(`${base}/api/search?q=echo`, auth);
    expect(search.raw).not.toContain('"beta"');
    const logs = await getJson(`${base}/api/logs`, auth);
    expect(logs.raw).not.toContain("by dev");
    for (const r of [status, calls, search, logs]) {
      expect(r.raw).not.toContain(TOKEN_CI);
      expect(r.raw).not.toContain(TOKEN_DEV);
    }
  });

  it("exchanges a token for an HttpOnly, SameSite=Strict session cookie, never the token", async () => {
    const base = await start(withAuth());
    const login = await fetch(`${base}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `token=${TOKEN_CI}`,
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    expect(login.headers.get("location")).toBe("/");
    const cookie = login.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^mcpx_dashboard=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\//);
    expect(cookie).not.toContain(TOKEN_CI);
    const session = { cookie: cookie.split(";")[0]! };
    expect((await fetch(`${base}/`, { headers: session })).status).toBe(200);
    const status = await getJson<{ servers: { name: string }[] }>(`${base}/api/status`, session);
    expect(status.body.servers.map((s) => s.name)).toEqual(["alpha"]);
    // The cookie is not a credential for /mcp.
    expect((await fetch(`${base}/mcp`, { method: "POST", headers: session })).status).toBe(401);

    const viaUrl = await fetch(`${base}/?token=${TOKEN_DEV}`, { redirect: "manual" });
    expect(viaUrl.status).toBe(303);
    expect(viaUrl.headers.get("location")).toBe("/");
    const wrong = await fetch(`${base}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "token=nope-nope-nope",
      redirect: "manual",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();

    // A reload that removes the token ends its sessions at once.
    await proxy!.reload(
      config({
        auth: { tokens: { [TOKEN_DEV]: "dev" } },
        profiles: { default: { servers: ["*"] } },
      }),
    );
    expect((await fetch(`${base}/api/status`, { headers: session })).status).toBe(401);
  });
});
