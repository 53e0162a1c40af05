/**
 * One SDK client session with an upstream, in either protocol era, behind the UpstreamSession
 * interface of types.ts; opened by open.ts.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type Client,
  type PriorDiscovery,
  type Transport,
} from "@modelcontextprotocol/client";
import { ResultSchema } from "@modelcontextprotocol/core";
import * as z from "zod";
import type {
  CompleteParams,
  CompleteResult,
  PromptDef,
  PromptResult,
  ReadResourceResult,
  ResourceDef,
  ResourceTemplateDef,
  ToolDef,
  ToolResult,
} from "../types.js";
import type {
  ListKind,
  ListSubscription,
  LogMessage,
  RequestOptions,
  ServerIdentity,
  UpstreamSession,
} from "./types.js";
import type { RelayHub, SessionAsker } from "./asker.js";
import { capabilitiesOf, NO_CLIENT, type ClientChannel } from "./channel.js";
import { answerInputs, callRelayed, type CallWire } from "./relayed-call.js";
import {
  callAsTask,
  caughtTask,
  declaresTaskExtension,
  followTask,
  lingered,
  Leftovers,
  runsToolTasks,
  withTaskExtension,
  type TaskWire,
} from "./tasks.js";
import { paginate } from "./paginate.js";
import { plainCalls, type PlainCalls } from "./plain-call.js";
import { ProcessTransport, type TraceScoped } from "./transport.js";
import { sdkOptions, withoutEnvelope, withTrace } from "./wire.js";
import { isRecord } from "../json.js";
import { UI_EXTENSION, UI_MIME_TYPE } from "../types.js";

/**
 * What mcpx declares to upstreams: everything a client may be asked mid-call. Each request is
 * relayed to the client whose call it belongs to (asker.ts), or refused at once when that client
 * did not declare it. Modern upstreams are also told, per request, what the calling client declared.
 */
export const CLIENT_CAPABILITIES = {
  roots: { listChanged: true },
  elicitation: { form: {}, url: {} },
  sampling: {},
  // MCP Apps: servers list their UI tools to clients that render them; mcpx relays them.
  extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } },
};

/** The SDK's timeout is replaced by the call's own deadline when it may ask its client. */
const NO_SDK_TIMEOUT = 2_147_483_647;

/** An initialized SDK client: the legacy era after initialize, the modern one after discover. */
export class SdkSession implements UpstreamSession {
  readonly identity: ServerIdentity;
  readonly era: "legacy" | "modern";
  readonly protocolVersion: string | undefined;
  readonly stateless: boolean;
  /** What later connects to the same upstream pass as `prior`. */
  readonly verdict: PriorDiscovery;
  private isClosed = false;
  /** Remote upstreams: requests run in it carry their traceparent as an HTTP header. */
  private readonly traceScope: TraceScoped["traceScope"] | undefined;
  private readonly closeHandlers = new Set<() => void>();
  private readonly logHandlers = new Set<(message: LogMessage) => void>();
  private readonly updateHandlers = new Set<(uri: string) => void>();
  /** Listeners of the upstream's notifications/tasks/status, by its task id. */
  private readonly taskListeners = new Map<string, (task: Record<string, unknown>) => void>();
  /** Requests that outlived their caller (TaskWire.outlive): close() waits a while for them. */
  private readonly leftovers = new Leftovers();
  /** A 2025-era upstream over stdio: tools/call past the SDK's request funnel (plain-call.ts). */
  private readonly plain: PlainCalls | undefined;

