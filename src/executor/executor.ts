import type { ResultCompression } from "../config/load.js";
import { didYouMean, nearest } from "../config/suggest.js";
import { compressResult } from "../compression/result.js";
import { signature } from "../compression/signature.js";
import { errorMessage, ProxyError } from "../errors.js";
import type { Logger } from "../logger.js";
import {
  classifyFailure,
  matchesUriTemplate,
  type LogLevel,
  type LogMessage,
  type Progress,
} from "../registry/connection.js";
import type { Lease, SessionPool } from "../registry/pool.js";
import type { Registry, ServerState } from "../registry/registry.js";
import { parseToolRef } from "../registry/toolref.js";
import type { CatalogSource } from "../registry/view.js";
import { textResult, type ReadResourceResult, type ToolDef, type ToolResult } from "../types.js";
import { ArgumentValidator } from "./validate.js";

/** What the downstream request brings to a call: who asks, cancellation and progress. */
export interface CallContext {
  /** The caller (client) the call is made for; picks the session under the "caller" policy. */
  caller?: string;
  /**
   * What the caller may see (its profile's view). Anything outside it is answered exactly like
   * a tool or server that does not exist. Default: the whole registry.
   */
  view?: CatalogSource;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** Upstream log messages (notifications/message) sent while the call runs. */
  onLog?: (message: LogMessage) => void;
  /**
   * The least severe level `onLog` wants. Modern upstreams send log messages only when the
   * request names a level: without this one, debug is asked for and `onLog` filters.
   */
  logLevel?: LogLevel;
}

export interface ExecutorOptions {
  logger: Logger;
  compression: ResultCompression;
}

/**
 * How a call ended, as logged: ok; isError (the upstream answered with an error result);
 * refused (unknown or hidden tool, bad arguments; the upstream was not touched); busy; failed.
 */
export type CallOutcome = "ok" | "isError" | "refused" | "busy" | "failed" | "cancelled";

const SHUTTING_DOWN = "mcpx is shutting down; the call was not completed. Retry once mcpx is back";

/** Why a request got no upstream session, as the client and the log see it. */
interface NoSession {
  text: string;
  outcome: CallOutcome;
  error?: string;
}

/**
 * Runs one `call`: resolve the tool ref → validate arguments → take an isolated session →
 * forward → shape the result. Every failure comes back as an `isError` result that names the
 * server and the next step; nothing here throws to the caller.
 */
export class Executor {
  private readonly validator = new ArgumentValidator();
  private readonly log: Logger;
  /** Calls and reads under way, each with the controller that cancels it. */
  private readonly inflight = new Map<Promise<unknown>, AbortController>();
  private accepting = true;

  constructor(
    private readonly registry: Registry,
    private readonly options: ExecutorOptions,
  ) {
    this.log = options.logger;
  }

  /** One call, logged at info with its caller, tool ref, duration and outcome (never arguments). */
  async call(ref: string, rawArgs: unknown, ctx: CallContext = {}): Promise<ToolResult> {
    if (!this.accepting) return textResult(SHUTTING_DOWN, true);
    const started = performance.now();
    const { result, outcome, error } = await this.track(ctx, (signal) =>
      this.run(ref, rawArgs, { ...ctx, signal }),
    );
    const parsed = parseToolRef(ref);
    this.log.info(
      `call ${ref} by ${ctx.caller ?? "default"}: ${outcome} in ${(performance.now() - started).toFixed(1)} ms`,
      {
        caller: ctx.caller ?? "default",
        server: parsed?.server ?? null,
        tool: parsed?.tool ?? ref,
        outcome,
        ...(error !== undefined && { error }),
      },
    );
    return result;
  }

