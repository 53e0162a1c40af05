/**
 * The downstream MCP server: exactly three tools, answered from the proxy context. One factory
 * builds an SDK `Server` for both protocol eras: per connection on stdio, per HTTP request
 * otherwise (see stdio.ts, http-modern.ts, http-legacy.ts).
 */
import {
  CLIENT_INFO_META_KEY,
  isInputRequiredResult,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type AuthInfo,
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  type JSONRPCRequest,
  type Result,
  type JSONObject,
  type LoggingLevel,
  type ServerCapabilities,
  type ServerContext,
  type Tool,
  type Transport,
} from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";
import { declaresApps, hasApps } from "../registry/apps.js";
import { UI_EXTENSION } from "../types.js";
import type { CatalogView } from "../registry/view.js";
import { DOWNSTREAM_CAPABILITIES } from "./early.js";
import { VERSION } from "../version.js";
import type { MetaTool, ProxyContext, RequestContext, SessionMemory } from "./context.js";
import type { Era } from "../types.js";
import { inputProblem } from "./input-limits.js";
import {
  dispatchPlainRequests,
  requestController,
  type ToolCallHandler,
} from "./plain-dispatch.js";
import { registerCompletionHandler } from "./handlers/completion.js";
import type { HandlerEnv } from "./handlers/env.js";
import { PageCursors } from "./handlers/pages.js";
import { registerPromptHandlers } from "./handlers/prompts.js";
import { registerResourceHandlers } from "./handlers/resources.js";
import { registerSubscriptionHandlers } from "./handlers/subscriptions.js";
import { callWithChannel } from "./call-channel.js";
import { sessionKey } from "./session-token.js";
import { callTool } from "./tools/call.js";
import { describeTool } from "./tools/describe.js";
import { directEntry, directMetaTool, directTools } from "./tools/direct.js";
import { resourcesTool } from "./tools/resources.js";
import { clientTraceparent } from "../traceparent.js";
import { registerTaskHandlers, runAsTask, TASKS_EXTENSION, taskWish } from "./tasks.js";
import { LOGGING_LEVELS, loggingLevel } from "./log-levels.js";

/** What a 2025-era client gets until it calls logging/setLevel. */
const DEFAULT_LEGACY_LEVEL: LoggingLevel = "warning";

/** The only tools the client ever sees. */
export const META_TOOLS: readonly MetaTool[] = [describeTool, callTool, resourcesTool];

/** The caller the default profile serves when nothing names one. */
export const DEFAULT_CALLER = "default";

/**
 * The tools/list answer for one caller's view: the API form of the three meta-tools, then the
 * app tools it lists directly (`apps: "direct"`, tools/direct.ts). The token economy counts
 * this whole list.
 */
export function listMetaTools(view: CatalogView): Tool[] {
  const meta = META_TOOLS.map((t) => ({
    name: t.name,
    description: t.description(view),
    inputSchema: (typeof t.inputSchema === "function"
      ? t.inputSchema(view)
      : t.inputSchema) as Tool["inputSchema"],
    ...(t.annotations && { annotations: t.annotations }),
  }));
  return [...meta, ...directTools(view).map((d) => directEntry(d) as Tool)];
}

/**
 * The MCP Apps extension as mcpx declares it: what an upstream declared (the first that did),
 * else `{}` when a server has app tools or the config asks for `apps: "direct"`; none otherwise.
 */
function appsExtension(ctx: ProxyContext): Record<string, unknown> | undefined {
  const servers = ctx.registry.servers();
  const declared = servers.find(declaresApps)?.identity?.capabilities.extensions;
  if (isRecord(declared) && isRecord(declared[UI_EXTENSION])) return declared[UI_EXTENSION];
  const asked =
    ctx.config.servers.some((s) => s.apps === "direct") ||
    Object.values(ctx.config.profiles).some((p) => p.apps === "direct");
  return asked || servers.some(hasApps) ? {} : undefined;
}

/**
 * The SDK server, with capabilities read when a client asks (initialize, server/discover):
 * the MCP Apps extension is declared only once an upstream has it (see appsExtension).
 */