  constructor(
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly asker: SessionAsker,
    hub?: RelayHub,
    /** What the client declared at connect (per request, modern calls may declare more). */
    private readonly declared: Record<string, unknown> = CLIENT_CAPABILITIES,
  ) {
    const discover = client.getDiscoverResult();
    this.era = client.getProtocolEra() === "modern" ? "modern" : "legacy";
    this.protocolVersion = client.getNegotiatedProtocolVersion();
    this.verdict =
      this.era === "modern" && discover ? { kind: "modern", discover } : { kind: "legacy" };
    // A modern server over HTTP keeps nothing per client: each request stands alone.
    this.stateless = this.era === "modern" && transport instanceof StreamableHTTPClientTransport;
    this.traceScope = "traceScope" in transport ? (transport as TraceScoped).traceScope : undefined;
    const info = client.getServerVersion();
    const instructions = client.getInstructions();
    this.identity = {
      capabilities: { ...(client.getServerCapabilities() ?? {}) },
      era: this.era,
      ...(this.protocolVersion !== undefined && { protocolVersion: this.protocolVersion }),
      ...(info?.name !== undefined && { name: info.name }),
      ...(info?.version !== undefined && { version: info.version }),
      ...(info?.title !== undefined && { title: info.title }),
      ...(instructions !== undefined && { instructions }),
    };
    // A shared session's log lines go to every call in flight on it: they cannot be told apart.
    client.setNotificationHandler("notifications/message", (n) => {
      asker.noteActivity();
      for (const h of this.logHandlers) h(n.params);
    });
    // Legacy: on the session that subscribed; modern: on the listen stream, same handler.
    client.setNotificationHandler("notifications/resources/updated", (n) => {
      for (const h of this.updateHandlers) h(n.params.uri);
    });
    // 2025-11-25 vocabulary the v2 client does not type: a schema of our own.
    client.setNotificationHandler(
      "notifications/tasks/status",
      { params: z.looseObject({ taskId: z.string() }) },
      (params) => this.taskListeners.get(params.taskId)?.(params),
    );
    client.onclose = () => {
      if (this.isClosed) return;
      this.isClosed = true;
      asker.close();
      for (const h of this.closeHandlers) h();
    };
    if (this.era === "legacy" && transport instanceof ProcessTransport)
      this.plain = plainCalls(client, transport);
    // Only a legacy upstream hears notifications from its client.
    if (hub && this.era === "legacy") {
      this.onClosed(hub.add(asker, () => client.sendRootsListChanged()));
    }
  }

