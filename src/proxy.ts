/**
 * The composition root: builds registry, executor and schema compiler for one config. Tests build
 * whole proxies in-process with it; src/index.ts adds the CLI, transports and signals.
 */
import type { Config } from "./config/load.js";
import { SchemaCompiler } from "./compression/schema.js";
import { Executor } from "./executor/executor.js";
import type { Logger } from "./logger.js";
import type { ClientFactory } from "./registry/connection.js";
import { Registry } from "./registry/registry.js";
import { CatalogViews } from "./registry/view.js";
import type { ServerConfig } from "./config/load.js";
import type { ProxyContext } from "./server/context.js";

export interface ProxyOptions {
  logger: Logger;
  /** Replace how upstream sessions are opened (in-memory upstreams in tests). */
  factoryFor?: (server: ServerConfig) => ClientFactory;
}

export interface Proxy {
  readonly context: ProxyContext;
  /** Discover every upstream. Never rejects: failed upstreams are recorded as failed. */
  start(): Promise<void>;
  /**
   * Apply a new, already validated config: servers started, restarted or stopped by spec, and
   * profiles, callers and auth swapped at once. Resolves when new servers are discovered.
   */
  reload(next: Config): Promise<void>;
  /** Close every upstream session and process. Idempotent. */
  close(): Promise<void>;
}

export function createProxy(config: Config, options: ProxyOptions): Proxy {
  const logger = options.logger;
  logger.addSecrets(config.secrets);
  const registry = new Registry(config, {
    logger,
    ...(options.factoryFor && { factoryFor: options.factoryFor }),
  });
  const executor = new Executor(registry, { logger, compression: config.compression.results });
  const schemas = new SchemaCompiler({ mode: config.compression.schemas });
  const views = new CatalogViews(registry, config);
  const context: ProxyContext = { config, logger, registry, executor, schemas, views };
  let closing: Promise<void> | undefined;
  return {
    context,
    start: () => registry.start(),
    reload: async (next) => {
      logger.addSecrets(next.secrets);
      if (JSON.stringify(next.compression) !== JSON.stringify(context.config.compression)) {
        logger.warn("config reload: compression settings take effect when mcpx restarts");
      }
      // Synchronous up to the registry's first await: servers, config (auth) and profiles swap
      // in one tick, so no request sees a mix of old and new.
      const discovered = registry.reconcile(next);
      context.config = next;
      views.configure(next);
      await discovered;
    },
    close: () => {
      // The registry owns every session pool, so closing it ends every upstream process.
      closing ??= registry.close();
      return closing;
    },
  };
}