  /**
   * Stop taking calls, give those under way `graceMs` to finish, then cancel the rest. Resolves
   * once every call has answered (cancelled ones answer at once).
   */
  async drain(graceMs: number): Promise<void> {
    this.accepting = false;
    const pending = [...this.inflight.keys()];
    if (pending.length === 0) return;
    this.log.info(`waiting up to ${graceMs} ms for ${pending.length} call(s) to finish`);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.allSettled(pending), grace]);
    clearTimeout(timer);
    if (this.inflight.size > 0) {
      this.log.warn(`cancelling ${this.inflight.size} call(s) still running after ${graceMs} ms`);
      for (const controller of this.inflight.values()) controller.abort(new Error(SHUTTING_DOWN));
      await Promise.allSettled([...this.inflight.keys()]);
    }
  }

  /** Run `work` with a signal that the caller's signal and drain() can both abort. */
  private async track<T>(ctx: CallContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(ctx.signal?.reason);
    if (ctx.signal?.aborted) controller.abort(ctx.signal.reason);
    ctx.signal?.addEventListener("abort", onAbort, { once: true });
    const running = work(controller.signal);
    this.inflight.set(running, controller);
    try {
      return await running;
    } finally {
      this.inflight.delete(running);
      ctx.signal?.removeEventListener("abort", onAbort);
    }
  }

  private async run(
    ref: string,
    rawArgs: unknown,
    ctx: CallContext,
  ): Promise<{ result: ToolResult; outcome: CallOutcome; error?: string }> {
    const refused = (text: string) => ({
      result: textResult(text, true),
      outcome: "refused" as const,
    });
    const catalog = ctx.view ?? this.registry;
    const aborted = await this.untilStarted(parseToolRef(ref)?.server, catalog, ctx.signal);
    if (aborted) return { result: textResult(aborted.text, true), outcome: aborted.outcome };
    const resolved = this.resolve(ref, catalog);
    if ("error" in resolved) return refused(resolved.error);
    const { server, tool } = resolved;

    const args = parseArguments(rawArgs);
    if ("error" in args)
      return refused(
        `${args.error}\nSignature: ${server.name}.${signature(tool.name, tool.inputSchema)}`,
      );
    const check = this.validator.validate(tool.inputSchema, args.value);
    if (!check.ok) {
      return refused(
        `Invalid arguments for ${server.name}.${tool.name}:\n${check.problems.map((p) => `- ${p}`).join("\n")}\n` +
          `Signature: ${server.name}.${signature(tool.name, tool.inputSchema)}\n` +
          `Fix the arguments and call again; describe("${server.name}.${tool.name}") shows the full schema.`,
      );
    }

    const timeoutMs = server.config.timeoutMs;
    const acquired = await this.lease(server, `${server.name}.${tool.name}`, ctx);
    if ("failure" in acquired) {
      const { text, outcome, error } = acquired.failure;
      return { result: textResult(text, true), outcome, ...(error !== undefined && { error }) };
    }
    const { lease } = acquired;
    const stopLogs = ctx.onLog ? lease.session.onLog(ctx.onLog) : undefined;
    try {
      const result = await lease.session.callTool(tool.name, args.value, {
        timeoutMs,
        ...(ctx.signal && { signal: ctx.signal }),
        ...(ctx.onProgress && { onProgress: ctx.onProgress }),
        ...(ctx.onLog && { logLevel: ctx.logLevel ?? "debug" }),
      });
      return {
        result: compressResult(result, this.options.compression),
        outcome: result.isError === true ? "isError" : "ok",
      };
    } catch (err) {
      if (ctx.signal?.aborted) {
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
    }
  }

  /** Read a resource from the server that lists it (or the one named). */
  async readResource(
    uri: string,
    serverName?: string,
    ctx: CallContext = {},
  ): Promise<{ result: ReadResourceResult } | { error: string }> {
    if (!this.accepting) return { error: SHUTTING_DOWN };
    return this.track(ctx, (signal) => this.read(uri, serverName, { ...ctx, signal }));
  }

  private async read(
    uri: string,
    serverName: string | undefined,
    ctx: CallContext,
  ): Promise<{ result: ReadResourceResult } | { error: string }> {
    const catalog = ctx.view ?? this.registry;
    const aborted = await this.untilStarted(serverName, catalog, ctx.signal);
    if (aborted) return { error: aborted.text };
    const found = this.resourceServer(uri, serverName, catalog);
    if ("error" in found) return found;
    const target = found.server;
    const acquired = await this.lease(target, `reading ${uri}`, ctx);
    if ("failure" in acquired) return { error: acquired.failure.text };
    const { lease } = acquired;
    try {
      const result = await lease.session.readResource(uri, {
        timeoutMs: target.config.timeoutMs,
        ...(ctx.signal && { signal: ctx.signal }),
      });
      return { result };
    } catch (err) {
      return {
        error: `Server "${target.name}" could not read ${uri}: ${this.log.redact(errorMessage(err))}. Check the URI with resources({ server: "${target.name}" }).`,
      };
    } finally {
      lease.release();
    }
  }

  private pool(server: string): SessionPool {
    const pool = this.registry.pool(server);
    if (!pool) throw new Error(`no session pool for ${server}`);
    return pool;
  }

  /**
   * A server the caller can see that is still starting is waited for (its discovery is bounded
   * by discoveryTimeout), so a call made right after mcpx came up runs instead of failing.
   * Returns what to answer when the caller cancelled meanwhile.
   */
  private async untilStarted(
    name: string | undefined,
    catalog: CatalogSource,
    signal: AbortSignal | undefined,
  ): Promise<NoSession | undefined> {
    if (name === undefined || catalog.server(name)?.status !== "starting") return undefined;
    try {
      await this.registry.started(name, signal);
      return undefined;
    } catch {
      return { text: `Cancelled while server "${name}" was starting.`, outcome: "cancelled" };
    }
  }

  /**
   * Take a session of `server` for one request (`what` names it in messages), or say why there
   * is none: cancelled while waiting, every session busy, a pool retired by a reload, shutdown,
   * or the upstream failing to start.
   */
  private async lease(
    server: ServerState,
    what: string,
    ctx: CallContext,
  ): Promise<{ lease: Lease } | { failure: NoSession }> {
    try {
      const lease = await this.pool(server.name).acquire({
        caller: ctx.caller ?? "default",
        timeoutMs: server.config.timeoutMs,
        ...(ctx.signal && { signal: ctx.signal }),
      });
      return { lease };
    } catch (err) {
      return { failure: this.noSession(server, what, err, ctx.signal) };
    }
  }

  private noSession(
    server: ServerState,
    what: string,
    err: unknown,
    signal: AbortSignal | undefined,
  ): NoSession {
    if (signal?.aborted)
      return { text: `${what} cancelled before it started.`, outcome: "cancelled" };
    const code = err instanceof ProxyError ? err.code : undefined;
    switch (code) {
      case "UPSTREAM_BUSY":
        return {
          text: `Server "${server.name}" is busy: ${errorMessage(err)}. ${what} was not run; try again shortly, or raise "maxSessions" for "${server.name}" in the mcpx config.`,
          outcome: "busy",
        };
      case "POOL_RETIRED":
        return {
          text: `Server "${server.name}" was reconfigured by a config reload while ${what} waited; it was not run. Call it again.`,
          outcome: "failed",
        };
      case "SHUTTING_DOWN":
        return { text: SHUTTING_DOWN, outcome: "cancelled" };
      default: {
        const error = this.log.redact(errorMessage(err));
        return {
          text:
            `Server "${server.name}" could not be started for ${what}: ${error}. ` +
            `Other servers are unaffected; try again later or use describe() to see server status.`,
          outcome: "failed",
          error,
        };
      }
    }
  }

  /** Resolve against what the caller may see only: hidden names get no hint that they exist. */
  private resolve(
    ref: string,
    catalog: CatalogSource,
  ): { server: ServerState; tool: ToolDef } | { error: string } {
    const servers = catalog.servers();
    const parsed = parseToolRef(ref);
    if (!parsed) {
      const asTool = servers.flatMap((s) =>
        s.tools.filter((t) => t.name === ref).map((t) => `${s.name}.${t.name}`),
      );
      return {
        error: `"${ref}" is not a tool ref: use "server.tool"${asTool.length > 0 ? `, e.g. "${asTool.join('" or "')}"` : ""}. describe() lists every tool.`,
      };
    }
    const server = catalog.server(parsed.server);
    if (!server) {
      const guesses = nearest(
        parsed.server,
        servers.map((s) => s.name),
      );
      return {
        error: `Unknown server "${parsed.server}".${didYouMean(guesses)} Servers: ${servers.map((s) => s.name).join(", ")}.`,
      };
    }
    // A down server fails fast with what we know, so the model stops retrying it.
    if (server.status === "down" || (server.status === "starting" && server.tools.length === 0)) {
      return { error: this.unavailable(server) };
    }
    const tool = server.tools.find((t) => t.name === parsed.tool);
    if (!tool) {
      const guesses = nearest(
        parsed.tool,
        server.tools.map((t) => t.name),
      ).map((t) => `${server.name}.${t}`);
      return {
        error: `Unknown tool "${parsed.tool}" on server "${server.name}".${didYouMean(guesses)} describe("${server.name}") lists its tools.`,
      };
    }
    return { server, tool };
  }

  private unavailable(server: ServerState): string {
    if (server.status === "starting") {
      return `Server "${server.name}" is still starting. Try again in a few seconds.`;
    }
    const h = server.health;
    const since = h.downSince !== undefined ? ` since ${new Date(h.downSince).toISOString()}` : "";
    const error = server.error ? ` (last error: ${this.log.redact(server.error)})` : "";
    const retry =
      h.nextRetryAt !== undefined
        ? ` mcpx retries it in ${Math.max(0, Math.ceil((h.nextRetryAt - Date.now()) / 1000))} s.`
        : "";
    return `Server "${server.name}" is down${since}${error}.${retry} Its tools are unavailable until then; other servers keep working.`;
  }

  private resourceServer(
    uri: string,
    serverName: string | undefined,
    catalog: CatalogSource,
  ): { server: ServerState } | { error: string } {
    if (serverName !== undefined) {
      const server = catalog.server(serverName);
      if (!server)
        return {
          error: `Unknown server "${serverName}". Servers: ${catalog
            .servers()
            .map((s) => s.name)
            .join(", ")}.`,
        };
      return { server };
    }
    const servers = catalog.servers();
    let owners = servers.filter((s) => s.resources.some((r) => r.uri === uri));
    if (owners.length === 0)
      owners = servers.filter((s) =>
        s.resourceTemplates.some((t) => matchesUriTemplate(t.uriTemplate, uri)),
      );
    if (owners.length === 1 && owners[0]) return { server: owners[0] };
    if (owners.length > 1) {
      return {
        error: `${uri} is offered by several servers (${owners.map((s) => s.name).join(", ")}). Pass "server" to choose one.`,
      };
    }
    return {
      error: `No server lists the resource ${uri}. resources() lists what is available; pass "server" to read from a specific one anyway.`,
    };
  }
}

