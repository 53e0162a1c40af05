/**
 * The SDK's dispatch tells a message's kind by trying its zod schemas in turn: a request first
 * fails the result and the error schema, and each failure builds a ZodError (a stack, a message
 * in JSON): ~10 µs of every call's ~0.3 ms on the main thread. Here a request the schemas
 * certainly accept (upstream/lines.ts `plainKind`) goes to the handler the SDK's dispatch would
 * pick, with the same arguments; anything else still goes through the SDK's own dispatch. Where
 * the SDK no longer has that handler, all of it does; an SDK whose dispatch does more for a
 * request fails test/unit/downstream-dispatch.test.ts, which holds that closure as written.
 *
 * A 2025-era client's plain tools/call (stdio, the daemon's socket, a 2025-era HTTP session)
 * goes one step further: past the SDK's `_onrequest`, whose per-request setup (the era codec's checks, the
 * envelope lifted, closures, a context built twice, four promise hops) costs ~20 µs of a call.
 * The SDK's own tools/call handler still runs, with the context `_onrequest` would build for it
 * (its zod checks skipped for a request and result they certainly pass: `checkedCall`), and its
 * answer is sent as `_onrequest` sends it. Only requests `_onrequest` would pass to that handler untouched come
 * this way: no wire-only material to lift (no envelope key in `_meta`, no retry params), nothing
 * but `name`, `arguments` and `_meta`. Cancellation and the connection closing abort them as the
 * SDK aborts its own. test/unit/plain-tool-calls.test.ts holds `_onrequest` as written and
 * compares the answers on the wire.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  isInputRequiredResult,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  SdkError,
  SdkErrorCode,
  type CallToolRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Result,
  type Server,
  type ServerContext,
  type Transport,
} from "@modelcontextprotocol/server";
import { isRecord } from "../json.js";
import { plainKind } from "../upstream/lines.js";

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** mcpx's own tools/call handler, as it registers it with the SDK. */
export type ToolCallHandler = (request: CallToolRequest, ctx: ServerContext) => Promise<unknown>;

interface WireCodec {
  encodeResult(method: string, result: Result, serverInfo: unknown): unknown;
  encodeErrorCode(code: number): number;
}

/** What this calls of the SDK's Protocol and Server, which TypeScript keeps private. */
interface SdkInternals {
  _onrequest?: (request: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  _requestHandlers?: Map<string, Handler>;
  _wireCodec?: () => WireCodec;
  _outboundServerInfo?: () => unknown;
  _onerror?: (error: Error) => void;
  buildContext?: (ctx: BaseContext, extra?: MessageExtraInfo) => ServerContext;
  _wrapHandler?: (method: string, handler: Handler) => Handler;
  _invokeInputRequiredCapableHandler?: (
    method: string,
    handler: Handler,
    request: JSONRPCRequest,
    ctx: ServerContext,
  ) => Promise<Result>;
}

/** `_meta` keys `_onrequest` lifts out of a request (the 2026-07-28 envelope). */
const ENVELOPE_KEYS = [
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
];
const CALL_PARAMS = ["name", "arguments", "_meta"];

/**
 * Wrap the dispatch `server.connect` set on `transport`; `previous` is the transport's handler
 * from before connect, which the SDK's dispatch calls first for every message. `legacy`: a
 * 2025-era server, whose tools/call may skip `_onrequest` (see above).
 */
export function dispatchPlainRequests(
  server: Server,
  transport: Transport,
  previous: Transport["onmessage"],
  legacy = false,
  toolCall?: ToolCallHandler,
): void {
  const dispatch = transport.onmessage;
  const sdk = server as unknown as SdkInternals;
  const onrequest = sdk._onrequest;
  if (!dispatch || typeof onrequest !== "function") return;
  const calls = legacy ? ToolCalls.over(server, transport, toolCall) : undefined;
  transport.onmessage = (message, extra) => {
    const kind = plainKind(message);
    if (kind !== "request") {
      if (kind === "notification") calls?.notified(message);
      dispatch(message, extra);
      return;
    }
    previous?.(message, extra);
    // An entry's classified message: the SDK checks its era.
    if (
      calls &&
      extra?.classification === undefined &&
      calls.take(message as JSONRPCRequest, extra)
    )
      return;
    onrequest.call(server, message, extra);
  };
}

/** A 2025-era server's tools/call requests that skip `_onrequest`, while they run. */
class ToolCalls {
  private readonly running = new Map<string | number, Running>();

