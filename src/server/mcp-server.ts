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
  SetLevelRequestSchema,
  type LoggingLevel,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../errors.js";
import { VERSION } from "../version.js";
import type { MetaTool, ProxyContext, RequestContext } from "./context.js";
import { callTool } from "./tools/call.js";
import { describeTool } from "./tools/describe.js";
import { resourcesTool } from "./tools/resources.js";

/** MCP logging levels, least severe first. */
const LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

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
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  const log = ctx.logger;
  // Upstream log messages reach this client at or above the level it set (default: warning).
  let minLevel: LoggingLevel = "warning";
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minLevel = request.params.level;
    return {};
  });

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
      sendLog: (message) => {
        if (LEVELS.indexOf(message.level) < LEVELS.indexOf(minLevel)) return;
        void extra
          .sendNotification({ method: "notifications/message", params: message })
          .catch((err: unknown) => log.debug(`log message not forwarded: ${errorMessage(err)}`));
      },
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
