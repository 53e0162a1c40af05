import { randomUUID } from "node:crypto";
import { DEFAULTS, type ResultCompression } from "../config/load.js";
import type { CompressionTally } from "../compression/result.js";
import { defaultsOptional } from "../compression/schema-defaults.js";
import { signature } from "../compression/signature.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { RequestOptions, UpstreamSession } from "../upstream/types.js";
import type { Lease } from "../registry/pool.js";
import type { Registry, ServerState } from "../registry/registry.js";
import { appContents, splitAppUri } from "../registry/apps.js";
import { parseToolRef } from "../registry/toolref.js";
import type { Sandbox } from "../sandbox/index.js";
import { textResult, type ReadResourceResult, type ToolDef, type ToolResult } from "../types.js";
import { confirmFor } from "./confirm.js";
import { parseArguments } from "./normalize.js";
import { resolveTool, resourceServer } from "./resolve.js";
import { CallEvents } from "./events.js";
import { Admission } from "./admission.js";
import type { CallContext, CallOptions, CallOutcome, CallTracer } from "./context.js";
import { upstreamTask } from "./upstream-task.js";
import { downstreamSpan, spanAttributes, upstreamRequestSpan, upstreamSpan } from "./trace.js";
import { prependText, restartedNotice, SHUTTING_DOWN, upstreamFailure } from "./failures.js";
import { relayRequest, type RelayEnd } from "./relay.js";
import { ResultStore, type ResultStoreLimits } from "./result-store.js";
import { ResultShaper } from "./shape.js";
import { CallTasks, type TaskLimits } from "./tasks.js";
import { McpTasks } from "./tasks-mcp.js";
import type { Clock } from "../clock.js";
import type { Selector } from "../compression/selector.js";
import {
  codeModeOff,
  runScript,
  scriptLog,
  type ScriptHost,
  type ScriptOptions,
} from "./script.js";
import { ArgumentValidator } from "./validate.js";
import type { SharedState } from "../shared/types.js";

export interface ExecutorOptions {
  logger: Logger;
  compression: ResultCompression;
  /** Limits of the store cut results are paged from (defaults: DEFAULT_RESULT_STORE). */
  resultStore?: Partial<ResultStoreLimits>;
  /** The clock result ages are measured on (tests inject one). */
  now?: () => number;
  /** Where cut results are kept: this process (default) or Redis (src/shared/, issue 31). */
  shared?: SharedState;
  /** Code mode's sandbox; without one, `script()` answers that code mode is off. */
  sandbox?: Sandbox;
  /** Evaluates `select` off the main thread (default: one of the executor's own). */
  selector?: Selector;
  /** The clock long-running calls are timed on (tasks.ts; tests inject one). */
  clock?: Clock;
  /** Limits of the handles of long-running calls (defaults: DEFAULT_TASK_LIMITS). */
  tasks?: Partial<TaskLimits>;
}

/** How run() ended, and the tool it resolved to (the log names it, whatever form was written). */
interface CallEnd {
  result: ToolResult;
  outcome: CallOutcome;
  error?: string;
  target?: { server: string; tool: string };
  compression?: CompressionTally;
}

/**
 * Runs one `call`: resolve the tool ref → validate arguments → take an isolated session →
 * forward → shape the result. Every failure comes back as an `isError` result that names the
 * server and the next step; nothing here throws to the caller.
 */
export class Executor {
  /** Built at the first call that needs it: ajv stays unloaded until then (start-up, idle memory). */
  private validator: ArgumentValidator | undefined;
  private readonly log: Logger;
  private readonly shaper: ResultShaper;
  /** Admission of every request: accepting, tracking for drain, waiting for start, leasing. */
  private readonly admission: Admission;
  /** Started and ended calls (caller, tool, duration, outcome; never arguments), for dashboards. */
  readonly events = new CallEvents();
  /** Set when traces are on (src/telemetry/): spans per call and per upstream request. */
  tracer: CallTracer | undefined;
  /** Calls that outlived `taskAfter`, polled through their handles (tasks.ts). */
  readonly tasks: CallTasks;
  /** MCP Tasks of task-capable clients (tasks/get, tasks/result…: tasks-mcp.ts). */
  readonly mcpTasks: McpTasks;

  constructor(
    registry: Registry,
    private readonly options: ExecutorOptions,
  ) {
    this.log = options.logger;
    this.admission = new Admission(registry, options.logger);
    this.tasks = new CallTasks(options.clock, options.tasks);
    this.mcpTasks = new McpTasks(options.clock);
    this.shaper = new ResultShaper(
      new ResultStore(options.resultStore, options.now, options.shared),
      options.compression,
      options.selector,
    );
  }