class Downstream extends Server {
  /** mcpx's own tools/call handler, as registered (a plain call runs it: plain-dispatch.ts). */
  toolCall: ToolCallHandler | undefined;

  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1],
    private readonly apps: () => Record<string, unknown> | undefined,
    private readonly era: Era,
  ) {
    super(info, options);
  }

  /**
   * The SDK checks a spec method's params before its handler runs, and throws a plain Error when
   * they are malformed, which it answers as -32603 (an internal error; tools/call alone gets
   * -32602). That check throws synchronously, while a handler fails asynchronously: a synchronous
   * throw is the client's malformed request, answered -32602 as the spec says (found by the
   * HTTP fuzz: a completion/complete without `ref`).
   */
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const checked = (request: JSONRPCRequest, ctx: ServerContext): Promise<Result> => {
      try {
        return handler(request, ctx);
      } catch (err) {
        if (err instanceof ProtocolError) throw err;
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Invalid params for ${method}: ${errorMessage(err)}`,
        );
      }
    };
    return super._wrapHandler(method, checked);
  }

  /**
   * A plain request skips the SDK's schema tries, and a 2025-era client's plain tools/call the
   * SDK's per-request setup (plain-dispatch.ts).
   */
  override async connect(transport: Transport): Promise<void> {
    const previous = transport.onmessage;
    await super.connect(transport);
    dispatchPlainRequests(this, transport, previous, this.era === "legacy", this.toolCall);
  }

  override getCapabilities(): ServerCapabilities {
    const base = super.getCapabilities();
    const apps = this.apps();
    // MCP Tasks: 2025-11-25's capability is in DOWNSTREAM_CAPABILITIES; 2026-07-28 has the
    // extension (server/tasks.ts).
    const withTasks: ServerCapabilities =
      this.era === "legacy"
        ? base
        : { ...base, extensions: { ...base.extensions, [TASKS_EXTENSION]: {} } };
    if (!apps) return withTasks;
    return {
      ...withTasks,
      extensions: { ...withTasks.extensions, [UI_EXTENSION]: apps as JSONObject },
    };
  }
}

export interface DownstreamOptions {
  era: Era;
  /** A caller fixed by the transport (stdio `--caller`); wins over everything else. */
  caller?: string;
  /** Where this connection or session keeps its state; absent for 2026-07-28 requests. */
  memory?: SessionMemory;
  /** Names the client connection (stdio) or 2025-era session (HTTP): roots/list_changed from it. */
  clientId?: string;
  /**
   * The client is this machine's user (stdio): its roots reach upstreams as given. Otherwise
   * (HTTP) they are held within each server's configured roots, unless the profile says
   * `clientRoots`.
   */
  localClient?: boolean;
}

/**
 * The caller an HTTP request was identified as before it reached the SDK (bearer token, then
 * `/mcp/<caller>`, then `X-MCPX-Caller`), carried in the SDK's per-request `authInfo`.
 * `pinned` says a token fixed it.
 */
export function authInfoFor(caller: string | undefined, pinned = false): AuthInfo {
  // The client's token is deliberately not kept here: nothing downstream of auth needs it.
  return { token: "", clientId: caller ?? "", scopes: [], extra: { caller, pinned } };
}

/** The caller an `authInfo` from authInfoFor names, if any. */
export function callerOfAuth(authInfo: AuthInfo | undefined): string | undefined {
  const caller = authInfo?.extra?.caller;
  return typeof caller === "string" ? caller : undefined;
}

/** A caller name fit to key profiles and logs: no control characters, a sane length. */
export function cleanCaller(value: string | undefined): string | undefined {
  const v = value?.trim();
  // eslint-disable-next-line no-control-regex
  return v && v.length <= 200 && !/[\u0000-\u001f\u007f]/.test(v) ? v : undefined;
}

/** The clientInfo.name a 2026-07-28 request's `_meta` envelope carries, if any. */
export function envelopeClientName(meta: unknown): string | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const info = (meta as Record<string, unknown>)[CLIENT_INFO_META_KEY];
  const name = typeof info === "object" && info !== null ? (info as { name?: unknown }).name : "";
  return typeof name === "string" ? cleanCaller(name) : undefined;
}

/** Build the SDK server for one connection, one legacy-session request, or one modern request. */
export function createDownstream(ctx: ProxyContext, options: DownstreamOptions): Server {
  const server = new Downstream(
    { name: "mcpx", version: VERSION },
    {
      capabilities: DOWNSTREAM_CAPABILITIES,
      // A 2026-07-28 retry names its waiting call in a signed state (pending.ts).
      requestState: { verify: ctx.pending.verify },
    },
    () => appsExtension(ctx),
    options.era,
  );
  const memory = options.memory ?? {};

  /**
   * Resolved on every request, never once per session, so a config reload or a different
   * header takes effect at once. Order: the transport's fixed caller (stdio --caller), the one
   * HTTP identified (token, path, header), the client's clientInfo.name (the request's envelope,
   * else its initialize), then "default". Nothing the client reports overrides a token.
   */
  const callerOf = (req: ServerContext): string =>
    options.caller ??
    callerOfAuth(req.http?.authInfo) ??
    envelopeClientName(req.mcpReq.envelope) ??
    cleanCaller(server.getClientVersion()?.name) ??
    DEFAULT_CALLER;

  // A 2025-era client's new roots reach the upstreams its running calls use.
  const clientId = options.clientId;
  if (clientId !== undefined) {
    server.setNotificationHandler("notifications/roots/list_changed", () => {
      ctx.registry.rootsChanged(clientId);
    });
  }

  // 2025 era: upstream log messages reach the client at or above the level it set.
  server.setRequestHandler("logging/setLevel", (request) => {
    memory.level = request.params.level;
    return {};
  });

  server.setRequestHandler("tools/list", async (_request, req) => {
    const caller = callerOf(req);
    let view = ctx.views.forCaller(caller);
    // A first look right after initialize waits (up to startupWait) for servers still starting:
    // clients that ignore list_changed would otherwise keep a catalog without their tools.
    const names = view.servers().map((s) => s.name);
    if (names.some((n) => ctx.registry.awaitsFirstCatalog(n))) {
      await ctx.registry.firstLook(names, req.mcpReq.signal);
      view = ctx.views.forCaller(caller);
    }
    const tools = listMetaTools(view);
    memory.shown = tools[0]?.description;
    memory.caller = caller;
    // 2025-11-25 clients may run `call` as a task (server/tasks.ts); 2026 has no such field.
    if (options.era === "legacy") {
      return {
        tools: tools.map((t) =>
          t.name === callTool.name ? { ...t, execution: { taskSupport: "optional" as const } } : t,
        ),
      };
    }
    // Views are per caller: never cacheable across callers.
    return Object.assign({ tools }, { ttlMs: listTtlMs(ctx, view), cacheScope: "private" });
  });

  let cursors: PageCursors | undefined;
  const env: HandlerEnv = {
    ctx,
    era: options.era,
    memory,
    callerOf,
    ...(clientId !== undefined && { clientId }),
    cursors: () => (cursors ??= new PageCursors(sessionKey(ctx.config))),
    hints: (view) =>
      options.era === "legacy" ? {} : { ttlMs: listTtlMs(ctx, view), cacheScope: "private" },
  };
  registerPromptHandlers(server, env);
  registerResourceHandlers(server, env);
  registerCompletionHandler(server, env);
  registerSubscriptionHandlers(server, env);
  // A task is its client's: its connection or 2025-era session, else its caller.
  const ownerOf = (req: ServerContext) => clientId ?? `caller:${callerOf(req)}`;
  registerTaskHandlers(server, { ctx, era: options.era, ownerOf });

  const onToolCall = async (
    request: CallToolRequest,
    req: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> => {
    const tool =
      META_TOOLS.find((t) => t.name === request.params.name) ??
      directMetaTool(ctx.views.forCaller(callerOf(req)), request.params.name);
    if (!tool) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}": mcpx offers describe, call and resources.`,
      );
    }
    const args = request.params.arguments ?? {};
    // Held to the limits before anything walks them (validation, logging, the upstream).
    const problem = inputProblem(tool.name, args);
    if (problem) return { content: [{ type: "text", text: problem }], isError: true };
    const caller = callerOf(req);
    const context = requestContext(ctx, req, {
      era: options.era,
      caller,
      clientKey: clientId ?? `caller:${caller}`,
      minLevel:
        options.era === "legacy" ? (memory.level ?? DEFAULT_LEGACY_LEVEL) : envelopeLevel(req),
      progressToken: request.params._meta?.progressToken,
    });
    const traceparent = clientTraceparent(
      request.params._meta,
      req.http?.req?.headers.get("traceparent"),
    );
    if (traceparent !== undefined) context.traceparent = traceparent;
    // MCP Tasks (server/tasks.ts): a `call` the client asked to run as a task, or (2026-07-28,
    // extension declared) one that outlives taskAfter, goes on after this request.
    const wish = tool === callTool ? taskWish(request.params, req, options.era) : undefined;
    if (wish && (wish.era === "legacy" || ctx.config.taskAfterMs > 0)) {
      const { sendProgress: _progress, ...base } = context;
      const answer = await runAsTask(
        ctx,
        wish,
        ownerOf(req),
        (signal, task) =>
          tool.handle(args, ctx, {
            ...base,
            signal,
            inTask: true,
            // An upstream task's statuses show in this one (executor/upstream-task.ts).
            task: { ttlMs: task.ttlMs, onStatus: task.update },
          }),
        options.era === "legacy"
          ? (task) =>
              memory.taskStatus
                ? memory.taskStatus(task)
                : server.notification({ method: "notifications/tasks/status", params: task })
          : undefined,
      );
      if ("task" in answer || answer.resultType === "task") return answer as never;
      return server.projectCallToolResult(answer as CallToolResult, undefined);
    }
    const who = {
      era: options.era,
      caller,
      ...(clientId !== undefined && { clientId }),
      confined: options.localClient !== true && ctx.views.profileFor(caller).clientRoots !== true,
    };
    // describe and resources answer without the executor's call spans: a span of their own.
    const span =
      tool === describeTool || tool === resourcesTool
        ? ctx.executor.tracer?.start(`tools/call ${tool.name}`, "server", traceparent)
        : undefined;
    const answer = await callWithChannel(ctx, server, req, who, async (client, signal) => {
      try {
        // `client` before the spread: a key added after one costs V8 a slow path.
        return await tool.handle(args, ctx, {
          client,
          ...context,
          signal,
          ...(span && { span }),
        });
      } catch (err) {
        // Meta-tools turn every expected failure into an isError result; reaching here is our bug.
        ctx.logger.error(`${tool.name} failed unexpectedly: ${errorMessage(err)}`);
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `mcpx internal error in ${tool.name}: ${ctx.logger.redact(errorMessage(err))}`,
        );
      }
    });
    span?.end({
      method: "tools/call",
      tool: tool.name,
      caller,
      profile: context.view.profile.name,
      era: options.era,
      outcome: isRecord(answer) && answer.isError === true ? "isError" : "ok",
    });
    // The call waits for the client's input (2026-07-28): the client retries with it.
    if (isInputRequiredResult(answer)) return answer;
    // Upstream results pass through: a shape only 2026-07-28 allows (array structuredContent)
    // is projected for a 2025 client instead of failing the SDK's result check.
    return server.projectCallToolResult(answer as CallToolResult, undefined);
  };
  server.setRequestHandler("tools/call", onToolCall);
  server.toolCall = onToolCall;
  return server;
}