  static over(
    server: Server,
    transport: Transport,
    toolCall?: ToolCallHandler,
  ): ToolCalls | undefined {
    const sdk = server as unknown as SdkInternals;
    const handler = sdk._requestHandlers?.get("tools/call");
    if (
      !handler ||
      typeof sdk._wireCodec !== "function" ||
      typeof sdk._outboundServerInfo !== "function" ||
      typeof sdk._onerror !== "function" ||
      typeof sdk.buildContext !== "function" ||
      typeof sdk._wrapHandler !== "function" ||
      typeof sdk._invokeInputRequiredCapableHandler !== "function"
    )
      return undefined;
    const checked = toolCall && checkedCall(sdk as Required<SdkInternals>, handler, toolCall);
    return new ToolCalls(server, sdk as Required<SdkInternals>, transport, checked ?? handler);
  }

  private constructor(
    private readonly server: Server,
    private readonly sdk: Required<SdkInternals>,
    private readonly transport: Transport,
    private readonly handler: Handler,
  ) {
    // As the SDK's `_onclose`: every request still running is aborted.
    const onclose = transport.onclose;
    transport.onclose = () => {
      try {
        onclose?.();
      } finally {
        const running = [...this.running.values()];
        this.running.clear();
        const error = new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed");
        for (const entry of running) entry.cancel(error);
      }
    };
  }

  /** Runs `request` as `_onrequest` would; false when it is not one of these. */
  take(request: JSONRPCRequest, extra: MessageExtraInfo | undefined): boolean {
    if (request.method !== "tools/call" || !untouched(request.params)) return false;
    // Until initialize, the SDK's dispatch decides (its era is not settled).
    if (this.server.getClientVersion() === undefined) return false;
    const { id } = request;
    const server = this.server;
    const controller = new AbortController();
    const entry = new Running(controller);
    this.running.set(id, entry);
    const ctx = lazyContext((base) => this.sdk.buildContext(base, extra), extra, {
      sessionId: this.transport.sessionId,
      mcpReq: {
        // The work may run on this controller (requestController): only the client (before the
        // answer) and the drain at shutdown abort it.
        [REQUEST_CONTROLLER]: controller,
        id,
        method: request.method,
        _meta: request.params?._meta,
        requestState: noRequestState,
        signal: controller.signal,
        // What `_onrequest`'s `send` and `notify` do: related to this request.
        send: (r: never, schemaOrOptions?: unknown, options?: Record<string, unknown>) =>
          options !== undefined || isStandardSchema(schemaOrOptions)
            ? server.request(r, schemaOrOptions as never, { ...options, relatedRequestId: id })
            : server.request(r, {
                ...(schemaOrOptions as Record<string, unknown> | undefined),
                relatedRequestId: id,
              }),
        notify: (n: never, options?: Record<string, unknown>) =>
          server.notification(n, { ...options, relatedRequestId: id }),
      },
      http: extra?.authInfo ? { authInfo: extra.authInfo } : undefined,
    });
    const codec = this.sdk._wireCodec();
    // Not sent once the client cancelled or left, as the SDK's `_onrequest` does; the work
    // aborting its signal for another reason (the drain at shutdown) still answers. Answered,
    // the request is no longer running: a close while the answer waits for the pipe to drain
    // must not abort its controller, which a call handed off as a task still runs on.
    const send = (message: JSONRPCMessage) => {
      if (this.running.get(id) === entry) this.running.delete(id);
      return entry.cancelled ? undefined : this.transport.send(message);
    };
    Promise.resolve()
      .then(() => this.handler(request, ctx))
      .then(
        (result) =>
          send({
            result: codec.encodeResult(
              request.method,
              result,
              this.sdk._outboundServerInfo(),
            ) as Result,
            jsonrpc: "2.0",
            id,
          }),
        (error: { code?: unknown; message?: string; data?: unknown }) => {
          const code = Number.isSafeInteger(error.code)
            ? (error.code as number)
            : ProtocolErrorCode.InternalError;
          return send({
            jsonrpc: "2.0",
            id,
            error: {
              code: codec.encodeErrorCode(code),
              message: error.message ?? "Internal error",
              ...(error.data !== undefined && { data: error.data }),
            },
          });
        },
      )
      .catch((error: unknown) =>
        this.sdk._onerror(new Error(`Failed to send response: ${String(error)}`)),
      )
      .finally(() => {
        if (this.running.get(id) === entry) this.running.delete(id);
      });
    return true;
  }

