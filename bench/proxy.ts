/**
 * An mcpx proxy built in-process over real upstream processes, with a downstream SDK client
 * connected in memory (as test/helpers/inmemory.ts connectClient does).
 */
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parseConfig } from "../src/config/load.js";
import { createLogger } from "../src/logger.js";
import { createProxy, type Proxy } from "../src/proxy.js";
import { connectClient } from "../test/helpers/inmemory.js";
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
  let downstream: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    await proxy.start();
    const failed = proxy.context.registry.servers().filter((s) => s.status !== "ready");
    if (failed.length > 0) {
      throw new Error(
        `upstreams not ready: ${failed.map((s) => `${s.name} (${s.status}: ${s.error ?? "?"})`).join(", ")}`,
      );
    }
    downstream = await connectClient(proxy);
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
