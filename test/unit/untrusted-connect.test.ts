/**
 * An untrusted config's remote servers are checked at load and again at every connection: a name
 * that resolved to a public address at load may point at this machine later (DNS rebinding).
 * The client factory is given a DNS answer of our choosing (no real DNS offline); a TCP listener
 * on 127.0.0.1 counts every connection that reaches it.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { createServer, type Server, type Socket } from "node:net";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { assertPublicServers, isPublicAddress, type Lookup } from "../../src/config/trust.js";
import { createClientFactory } from "../../src/upstream/factory.js";
import { Registry } from "../../src/registry/registry.js";
import { quietLogger } from "../helpers/inmemory.js";

let listener: Server;
let port: number;
const sockets = new Set<Socket>();
let connections = 0;

beforeAll(async () => {
  listener = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    // Not TLS: whoever connects fails its handshake, which is all a counted connection needs.
    socket.on("close", () => sockets.delete(socket));
    socket.end();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => listener.close(resolve));
});

function untrustedServer(url: string, type: "http" | "sse" = "http") {
  const config = parseConfig(
    { trust: "untrusted", mcpServers: { remote: { type, url } } },
    "/project/.mcp.json",
    {},
  );
  return { config, server: config.servers[0]! };
}

/** A DNS that answers each lookup with the next of `answers` (the last one from then on). */
function changingDns(...answers: string[][]): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (host: string) => {
    asked.push(host);
    const answer = answers[Math.min(asked.length - 1, answers.length - 1)]!;
    return Promise.resolve(answer.map((address) => ({ address })));
  };
  return Object.assign(lookup, { asked });
}

describe("an untrusted config's remote server, at connect time", () => {
  it.each(["http", "sse"] as const)(
    "is refused over %s when its name now resolves to this machine, before any connection",
    async (type) => {
      const { config, server } = untrustedServer(`https://mcp.rebind.test:${port}/mcp`, type);
      // At load the name was public…
      const dns = changingDns(["93.184.216.34"], ["127.0.0.1"]);
      await expect(assertPublicServers(config, dns)).resolves.toBeUndefined();
      // …by the time mcpx connects it is not.
      const open = createClientFactory(server, {
        logger: quietLogger(),
        connectTimeoutMs: 5_000,
        publicOnly: { lookup: dns },
      });
      const before = connections;
      const err = (await open().catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toContain(
        "mcp.rebind.test resolves to 127.0.0.1, not a public address; an untrusted config may reach only public hosts",
      );
      expect(err.message).toContain(`https://mcp.rebind.test:${port}/mcp`);
      expect(dns.asked.length).toBeGreaterThanOrEqual(2);
      expect(connections).toBe(before);
    },
  );

  it("checks every address of the name, not only the first", async () => {
    const { server } = untrustedServer(`https://mixed.rebind.test:${port}/mcp`);
    const dns = changingDns(["93.184.216.34", "::ffff:127.0.0.1"]);
    const open = createClientFactory(server, {
      logger: quietLogger(),
      connectTimeoutMs: 5_000,
      publicOnly: { lookup: dns },
    });
    const before = connections;
    await expect(open()).rejects.toThrow("resolves to ::ffff:127.0.0.1, not a public address");
    expect(connections).toBe(before);
  });

  it("(the listener does count connections: a trusted config reaches it)", async () => {
    const config = parseConfig(
      { mcpServers: { local: { type: "http", url: `https://127.0.0.1:${port}/mcp` } } },
      "/project/mcpx.json",
      {},
    );
    const open = createClientFactory(config.servers[0]!, {
      logger: quietLogger(),
      connectTimeoutMs: 5_000,
    });
    const before = connections;
    await expect(open()).rejects.toThrow();
    expect(connections).toBeGreaterThan(before);
  });
});

/** This machine's name, when the system's DNS (/etc/hosts) resolves it only to non-public addresses. */
async function localName(): Promise<string | undefined> {
  const name = hostname();
  const found = await dnsLookup(name, { all: true }).catch(() => []);
  return found.length > 0 && found.every((a) => !isPublicAddress(a.address)) ? name : undefined;
}

describe("the registry", () => {
  it("connects an untrusted config's servers through the public-only check (system DNS)", async (ctx) => {
    const name = await localName();
    // Never connect anywhere else: a machine whose name is public has nothing to refuse here.
    if (!name) {
      console.warn(`skipped: ${hostname()} does not resolve to a non-public address here`);
      return ctx.skip();
    }
    const { config } = untrustedServer(`https://${name}:${port}/mcp`);
    const registry = new Registry(config, { logger: quietLogger() });
    const before = connections;
    try {
      await registry.start();
      const state = registry.server("remote");
      expect(state?.status).toBe("down");
      expect(state?.error).toContain(`${name} resolves to`);
      expect(state?.error).toContain("not a public address");
      expect(connections).toBe(before);
    } finally {
      await registry.close();
    }
  });
});