  /** One call, logged at info with its caller, tool ref, duration and outcome (never arguments). */
  async call(
    ref: string,
    rawArgs: unknown,
    ctx: CallContext = {},
    options: CallOptions = {},
  ): Promise<ToolResult> {
    if (!this.admission.accepting && ctx.parentCallId === undefined)
      return textResult(SHUTTING_DOWN, true);
    const started = performance.now();
    const event = this.events.start(ref, ctx.caller ?? "default", ctx.parentId);
    const notes = [...(options.notes ?? [])];
    const span = downstreamSpan(this.tracer, `call ${ref}`, ctx);
    const { result, outcome, error, target, compression } = await this.admission.track(
      ctx,
      (signal) =>
        this.run(ref, rawArgs, { ...ctx, signal, ...(span && { span }) }, { ...options, notes }),
    );
    const durationMs = performance.now() - started;
    span?.end(spanAttributes(ctx, outcome, target ?? parseToolRef(ref), compression));
    this.events.end(event, {
      durationMs,
      outcome,
      ...(target && { target }),
      ...(compression && { compression }),
    });
    // Built only where it is written (not at `--log-level warn`).
    if (this.log.enabled("info")) {
      const parsed = target ?? parseToolRef(ref);
      this.log.info(
        `call ${ref} by ${ctx.caller ?? "default"}: ${outcome} in ${durationMs.toFixed(1)} ms`,
        {
          caller: ctx.caller ?? "default",
          server: parsed?.server ?? null,
          tool: parsed?.tool ?? ref,
          outcome,
          ...(ctx.parentCallId !== undefined && { parent: ctx.parentCallId }),
          ...(error !== undefined && { error }),
        },
      );
    }
    if (notes.length === 0 || options.raw === true) return result;
    // In _meta, not the text: the model's answer stays the tool's own.
    return { ...result, _meta: { ...result._meta, "mcpx/normalized": notes } };
  }

  /**
   * Code mode: run `source` in the sandbox over the caller's view. Each inner call is a call()
   * with this context (so the same profile, validation, policies, timeouts and logging apply)
   * plus `parentCallId`; cancelling this call cancels the script and so its inner calls. The
   * script's value is shaped like any result: select, encoding, the top-level budget.
   */
  async script(source: string, ctx: CallContext, options: ScriptOptions): Promise<ToolResult> {
    const sandbox = this.options.sandbox;
    if (!sandbox) return textResult(codeModeOff(options.limitSetting), true);
    if (!this.admission.accepting) return textResult(SHUTTING_DOWN, true);
    const id = randomUUID();
    const started = performance.now();
    // The dashboard shows the script as a call and its inner calls under it (parentId).
    const event = this.events.start("script", ctx.caller ?? "default", ctx.parentId);
    const compression: CompressionTally = { blocks: 0, jsonTokens: 0, sentTokens: 0 };
    // Its inner calls' upstream requests are this span's children.
    const span = downstreamSpan(this.tracer, "script", ctx);
    const host: ScriptHost = {
      sandbox,
      call: (ref, args, inner) =>
        this.call(
          ref,
          args,
          { ...inner, ...(event && { parentId: event.id }), ...(span && { span }) },
          { raw: true },
        ),
      shape: (result, req) => this.shaper.shape(result, { ...req, compression }),
      budget: options.budget ?? DEFAULTS.resultBudget,
      admission: this.admission,
    };
    // Servers whose restart an inner call learned of: the script's answer says so.
    const notices = new Set<string>();
    const onNotice = (line: string) => notices.add(line);
    const end = await this.admission.track(ctx, (signal) =>
      runScript(
        host,
        source,
        { ...ctx, signal, onNotice, catalog: this.admission.catalog(ctx) },
        id,
        options,
      ),
    );
    this.events.end(event, {
      durationMs: performance.now() - started,
      outcome: end.outcome,
      compression,
    });
    span?.end(spanAttributes(ctx, end.outcome, { tool: "script" }, compression));
    const { message, fields } = scriptLog(id, ctx.caller ?? "default", end, started);
    this.log.info(message, fields);
    return [...notices].reverse().reduce(prependText, end.result);
  }

  /**
   * A page of a result a call cut to fit its budget (`mcpx://results/<id>`): `offset` and
   * `limit` count elements for an array, characters for text. Only the caller whose call made
   * the handle can read it.
   */
  readResult(
    uri: string,
    offset: number,
    limit: number | undefined,
    ctx: CallContext = {},
  ): Promise<ToolResult> {
    return this.shaper.page(uri, offset, limit, ctx.caller ?? "default");
  }

  /**
   * Stop taking calls, give those under way `graceMs` to finish, then cancel the rest. Resolves
   * once every call has answered (cancelled ones answer at once).
   */
  drain(graceMs: number): Promise<void> {
    return this.admission.drain(graceMs);
  }

