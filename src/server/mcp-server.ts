/**
 * The downstream MCP server: exactly three tools, answered from the proxy context. One SDK
 * `Server` per downstream session (stdio has one, HTTP one per session id).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../errors.js";
import { VERSION } from "../version.js";
import type { MetaTool, ProxyContext, RequestContext } from "./context.js";
import { callTool } from "./tools/call.js";
import { describeTool } from "./tools/describe.js";
import { resourcesTool } from "./tools/resources.js";

/** The only tools the client ever sees. */
export const META_TOOLS: readonly MetaTool[] = [describeTool, callTool, resourcesTool];

export interface DownstreamServer {
  server: Server;
  close(): Promise<void>;
}

/** The tools/list answer: the API form of the three meta-tools. */
export function listMetaTools(ctx: ProxyContext): Tool[] {
  return META_TOOLS.map((t) => ({
    name: t.name,
    description: t.description(ctx),
    inputSchema: t.inputSchema as Tool["inputSchema"],
    ...(t.annotations && { annotations: t.annotations }),
  }));
}

export function createMcpServer(ctx: ProxyContext): DownstreamServer {
  const server = new Server(
    { name: "mcpx", version: VERSION },
    { capabilities: { tools: { listChanged: true } } },
  );
  const log = ctx.logger;

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listMetaTools(ctx) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = META_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}": mcpx offers describe, call and resources.`,
      );
    }
    const progressToken = request.params._meta?.progressToken;
    const req: RequestContext = {
      signal: extra.signal,
      ...(progressToken !== undefined && {
        sendProgress: (p) =>
          void extra
            .sendNotification({ method: "notifications/progress", params: { progressToken, ...p } })
            .catch((err: unknown) => log.debug(`progress not forwarded: ${errorMessage(err)}`)),
      }),
    };
    try {
      return await tool.handle(request.params.arguments ?? {}, ctx, req);
    } catch (err) {
      // Meta-tools turn every expected failure into an isError result; reaching here is our bug.
      log.error(`${tool.name} failed unexpectedly: ${errorMessage(err)}`);
      throw new McpError(
        ErrorCode.InternalError,
        `mcpx internal error in ${tool.name}: ${errorMessage(err)}`,
      );
    }
  });

  // The describe description carries the catalog: when it changes, tell the client to re-list.
  const unsubscribe = ctx.registry.onChange(() => {
    if (!server.transport) return;
    void server
      .sendToolListChanged()
      .catch((err: unknown) => log.debug(`list_changed not sent: ${errorMessage(err)}`));
  });

  return {
    server,
    close: async () => {
      unsubscribe();
      await server.close();
    },
  };
}
