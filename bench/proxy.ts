/**
 * An mcpx proxy built in-process over real upstream processes, with a downstream SDK client
 * connected in memory and served as stdio is (like test/helpers/inmemory.ts connectClient,
 * with a plain SDK 1.x client: a 2025-era host).
 */
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { parseConfig } from "../src/config/load.js";
import { createLogger } from "../src/logger.js";
import { createProxy, type Proxy } from "../src/proxy.js";
import { serveConnection } from "../src/server/stdio.js";
import { ROOT, type StdioSpec } from "./upstreams.js";

export interface BenchProxy {
  proxy: Proxy;
  /** A downstream client: what the model's host talks to. */
  client: Client;
  /** Close the downstream session, then the proxy and every upstream process it started. */
  close(): Promise<void>;
}

/**
 * Start a proxy over `servers` and wait for discovery. Throws (after closing everything) if an
 * upstream failed: a benchmark over a partial catalog would report wrong ratios.
 */
export async function startProxy(
  servers: Record<string, StdioSpec>,
  settings: Record<string, unknown> = {},
): Promise<BenchProxy> {
  const config = parseConfig(
    { mcpServers: servers, ...settings },
    path.join(ROOT, "bench/mcpx.bench.json"),
    {},
  );
  const proxy = createProxy(config, { logger: createLogger({ level: "warn" }) });
  let downstream: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    await proxy.start();
    const failed = proxy.context.registry.servers().filter((s) => s.status !== "ready");
    if (failed.length > 0) {
      throw new Error(
        `upstreams not ready: ${failed.map((s) => `${s.name} (${s.status}: ${s.error ?? "?"})`).join(", ")}`,
      );
    }
    downstream = await connect(proxy);
  } catch (err) {
    await proxy.close();
    throw err;
  }
  const session = downstream;
  return {
    proxy,
    client: session.client,
    close: async () => {
      try {
        await session.close();
      } finally {
        await proxy.close();
      }
    },
  };
}

/** A 2025-era SDK 1.x client of `proxy`, in memory. */
async function connect(proxy: Proxy): Promise<{ client: Client; close(): Promise<void> }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = serveConnection(proxy.context, serverSide);
  const client = new Client({ name: "mcpx-bench", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await served.close();
    },
  };
}
