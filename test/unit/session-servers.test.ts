/** 2025-era sessions' SDK servers kept between requests on one replica (src/server/session-servers.ts). */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, it } from "vitest";
import type { Proxy } from "../../src/proxy.js";
import { ResponseRoutes } from "../../src/server/seeded-transport.js";
import { SessionServers, type Session } from "../../src/server/session-servers.js";
import { memoryProxy } from "../helpers/inmemory.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function session(sid: string): Session {
  const exp = Date.now() + 60_000;
  return {
    sid,
    claims: { v: "2025-06-18", ci: { name: "kept-test", version: "1" }, cc: {}, iat: 0, exp },
    state: { lastSeen: 0, open: 0, exp, calls: new Map() },
  };
}

function post(message: Record<string, unknown>): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
}

/** A proxy whose upstream `s` has `wait`, answering once `open()` is called. */
async function gatedProxy(): Promise<{ proxy: Proxy; open: () => void }> {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const p = memoryProxy({
    s: () => {
      const server = new McpServer({ name: "s", version: "1" });
      server.registerTool("wait", { description: "Waits for the test." }, async () => {
        await gate;
        return { content: [{ type: "text", text: "done" }] };
      });
      return server;
    },
  });
  await p.start();
  return { proxy: p, open };
}

it("reuses a session's server, lends a busy id to no one, stays within its bound, drops on end", async () => {
  const gated = await gatedProxy();
  proxy = gated.proxy;
  const servers = new SessionServers(proxy.context, new ResponseRoutes(), 2);
  const a = session("a");

  const first = (await servers.lend(a, 1))!;
  const listed = await first.transport.handleRequest(post({ id: 1, method: "tools/list" }));
  expect(listed.status).toBe(200);
  expect(await listed.text()).toContain('"name":"describe"');
  first.end();

  // The same session's next request: the same server, no new one built.
  const call = (await servers.lend(a, 2))!;
  expect(call.server).toBe(first.server);
  const waiting = await call.transport.handleRequest(
    post({
      id: 2,
      method: "tools/call",
      params: { name: "call", arguments: { method: "s.wait" } },
    }),
  );
  expect(waiting.status).toBe(200);
  // id 2 is being answered: a request reusing it is not lent the kept server.
  await expect.poll(() => servers.lend(a, 2)).toBeUndefined();
  gated.open();
  expect(await waiting.text()).toContain("done");
  call.end();

  // Past the bound, the least recently used idle server is closed.
  for (const sid of ["b", "c"]) (await servers.lend(session(sid), 1))!.end();
  expect(servers.size).toBe(2);
  const again = (await servers.lend(a, 3))!;
  expect(again.server).not.toBe(first.server);
  again.end();

  servers.drop("a");
  expect(servers.size).toBe(1);
  servers.closeAll();
  expect(servers.size).toBe(0);
});