  /** notifications/cancelled for one of these aborts it, as the SDK's `_oncancel` does. */
  notified(message: JSONRPCMessage): void {
    if (this.running.size === 0 || !("method" in message)) return;
    if (message.method !== "notifications/cancelled" || !isRecord(message.params)) return;
    const { requestId, reason } = message.params;
    // What the SDK's schema takes (else it drops the notification, and so does this).
    if (reason !== undefined && typeof reason !== "string") return;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    this.running.get(requestId)?.cancel(reason);
  }
}

/** One of these requests while it runs: its controller, and whether its client cancelled it. */
class Running {
  cancelled = false;

  constructor(private readonly controller: AbortController) {}

  cancel(reason: unknown): void {
    this.cancelled = true;
    this.controller.abort(reason);
  }
}

const REQUEST_CONTROLLER = Symbol("mcpx.requestController");

/**
 * The controller of a tools/call request `ToolCalls` runs: aborted when its client cancels it
 * or leaves before the answer, never after, so its call may run on it rather than on a
 * controller of its own (on Node 20 an AbortSignal costs several µs to make). Undefined for
 * requests the SDK runs, whose controllers are the SDK's.
 */
export function requestController(ctx: ServerContext): AbortController | undefined {
  const controller = (ctx.mcpReq as Record<PropertyKey, unknown>)[REQUEST_CONTROLLER];
  return controller instanceof AbortController ? controller : undefined;
}

const noRequestState = (): undefined => undefined;

/**
 * The SDK's tools/call handler (`handler`: its `_wrapHandler` around `setRequestHandler`'s
 * closure around mcpx's `toolCall`) checks the request against the era's zod schema twice and
 * the result once, each a parse that copies what it checks: ~10 % of a relayed call's CPU, more
 * on a cold path (a model's spaced calls). A request and a result those schemas certainly
 * accept, and would return as they are (`plainCallRequest`, `plainCallResult`), skip the parses;
 * everything else is checked as the SDK checks it: an unusual request runs `handler` itself, an
 * unusual result goes through `_wrapHandler`'s checks (a handler that returns it). The rest of
 * what `handler` does (the input-required seam) runs as it is.
 * test/unit/plain-tool-calls.test.ts holds those closures as written and compares the answers.
 */
export function checkedCall(
  sdk: Required<SdkInternals>,
  handler: Handler,
  toolCall: ToolCallHandler,
): Handler {
  const own: Handler = (request, ctx) =>
    toolCall(
      { method: "tools/call", params: request.params } as CallToolRequest,
      ctx,
    ) as Promise<Result>;
  return async (request, ctx) => {
    if (!plainCallRequest(request.params)) return handler(request, ctx);
    const result = await sdk._invokeInputRequiredCapableHandler("tools/call", own, request, ctx);
    if (isInputRequiredResult(result)) return result;
    return (
      plainCallResult(result) ??
      (await sdk._wrapHandler("tools/call", () => Promise.resolve(result))(request, ctx))
    );
  };
}

/** Keys of `_meta` the 2025 schema checks (it takes every other as it is). */
const CHECKED_META = ["progressToken", RELATED_TASK_META_KEY];

/**
 * tools/call params (`untouched` ones: nothing but name, arguments and _meta) the 2025 schema
 * accepts: a string name, an object of arguments, a `_meta` without keys it would check.
 */
function plainCallRequest(params: unknown): boolean {
  if (!isCopied(params) || typeof params.name !== "string") return false;
  if (params.arguments !== undefined && !isCopied(params.arguments)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isCopied(meta)) return false;
  const token = meta.progressToken;
  if (token !== undefined && typeof token !== "string" && !Number.isSafeInteger(token))
    return false;
  return !(RELATED_TASK_META_KEY in meta);
}

/**
 * A tools/call result the 2025 schema accepts and would return as it is (the same JSON, key
 * order included): text blocks of `type` and `text` only, an object of structured content, a
 * boolean isError, a `_meta` without keys it checks, nothing else. Returned with its keys in the
 * schema's order; undefined for any other result.
 */
function plainCallResult(result: unknown): Result | undefined {
  if (!isCopied(result)) return undefined;
  for (const key in result) if (!RESULT_KEYS.includes(key)) return undefined;
  const { _meta, content, structuredContent, isError } = result;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    if (!isCopied(block) || block.type !== "text" || typeof block.text !== "string")
      return undefined;
    const keys = Object.keys(block);
    if (keys.length !== 2 || keys[0] !== "type") return undefined;
  }
  if (structuredContent !== undefined && !isCopied(structuredContent)) return undefined;
  if (isError !== undefined && typeof isError !== "boolean") return undefined;
  if (_meta !== undefined) {
    if (!isCopied(_meta)) return undefined;
    for (const key of CHECKED_META) if (key in _meta) return undefined;
  }
  return {
    ...(_meta !== undefined && { _meta }),
    content,
    ...(structuredContent !== undefined && { structuredContent }),
    ...(isError !== undefined && { isError }),
  };
}

