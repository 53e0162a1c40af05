/**
 * The downstream MCP server: exactly three tools, answered from the proxy context. One SDK
 * `Server` per downstream session (stdio has one, HTTP one per session id).
 */
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
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
import type { CatalogView } from "../registry/view.js";
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

/** The caller the default profile serves when nothing names one. */
export const DEFAULT_CALLER = "default";

/** The tools/list answer for one caller's view: the API form of the three meta-tools. */
export function listMetaTools(view: CatalogView): Tool[] {
  return META_TOOLS.map((t) => ({
    name: t.name,
    description: t.description(view),
    inputSchema: t.inputSchema as Tool["inputSchema"],
    ...(t.annotations && { annotations: t.annotations }),
  }));
}

export interface DownstreamOptions {
  /** A caller fixed by the transport (stdio `--caller`); wins over everything else. */
  caller?: string;
}

/**
 * The caller an HTTP request was identified as before it reached the SDK (bearer token, then
 * `/mcp/<caller>`, then `X-MCPX-Caller`), carried in the SDK's per-request `authInfo`.
 */
export function authInfoFor(caller: string | undefined): AuthInfo {
  // The client's token is deliberately not kept here: nothing downstream of auth needs it.
  return { token: "", clientId: caller ?? "", scopes: [], extra: { caller } };
}

/** A caller name fit to key profiles and logs: no control characters, a sane length. */
export function cleanCaller(value: string | undefined): string | undefined {
  const v = value?.trim();
  // eslint-disable-next-line no-control-regex
  return v && v.length <= 200 && !/[\u0000-\u001f\u007f]/.test(v) ? v : undefined;
}

export function createMcpServer(
  ctx: ProxyContext,
  options: DownstreamOptions = {},
): DownstreamServer {
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

  /**
   * Resolved on every request, never once per session, so a config reload or a different
   * header takes effect at once. Order: the transport's fixed caller (stdio --caller), the one
   * HTTP identified (token, path, header), the client's clientInfo.name, then "default".
   */
  let lastCaller: string | undefined;
  const callerOf = (authInfo: AuthInfo | undefined): string => {
    const fromHttp = authInfo?.extra?.caller;
    lastCaller =
      options.caller ??
      (typeof fromHttp === "string" ? fromHttp : undefined) ??
      cleanCaller(server.getClientVersion()?.name) ??
      DEFAULT_CALLER;
    return lastCaller;
  };
  /** The describe description this client last saw: list_changed goes out only when it differs. */
  let shown: string | undefined;

  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const tools = listMetaTools(ctx.views.forCaller(callerOf(extra.authInfo)));
    shown = tools[0]?.description;
    return { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = META_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}": mcpx offers describe, call and resources.`,
      );
    }
    const progressToken = request.params._meta?.progressToken;
    const caller = callerOf(extra.authInfo);
    const req: RequestContext = {
      caller,
      view: ctx.views.forCaller(caller),
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
        `mcpx internal error in ${tool.name}: ${log.redact(errorMessage(err))}`,
      );
    }
  });

  // The describe description carries the caller's catalog: when a registry change or a config
  // reload changes it for this client's caller, tell the client to re-list. A client that has
  // not listed through this session yet may hold a list from elsewhere: it is always told.
  const unsubscribe = ctx.views.onChange(() => {
    if (!server.transport) return;
    if (shown !== undefined) {
      const now = describeTool.description(ctx.views.forCaller(lastCaller ?? DEFAULT_CALLER));
      if (now === shown) return;
      shown = now;
    }
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
