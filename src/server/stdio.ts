import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { ProxyContext } from "./context.js";
import { createMcpServer } from "./mcp-server.js";

export interface StdioHandle {
  /** Resolves when the client goes away (stdin ends). */
  readonly ended: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serve MCP on this process's stdin/stdout. stdout carries JSON-RPC only. The caller is
 * `options.caller` (`--caller`), else the client's clientInfo.name, else "default".
 */
export async function serveStdio(
  ctx: ProxyContext,
  options: { caller?: string } = {},
): Promise<StdioHandle> {
  const downstream = createMcpServer(ctx, options);
  const transport = new StdioServerTransport();
  // The SDK transport does not watch for end of input; the client leaving is our cue to shut down.
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  await downstream.server.connect(transport);
  return { ended, close: () => downstream.close() };
}