/** The keys of a 2025 CallToolResult, in its schema's order. */
const RESULT_KEYS = ["_meta", "content", "structuredContent", "isError"];

/**
 * A plain object the schema copies key by key as it is: made by JSON.parse or a literal (not a
 * Map, a Date…), without an own `__proto__` key (as lines.ts).
 */
function isCopied(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || Object.hasOwn(value, "__proto__")) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** What `_onrequest` hands `buildContext`: the request's own part of its context. */
export interface BaseContext {
  sessionId: string | undefined;
  mcpReq: Record<string, unknown>;
  http: { authInfo: unknown } | undefined;
}

/** The functions the SDK's `buildContext` adds to a request's `mcpReq`. */
export const BUILT_FUNCTIONS = ["log", "elicitInput", "requestSampling"] as const;

/**
 * The context `build` (the SDK's `buildContext`) makes of `base` and the transport's `extra`:
 * its `http` as `buildContext` makes it, and the functions it adds to `mcpReq` calling through
 * to a context it builds only if a handler calls one: building it costs more than the rest of
 * the request's setup.
 */
export function lazyContext(
  build: (base: BaseContext) => ServerContext,
  extra: MessageExtraInfo | undefined,
  base: BaseContext,
): ServerContext {
  let built: ServerContext | undefined;
  type Fn = (...args: unknown[]) => unknown;
  const full = () => (built ??= build(base)).mcpReq as unknown as Record<string, Fn>;
  // One literal, the functions first: keys added after a spread cost V8 ~1–2 µs per object
  // (a slow path), keys before it nothing. base.mcpReq has none of these.
  const mcpReq: Record<string, unknown> = {
    log: (...args: unknown[]) => full().log!(...args),
    elicitInput: (...args: unknown[]) => full().elicitInput!(...args),
    requestSampling: (...args: unknown[]) => full().requestSampling!(...args),
    ...base.mcpReq,
  } satisfies Record<(typeof BUILT_FUNCTIONS)[number], unknown>;
  const http =
    base.http || extra?.request || extra?.closeSSEStream || extra?.closeStandaloneSSEStream
      ? {
          ...base.http,
          req: extra?.request,
          closeSSE: extra?.closeSSEStream,
          closeStandaloneSSE: extra?.closeStandaloneSSEStream,
        }
      : undefined;
  return { sessionId: base.sessionId, mcpReq, http } as unknown as ServerContext;
}

/** Params `_onrequest` passes on as they are: nothing to lift, nothing but a call's own keys. */
function untouched(params: unknown): boolean {
  if (!isRecord(params)) return false;
  for (const key in params) if (!CALL_PARAMS.includes(key)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isRecord(meta)) return false;
  for (const key of ENVELOPE_KEYS) if (key in meta) return false;
  return true;
}

function isStandardSchema(value: unknown): boolean {
  return isRecord(value) && "~standard" in value;
}
