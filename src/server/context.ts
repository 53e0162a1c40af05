import type { Config } from "../config/load.js";
import type { SchemaCompiler } from "../compression/schema.js";
import type { Executor } from "../executor/executor.js";
import type { Logger } from "../logger.js";
import type { LogMessage } from "../registry/connection.js";
import type { Registry } from "../registry/registry.js";
import type { CatalogSearch } from "../registry/search.js";
import type { JsonSchema, ToolAnnotations, ToolResult } from "../types.js";

/** Everything a meta-tool may use. Built once per proxy in createProxy(). */
export interface ProxyContext {
  config: Config;
  logger: Logger;
  registry: Registry;
  executor: Executor;
  schemas: SchemaCompiler;
  search: CatalogSearch;
}

/** Per-request inputs from the downstream client. */
export interface RequestContext {
  signal: AbortSignal;
  /** Forward an upstream log message to the client (filtered by the level it set). */
  sendLog?: (message: LogMessage) => void;
  /** Forward progress to the client; present only when the client asked for progress. */
  sendProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** A meta-tool: its definition as data plus a handler. One file each in src/server/tools/. */
export interface MetaTool {
  name: string;
  /** Descriptions may depend on the catalog (describe carries it). */
  description(ctx: ProxyContext): string;
  inputSchema: JsonSchema;
  annotations?: ToolAnnotations;
  handle(
    args: Record<string, unknown>,
    ctx: ProxyContext,
    req: RequestContext,
  ): Promise<ToolResult>;
}