/** `arguments` may come as an object or, as models often send it, a JSON string. */
function parseArguments(raw: unknown): { value: Record<string, unknown> } | { error: string } {
  if (raw === undefined || raw === null) return { value: {} };
  let value: unknown = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return { value: {} };
    try {
      value = JSON.parse(raw) as unknown;
    } catch (err) {
      return {
        error: `"arguments" is a string that is not valid JSON (${errorMessage(err)}). Pass an object.`,
      };
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      error: `"arguments" must be an object of named parameters, not ${Array.isArray(value) ? "an array" : typeof value}.`,
    };
  }
  return { value: value as Record<string, unknown> };
}

function upstreamFailure(
  server: string,
  tool: string,
  err: unknown,
  timeoutMs: number,
  redact: (text: string) => string,
): string {
  const { kind } = classifyFailure(err);
  if (kind === "timeout") {
    return `Server "${server}" did not answer ${tool} within ${timeoutMs} ms; the call was abandoned. Try again, with smaller input, or raise "timeout" for "${server}" in the mcpx config.`;
  }
  if (kind === "closed") {
    return `Server "${server}" closed the connection during ${tool} (it may have crashed). The call did not complete; it is safe to retry if the tool is idempotent.`;
  }
  return `Server "${server}" failed to run ${tool}: ${redact(errorMessage(err))}`;
}