/**
 * How long a client may reuse this tools/list answer: 0 while a server of the caller's view is
 * not ready (its entry will change), else one health interval, the time within which mcpx
 * itself notices an upstream change. Changes it does notice reach listeners sooner through
 * list_changed, which drops the client's cached list.
 */
function listTtlMs(ctx: ProxyContext, view: CatalogView): number {
  return view.servers().every((s) => s.status === "ready") ? ctx.config.health.intervalMs : 0;
}

/** A 2026-07-28 request's log level: the envelope's; none means the client wants no logs. */
function envelopeLevel(req: ServerContext): LoggingLevel | undefined {
  // The SDK types the envelope as `{}` (2.4.0): read it as the record it is.
  const envelope = req.mcpReq.envelope as Record<string, unknown> | undefined;
  const level = envelope?.[LOG_LEVEL_META_KEY];
  return loggingLevel(level);
}

interface RequestInputs {
  era: Era;
  caller: string;
  clientKey: string;
  /** Forward log messages at or above this level; none when undefined. */
  minLevel: LoggingLevel | undefined;
  progressToken: string | number | undefined;
}

/** The meta-tools' view of one request: caller, view, signal, and how to reach the client. */
function requestContext(
  ctx: ProxyContext,
  req: ServerContext,
  inputs: RequestInputs,
): RequestContext {
  const log = ctx.logger;
  const { minLevel, progressToken } = inputs;
  return {
    era: inputs.era,
    caller: inputs.caller,
    clientKey: inputs.clientKey,
    view: ctx.views.forCaller(inputs.caller),
    signal: req.mcpReq.signal,
    controller: requestController(req),
    ...(minLevel !== undefined && {
      logLevel: minLevel,
      sendLog: (message) => {
        if (LOGGING_LEVELS.indexOf(message.level) < LOGGING_LEVELS.indexOf(minLevel)) return;
        void req.mcpReq
          .notify({ method: "notifications/message", params: { ...message } })
          .catch((err: unknown) => log.debug(`log message not forwarded: ${errorMessage(err)}`));
      },
    }),
    ...(progressToken !== undefined && {
      sendProgress: (p) =>
        void req.mcpReq
          .notify({ method: "notifications/progress", params: { progressToken, ...p } })
          .catch((err: unknown) => log.debug(`progress not forwarded: ${errorMessage(err)}`)),
    }),
  };
}