  get pid(): number | undefined {
    return this.transport instanceof ProcessTransport ? this.transport.pid : undefined;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  async listTools(o: RequestOptions): Promise<ToolDef[]> {
    if (!this.identity.capabilities.tools) return [];
    return paginate(this.client, "tools/list", "tools", o, (t) => isRecord(t.inputSchema));
  }

  async listResources(o: RequestOptions): Promise<ResourceDef[]> {
    if (!this.identity.capabilities.resources) return [];
    return paginate(
      this.client,
      "resources/list",
      "resources",
      o,
      (r) => typeof r.uri === "string",
    );
  }

  async listResourceTemplates(o: RequestOptions): Promise<ResourceTemplateDef[]> {
    if (!this.identity.capabilities.resources) return [];
    return paginate(
      this.client,
      "resources/templates/list",
      "resourceTemplates",
      o,
      (t) => typeof t.uriTemplate === "string",
    );
  }

  async listPrompts(o: RequestOptions): Promise<PromptDef[]> {
    if (!this.identity.capabilities.prompts) return [];
    return paginate(this.client, "prompts/list", "prompts", o, () => true);
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    o: RequestOptions,
  ): Promise<ToolResult> {
    const result = await this.traced(o, () => this.requestCall(name, args, o));
    const content = (result as { content?: unknown }).content;
    return {
      ...withoutEnvelope(result),
      content: Array.isArray(content) ? (content as ToolResult["content"]) : [],
    };
  }

  private async requestCall(
    name: string,
    args: Record<string, unknown>,
    o: RequestOptions,
  ): Promise<Record<string, unknown>> {
    const caps = this.identity.capabilities;
    if (o.task?.toolRunsTasks && this.era === "legacy" && runsToolTasks(caps)) {
      // What the upstream asks meanwhile is this call's client's (or refused).
      return this.asker.during(o.client ?? NO_CLIENT, { timeoutMs: o.timeoutMs }, () =>
        callAsTask(this.taskWire(o.client), this.callParams(name, args, o), o),
      );
    }
    // 2026-07-28: the upstream decides per request whether to answer with a task, if the
    // request's capabilities declare the extension (only where mcpx can follow it: o.task).
    const tasks = o.task !== undefined && this.era === "modern" && declaresTaskExtension(caps);
    const send = (ro: RequestOptions) =>
      o.client
        ? callRelayed(
            this.asker,
            this.wire(),
            this.callParams(name, args, o, o.client, tasks),
            o,
            o.client,
            ro.signal,
          )
        : this.client.request(
            { method: "tools/call", params: this.callParams(name, args, o, undefined, tasks) },
            ResultSchema,
            sdkOptions(ro),
          );
    // A request that may create a task outlives its caller a little (tasks.ts, lingering).
    const result: Record<string, unknown> = tasks ? await lingered(o, send) : await send(o);
    const task = caughtTask(result);
    if (!task) {
      // A plain answer that came after its caller left is dropped, as the SDK drops it.
      o.signal?.throwIfAborted();
      return result;
    }
    if (!tasks) {
      throw new Error(
        "the upstream answered with a task though mcpx did not declare the tasks extension",
      );
    }
    // What the upstream asks while its task waits for input is this call's client's (or refused).
    return this.asker.during(o.client ?? NO_CLIENT, { timeoutMs: o.timeoutMs }, () =>
      followTask(this.taskWire(o.client), task, o),
    );
  }

  /**
   * Run `send` so that the request it makes carries `o.traceparent` as the HTTP `traceparent`
   * header too (remote upstreams; stdio ones have `_meta.traceparent` only).
   */
  private traced<T>(o: RequestOptions, send: () => Promise<T>): Promise<T> {
    const scope = this.traceScope;
    return o.traceparent !== undefined && scope ? scope.run(o.traceparent, send) : send();
  }

  /** What following a task needs of this session's SDK client, for `channel`'s call. */
  private taskWire(channel: ClientChannel | undefined): TaskWire {
    return {
      era: this.era,
      // Each follow-up carries its own span's traceparent as the HTTP header too.
      request: (method, params, ro) =>
        this.traced(ro, () =>
          this.client.request({ method, params }, ResultSchema, sdkOptions(ro)),
        ),
      answer: (requests) => answerInputs(this.asker, channel ?? NO_CLIENT, requests),
      onStatus: (taskId, fn) => {
        this.taskListeners.set(taskId, fn);
        return () => this.taskListeners.delete(taskId);
      },
      outlive: (request) => this.leftovers.add(request),
    };
  }

  /** What callRelayed needs of this session's SDK client. */
  private wire(): CallWire {
    return {
      era: this.era,
      request: (params, { deadline, onProgress, inputRequired }) =>
        this.plain && !inputRequired
          ? this.plain.call(params, { signal: deadline, onProgress })
          : this.client.request({ method: "tools/call", params }, ResultSchema, {
              // The call's own deadline bounds it (relayed-call.ts), not the SDK's timer.
              timeout: NO_SDK_TIMEOUT,
              signal: deadline.signal,
              onprogress: onProgress,
              ...(inputRequired && { allowInputRequired: true }),
            }),
      rootsChanged: () => this.client.sendRootsListChanged(),
      ping: async (timeoutMs) => {
        await this.client.ping({ timeout: timeoutMs });
      },
      timeoutError: (timeout) =>
        new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout }),
    };
  }

  /**
   * tools/call params. A modern upstream sends log messages only for requests that name a level,
   * and learns per request what the calling client can answer, and whether mcpx follows a task
   * (`tasks`: the 2026-07-28 extension declared).
   */
  private callParams(
    name: string,
    args: Record<string, unknown>,
    o: RequestOptions,
    channel?: ClientChannel,
    tasks = false,
  ): Record<string, unknown> {
    const declared = channel ? capabilitiesOf(channel.abilities) : this.declared;
    const meta = {
      ...(this.era === "modern" && {
        ...(o.logLevel && { [LOG_LEVEL_META_KEY]: o.logLevel }),
        ...((channel || tasks) && {
          [CLIENT_CAPABILITIES_META_KEY]: tasks ? withTaskExtension(declared) : declared,
        }),
      }),
      // W3C Trace Context in _meta, the key MCP reserves for it: every era, every transport.
      ...(o.traceparent !== undefined && { traceparent: o.traceparent }),
    };
    // A raw request with the loose result schema, not client.callTool: a proxy passes results
    // through; it neither strips keys it does not know nor judges them against outputSchema.
    return { name, arguments: args, ...(Object.keys(meta).length > 0 && { _meta: meta }) };
  }

  async readResource(uri: string, o: RequestOptions): Promise<ReadResourceResult> {
    // What the upstream asks meanwhile is this read's (its client's, or refused): never another call's.
    const result = await this.asker.during(o.client ?? NO_CLIENT, { timeoutMs: o.timeoutMs }, () =>
      this.traced(o, () =>
        this.client.request(
          { method: "resources/read", params: withTrace({ uri }, o) },
          ResultSchema,
          sdkOptions(o),
        ),
      ),
    );
    const contents = (result as { contents?: unknown }).contents;
    if (!Array.isArray(contents))
      throw new Error("upstream sent a resources/read without contents");
    return { ...withoutEnvelope(result), contents: contents as ReadResourceResult["contents"] };
  }

  async getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    o: RequestOptions,
  ): Promise<PromptResult> {
    const params = { name, ...(args !== undefined && { arguments: args }) };
    const result = await this.asker.during(o.client ?? NO_CLIENT, { timeoutMs: o.timeoutMs }, () =>
      this.traced(o, () =>
        this.client.request(
          { method: "prompts/get", params: withTrace(params, o) },
          ResultSchema,
          sdkOptions(o),
        ),
      ),
    );
    const messages = (result as { messages?: unknown }).messages;
    if (!Array.isArray(messages)) throw new Error("upstream sent a prompts/get without messages");
    return { ...withoutEnvelope(result), messages: messages as PromptResult["messages"] };
  }

  async complete(params: CompleteParams, o: RequestOptions): Promise<CompleteResult> {
    const result = await this.asker.during(o.client ?? NO_CLIENT, { timeoutMs: o.timeoutMs }, () =>
      this.traced(o, () =>
        this.client.request(
          { method: "completion/complete", params: withTrace(params, o) },
          ResultSchema,
          sdkOptions(o),
        ),
      ),
    );
    const completion = (result as { completion?: unknown }).completion;
    if (!isRecord(completion) || !Array.isArray(completion.values))
      throw new Error("upstream sent a completion/complete without completion.values");
    return { ...withoutEnvelope(result), completion: completion as CompleteResult["completion"] };
  }

  async subscribeResource(uri: string, o: RequestOptions): Promise<void> {
    await this.client.request(
      { method: "resources/subscribe", params: { uri } },
      ResultSchema,
      sdkOptions(o),
    );
  }

  async unsubscribeResource(uri: string, o: RequestOptions): Promise<void> {
    await this.client.request(
      { method: "resources/unsubscribe", params: { uri } },
      ResultSchema,
      sdkOptions(o),
    );
  }

  onResourceUpdated(handler: (uri: string) => void): void {
    this.updateHandlers.add(handler);
  }

  async ping(o: RequestOptions): Promise<void> {
    // The modern era has no ping: server/discover is the cheapest round trip it has.
    if (this.era === "modern") await this.client.discover(sdkOptions(o));
    else await this.client.ping(sdkOptions(o));
  }

  onListChanged(handler: (kind: ListKind) => void): void {
    // Legacy: unsolicited notifications; modern: the same handlers, fed by listen().
    this.client.setNotificationHandler("notifications/tools/list_changed", () => handler("tools"));
    this.client.setNotificationHandler("notifications/resources/list_changed", () =>
      handler("resources"),
    );
    this.client.setNotificationHandler("notifications/prompts/list_changed", () =>
      handler("prompts"),
    );
  }

  async listen(
    o: RequestOptions,
    resources: readonly string[] = [],
  ): Promise<ListSubscription | undefined> {
    if (this.era !== "modern") return undefined;
    const caps = this.identity.capabilities as Record<
      string,
      { listChanged?: boolean; subscribe?: boolean } | undefined
    >;
    const filter = {
      ...(caps.tools?.listChanged && { toolsListChanged: true }),
      ...(caps.resources?.listChanged && { resourcesListChanged: true }),
      ...(caps.prompts?.listChanged && { promptsListChanged: true }),
      ...(caps.resources?.subscribe &&
        resources.length > 0 && { resourceSubscriptions: [...resources] }),
    };
    if (Object.keys(filter).length === 0) return undefined;
    const sub = await this.client.listen(filter, sdkOptions(o));
    return { ended: sub.closed, close: () => sub.close() };
  }

  onLog(handler: (message: LogMessage) => void): () => void {
    this.logHandlers.add(handler);
    return () => this.logHandlers.delete(handler);
  }

  onClosed(handler: () => void): () => void {
    if (this.isClosed) handler();
    else this.closeHandlers.add(handler);
    return () => this.closeHandlers.delete(handler);
  }

  async close(): Promise<void> {
    // A tasks/cancel on its way is let finish (a while), not cut off with the task left running.
    await this.leftovers.settle();
    await this.client.close();
    this.asker.close();
  }
}
