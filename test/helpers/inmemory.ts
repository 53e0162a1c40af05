/** In-process upstreams and proxies: the SDK's linked in-memory transports, no processes. */
import type { Clock } from "../../src/clock.js";
import { InMemoryTransport as DownstreamPair, type Client } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { parseConfig, type Config } from "../../src/config/load.js";
import { createLogger, type Logger } from "../../src/logger.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { connectTransport } from "../../src/upstream/factory.js";
import { serveConnection } from "../../src/server/stdio.js";
import { newClient, type Era } from "./clients.js";

/** A config whose servers are placeholders; their sessions come from `upstreams`. */
export function memoryConfig(names: string[], extra: Record<string, unknown> = {}): Config {
  return parseConfig(
    // Distinct commands: identical specs would share one pool, as they do in real configs.
    {
      mcpServers: Object.fromEntries(names.map((n) => [n, { command: `in-memory-${n}` }])),
      ...extra,
    },
    "/memory/mcpx.json",
    {},
  );
}

export function quietLogger(lines: string[] = []): Logger {
  return createLogger({ level: "debug", write: (l) => lines.push(l) });
}

/**
 * Build a proxy whose upstream sessions are in-memory connections to servers made by
 * `upstreams[name]()` (a fresh server per session, as a process would be).
 */
export function memoryProxy(
  upstreams: Record<string, () => McpServer>,
  options: { config?: Config; logger?: Logger; clock?: Clock; stateDir?: string } = {},
): Proxy {
  const config = options.config ?? memoryConfig(Object.keys(upstreams));
  return createProxy(config, {
    logger: options.logger ?? quietLogger(),
    ...(options.stateDir !== undefined && { stateDir: options.stateDir }),
    ...(options.clock && { clock: options.clock }),
    factoryFor: (server) => async () => {
      const make = upstreams[server.name];
      if (!make) throw new Error(`no in-memory upstream ${server.name}`);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await make().connect(serverSide);
      return connectTransport(clientSide, { timeoutMs: 5_000 });
    },
  });
}

/**
 * Connect a v2 SDK client of `era` (default 2026-07-28) to a proxy in memory, served as stdio
 * is. `name` is its clientInfo.name; `caller` fixes the caller as stdio's --caller does.
 */
export async function connectClient(
  proxy: Proxy,
  options: { name?: string; caller?: string; era?: Era; client?: Client } = {},
): Promise<{ client: Client; close: () => Promise<void> }> {
  const [clientSide, serverSide] = DownstreamPair.createLinkedPair();
  const served = serveConnection(
    proxy.context,
    serverSide,
    options.caller === undefined ? {} : { caller: options.caller },
  );
  const client =
    options.client ?? newClient(options.era ?? "modern", options.name ?? "test-client");
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await served.close();
    },
  };
}