  private async run(
    ref: string,
    rawArgs: unknown,
    ctx: CallContext,
    options: CallOptions & { notes: string[] },
  ): Promise<CallEnd> {
    const refused = (text: string) => ({
      result: textResult(text, true),
      outcome: "refused" as const,
    });
    const catalog = this.admission.catalog(ctx);
    const aborted = await this.admission.untilStarted(
      parseToolRef(ref)?.server,
      catalog,
      ctx.signal,
    );
    if (aborted) return { result: textResult(aborted.text, true), outcome: aborted.outcome };
    const redact = (t: string) => this.log.redact(t);
    let resolved = resolveTool(ref, catalog, redact);
    // Another form of the name (server__tool, a bare tool) may belong to a server still starting;
    // a ref that names a known server ("everything.ech") is answered at once.
    const starting =
      "error" in resolved ? catalog.servers().filter((s) => s.status === "starting") : [];
    const named =
      starting.length > 0 && catalog.server(parseToolRef(ref)?.server ?? "") !== undefined;
    if ("error" in resolved && starting.length > 0 && !named) {
      for (const s of starting) {
        const stopped = await this.admission.untilStarted(s.name, catalog, ctx.signal);
        if (stopped) return { result: textResult(stopped.text, true), outcome: stopped.outcome };
      }
      resolved = resolveTool(ref, catalog, redact);
    }
    if ("error" in resolved) return refused(resolved.error);
    const { server, tool } = resolved;
    if (resolved.note) options.notes.push(resolved.note);
    const target = { server: server.name, tool: tool.name };

    const args = parseArguments(rawArgs);
    if ("error" in args)
      return { ...refused(`${args.error}\n${signatureLines(server.name, tool)}`), target };
    if (args.fromString) options.notes.push("arguments from a JSON string");
    this.validator ??= new ArgumentValidator();
    const check = this.validator.validate(tool.inputSchema, args.value);
    if (!check.ok) {
      const problems = check.problems.map((p) => `- ${p}`).join("\n");
      return {
        ...refused(
          `Invalid arguments for ${server.name}.${tool.name}:\n${problems}\n${signatureLines(server.name, tool)}\n` +
            `Fix the arguments and call again; describe("${server.name}.${tool.name}") shows the full schema.`,
        ),
        target,
      };
    }
    const denied = await confirmFor(server, tool, args.value, ctx, this.log);
    if (denied) return { result: denied, outcome: "declined", target };
    return { ...(await this.forward(server, tool, args.value, ctx, options)), target };
  }

  /** Run a resolved, validated call on an upstream session and shape what it answers. */
  private async forward(
    server: ServerState,
    tool: ToolDef,
    args: Record<string, unknown>,
    ctx: CallContext,
    { select, raw }: CallOptions,
  ): Promise<CallEnd> {
    const acquired = await this.admission.lease(server, `${server.name}.${tool.name}`, ctx);
    if ("failure" in acquired) {
      const { text, outcome, error } = acquired.failure;
      return { result: textResult(text, true), outcome, ...(error !== undefined && { error }) };
    }
    const { lease } = acquired;
    const end = await this.exchange(lease, server, tool, args, ctx, { select, raw });
    if (lease.restarted === undefined) return end;
    // The session that held this client's state was replaced: say so first, whatever the outcome.
    const notice = restartedNotice(server.name, lease.restarted);
    this.log.info(`${server.name}: told ${ctx.caller ?? "default"} the server restarted`);
    if (raw) {
      // An inner call's result is the script's data: the script's answer carries the line.
      ctx.onNotice?.(notice);
      return end;
    }
    return { ...end, result: prependText(end.result, notice) };
  }

