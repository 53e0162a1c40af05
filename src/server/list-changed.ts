/**
 * When to tell a client its tool list changed. The describe description carries the caller's
 * catalog, so a client is told when that description changes for its caller, and only then.
 */
import { errorMessage } from "../errors.js";
import type { ProxyContext, SessionMemory } from "./context.js";
import { DEFAULT_CALLER } from "./mcp-server.js";
import { describeTool } from "./tools/describe.js";

/**
 * On every catalog or config change, call `send` when the description this connection or
 * session last listed (in `memory`) differs from the current one. A client that has not listed
 * through it may hold a list from elsewhere: it is always told. Returns the unsubscribe.
 */
export function watchCatalog(
  ctx: ProxyContext,
  memory: SessionMemory,
  send: () => Promise<void>,
  fallbackCaller: () => string = () => DEFAULT_CALLER,
): () => void {
  return ctx.views.onChange(() => {
    if (memory.shown !== undefined) {
      const now = describeTool.description(ctx.views.forCaller(memory.caller ?? fallbackCaller()));
      if (now === memory.shown) return;
      memory.shown = now;
    }
    void send().catch((err: unknown) =>
      ctx.logger.debug(`list_changed not sent: ${errorMessage(err)}`),
    );
  });
}
