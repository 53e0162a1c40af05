/** Start every server of a config the way the proxy does, for validate --connect and stats. */
import { DEFAULT_PROFILE, type Config } from "../config/load.js";
import { createLogger } from "../logger.js";
import { createProxy, type Proxy } from "../proxy.js";
import { defaultStateDir } from "../upstream/oauth/store.js";
import type { ServerState } from "../registry/registry.js";
import { progress } from "./output.js";

/**
 * A proxy with every server's first discovery settled (ready or down). Progress goes to stderr
 * on a terminal. The caller closes the proxy (every upstream process ends with it).
 */
export async function connectAll(
  config: Config,
): Promise<{ proxy: Proxy; servers: readonly ServerState[] }> {
  // Upstream stderr and retries are not this command's output; failures show as statuses.
  const proxy = createProxy(config, {
    logger: createLogger({ level: "silent" }),
    // Remote servers signed in with `mcpx login` connect as they do when served.
    stateDir: defaultStateDir(process.env),
  });
  const registry = proxy.context.registry;
  const shown = progress("connecting", config.servers.length);
  const settled = new Set<string>();
  const unsubscribe = registry.onChange((name) => {
    const state = registry.server(name);
    if (state && state.status !== "starting" && !settled.has(name)) {
      settled.add(name);
      shown.step(name);
    }
  });
  try {
    await proxy.start();
  } finally {
    unsubscribe();
    shown.done();
  }
  // As the default profile sees them: a server's own tool filter hides what it excludes.
  return { proxy, servers: proxy.context.views.forCaller(DEFAULT_PROFILE).servers() };
}