  /** The tools/call itself, on a session already leased; releases it. */
  private async exchange(
    lease: Lease,
    server: ServerState,
    tool: ToolDef,
    args: Record<string, unknown>,
    ctx: CallContext,
    { select, raw }: CallOptions,
  ): Promise<CallEnd> {
    const timeoutMs = server.config.timeoutMs;
    const stopLogs = ctx.onLog ? lease.session.onLog(ctx.onLog) : undefined;
    const compression: CompressionTally = { blocks: 0, jsonTokens: 0, sentTokens: 0 };
    const span = upstreamSpan(this.tracer, server.name, tool.name, ctx);
    let outcome: CallOutcome = "failed";
    try {
      const result = await lease.session.callTool(tool.name, args, {
        timeoutMs,
        ...(span && { traceparent: span.traceparent }),
        ...(ctx.signal && { signal: ctx.signal }),
        ...(ctx.onProgress && { onProgress: ctx.onProgress }),
        ...(ctx.onLog && { logLevel: ctx.logLevel ?? "debug" }),
        ...(ctx.client && { client: ctx.client }),
        task: upstreamTask(
          ctx,
          tool,
          span && this.tracer && { tracer: this.tracer, span, server: server.name },
        ),
      });
      return {
        result: raw
          ? result
          : await this.shaper.shape(result, {
              source: `${server.name}.${tool.name}`,
              budget: server.config.resultBudget,
              caller: ctx.caller ?? "default",
              ...(select !== undefined && { select }),
              compression,
            }),
        outcome: (outcome = result.isError === true ? "isError" : "ok"),
        compression,
      };
    } catch (err) {
      if (ctx.signal?.aborted) {
        outcome = "cancelled";
        const why =
          ctx.signal.reason instanceof Error
            ? ctx.signal.reason.message
            : "cancelled by the client";
        return {
          result: textResult(`Call to ${server.name}.${tool.name} cancelled: ${why}.`, true),
          outcome: "cancelled",
        };
      }
      return {
        result: textResult(
          upstreamFailure(server.name, tool.name, err, timeoutMs, (t) => this.log.redact(t)),
          true,
        ),
        outcome: "failed",
        error: this.log.redact(errorMessage(err)),
      };
    } finally {
      stopLogs?.();
      lease.release();
      span?.end(
        spanAttributes(ctx, outcome, { server: server.name, tool: tool.name }, compression),
      );
    }
  }

  /**
   * Relay one request other than a tool call (prompts/get, completion/complete, resources/read)
   * to `server`, already resolved in the caller's view: see relay.ts.
   */
  relay<T>(
    server: ServerState,
    what: string,
    ctx: CallContext,
    run: (session: UpstreamSession, options: RequestOptions) => Promise<T>,
  ): Promise<RelayEnd<T>> {
    return relayRequest(this.admission, server, what, ctx, run, this.tracer);
  }

  /** Read a resource from the server that lists it (or the one named). */
  async readResource(
    uri: string,
    serverName?: string,
    ctx: CallContext = {},
  ): Promise<{ result: ReadResourceResult } | { error: string }> {
    if (!this.admission.accepting) return { error: SHUTTING_DOWN };
    return this.admission.track(ctx, (signal) => this.read(uri, serverName, { ...ctx, signal }));
  }

  private async read(
    uri: string,
    serverName: string | undefined,
    ctx: CallContext,
  ): Promise<{ result: ReadResourceResult } | { error: string }> {
    const catalog = this.admission.catalog(ctx);
    // `ui://<server>/<rest>`: an MCP Apps resource as clients see it, read from its server.
    const app = splitAppUri(uri);
    if (
      app &&
      (serverName === undefined || serverName === app.server) &&
      catalog.server(app.server)
    )
      return this.readApp(app.uri, app.server, ctx);
    const aborted = await this.admission.untilStarted(serverName, catalog, ctx.signal);
    if (aborted) return { error: aborted.text };
    const found = resourceServer(uri, serverName, catalog);
    if ("error" in found) return found;
    const target = found.server;
    const acquired = await this.admission.lease(target, `reading ${uri}`, ctx);
    if ("failure" in acquired) return { error: acquired.failure.text };
    const { lease } = acquired;
    const span = upstreamRequestSpan(this.tracer, "resources/read", target.name, ctx);
    let outcome: CallOutcome = "failed";
    try {
      const result = await lease.session.readResource(uri, {
        timeoutMs: target.config.timeoutMs,
        ...(span && { traceparent: span.traceparent }),
        ...(ctx.signal && { signal: ctx.signal }),
        ...(ctx.client && { client: ctx.client }),
      });
      outcome = "ok";
      return { result };
    } catch (err) {
      return {
        error: `Server "${target.name}" could not read ${uri}: ${this.log.redact(errorMessage(err))}. Check the URI with resources({ server: "${target.name}" }).`,
      };
    } finally {
      lease.release();
      const attributes = spanAttributes(ctx, outcome, { server: target.name }, undefined);
      span?.end({ ...attributes, method: "resources/read" });
    }
  }

  private async readApp(
    uri: string,
    server: string,
    ctx: CallContext,
  ): Promise<{ result: ReadResourceResult } | { error: string }> {
    const read = await this.read(uri, server, ctx);
    return "error" in read ? read : { result: appContents(server, read.result) };
  }
}

/** The typed signature and the required keys (not those with a default), under an arguments error. */
function signatureLines(server: string, tool: ToolDef): string {
  const schema = defaultsOptional(tool.inputSchema);
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  return (
    `Signature: ${server}.${signature(tool.name, tool.inputSchema)}\n` +
    `Required: ${required.length > 0 ? required.join(", ") : "none"}`
  );
}
