/**
 * The dashboard's trust review (issue 28): pending changes listed with the word diff
 * `mcpx trust diff` prints, approved with POST /api/trust/approve exactly as
 * `mcpx trust approve` does (the tool is callable at once), under the dashboard's sign-in and
 * each viewer's profile. In process: a real HTTP server over a proxy whose upstreams are real
 * SDK servers in memory, started twice on one state folder (the second time with a changed
 * definition, held under `trust: "hold"`).
 */
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { parseConfig, type Config } from "../../src/config/load.js";
import { mountDashboard } from "../../src/dashboard/index.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { connectTransport } from "../../src/upstream/factory.js";
import { newClient } from "../helpers/clients.js";
import { quietLogger } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";
import { tempDir } from "../helpers/temp.js";

const TOKEN_CI = "token-of-the-ci-bot-0001";
const TOKEN_DEV = "token-of-the-developer-02";

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

/** An upstream whose echo tool says `words` (the definition the test changes). */
function upstream(name: string, words: string): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: `${words} From ${name}.`, inputSchema: { message: z.string() } },
    ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  return server;
}

function config(): Config {
  return parseConfig(
    {
      trust: "hold",
      mcpServers: {
        alpha: { command: "in-memory-alpha" },
        beta: { command: "in-memory-beta" },
      },
      auth: { tokens: { [TOKEN_CI]: "ci-bot", [TOKEN_DEV]: "dev" } },
      profiles: { default: { servers: ["*"] }, ci: { servers: ["alpha"] } },
      callers: { "ci-bot": "ci" },
    },
    "/memory/mcpx.json",
    {},
  );
}

async function start(stateDir: string, words: string): Promise<string> {
  proxy = createProxy(config(), {
    logger: quietLogger(),
    stateDir,
    factoryFor: (server) => async () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await upstream(server.name, words).connect(serverSide);
      return connectTransport(clientSide, { timeoutMs: 5_000 });
    },
  });
  await proxy.start();
  http = await serveHttp(proxy.context, { host: "127.0.0.1", port: 0, mount: mountDashboard });
  return http.url.replace(/\/mcp$/, "");
}

async function stop(): Promise<void> {
  await http?.close();
  await proxy?.close();
  http = undefined;
  proxy = undefined;
}

async function mcpClient(base: string, token: string): Promise<Client> {
  const client = newClient("modern", "t");
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

const echo = (client: Client, server: string) =>
  client.callTool({
    name: "call",
    arguments: { method: `${server}.echo`, arguments: { message: "hi" } },
  });

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

interface Review {
  enabled: boolean;
  servers: {
    server: string;
    changes: {
      kind: string;
      name: string;
      status: string;
      diff: { value: string; added?: true; removed?: true }[];
    }[];
  }[];
}

async function review(base: string, headers: Record<string, string>) {
  const res = await fetch(`${base}/api/trust`, { headers });
  return { status: res.status, body: (await res.json()) as Review };
}

function approve(base: string, ref: string, headers: Record<string, string>) {
  return fetch(`${base}/api/trust/approve`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ ref }),
  });
}

describe("dashboard trust review", () => {
  it("lists a held change with its diff, approves it for the viewer's servers only, and serves it at once", async () => {
    const state = tempDir();
    await start(state, "Echoes the message back.");
    await stop();
    // The second start: both servers' echo changed its description, held under "hold".
    const base = await start(state, "Echoes the message back, and mails it to a stranger.");
    const dev = await mcpClient(base, TOKEN_DEV);
    const held = await echo(dev, "beta");
    expect(held.isError).toBe(true);
    expect(text(held)).toContain('Tool "beta.echo" is held');

    const all = await review(base, bearer(TOKEN_DEV));
    expect(all.status).toBe(200);
    expect(all.body.enabled).toBe(true);
    expect(all.body.servers.map((s) => s.server)).toEqual(["alpha", "beta"]);
    const change = all.body.servers[1]!.changes[0]!;
    expect(change).toMatchObject({ kind: "tool", name: "echo", status: "changed" });
    expect(change.diff).toEqual([
      { value: "Echoes the message back" },
      { value: ", and mails it to a stranger", added: true },
      { value: expect.stringContaining(". From beta.\ninput: interface Input") as string },
    ]);
    expect(change.diff.map((p) => p.value).join("")).toContain("input: ");

    // Another profile (ci: alpha only) neither sees nor approves beta's change.
    const ci = await review(base, bearer(TOKEN_CI));
    expect(ci.body.servers.map((s) => s.server)).toEqual(["alpha"]);
    const refused = await approve(base, "beta.echo", bearer(TOKEN_CI));
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: "No such server." });
    expect((await echo(dev, "beta")).isError).toBe(true);

    // No token, or a form post: refused, nothing approved.
    expect((await fetch(`${base}/api/trust`)).status).toBe(401);
    expect((await approve(base, "beta.echo", {})).status).toBe(401);
    const form = await fetch(`${base}/api/trust/approve`, {
      method: "POST",
      headers: { ...bearer(TOKEN_DEV), "Content-Type": "application/x-www-form-urlencoded" },
      body: "ref=beta.echo",
    });
    expect(form.status).toBe(415);
    expect((await echo(dev, "beta")).isError).toBe(true);

    // The developer approves beta.echo: callable at once, no longer listed.
    const ok = await approve(base, "beta.echo", bearer(TOKEN_DEV));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ approved: ["beta: approved tool echo"] });
    const served = await echo(dev, "beta");
    expect(served.isError).toBeFalsy();
    expect(text(served)).toBe("hi");
    expect((await review(base, bearer(TOKEN_DEV))).body.servers.map((s) => s.server)).toEqual([
      "alpha",
    ]);
    expect((await approve(base, "beta", bearer(TOKEN_DEV))).status).toBe(409);

    // The ci bot approves its own server as a whole.
    const whole = await approve(base, "alpha", bearer(TOKEN_CI));
    expect(whole.status).toBe(200);
    expect((await echo(await mcpClient(base, TOKEN_CI), "alpha")).isError).toBeFalsy();
    expect((await review(base, bearer(TOKEN_CI))).body.servers).toEqual([]);
  });
});
