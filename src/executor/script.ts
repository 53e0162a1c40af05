/**
 * Code mode's step of the executor: what crosses between a `call({ script })` and the sandbox.
 * Inner calls are ordinary executor calls (see Executor.script); this file maps their results to
 * the values a script sees, lists what a script may call, and turns the script's outcome into a
 * tool result.
 */
import type { CatalogSource } from "../registry/view.js";
import type {
  InnerCall,
  InnerCallResult,
  Sandbox,
  SandboxLimits,
  ScriptError,
  ScriptOutcome,
} from "../sandbox/index.js";
import { textResult, type ContentBlock, type ToolResult } from "../types.js";
import type { Admission } from "./admission.js";
import type { CallContext, CallOutcome } from "./context.js";
import { ScriptMedia } from "./media.js";
import type { ShapeRequest } from "./shape.js";

/** The caller's code-mode settings: its profile's limits, and where they are configured. */
export interface ScriptOptions {
  limits?: Partial<SandboxLimits>;
  /** Named in limit messages, e.g. `profiles.ci.codeMode` (→ `profiles.ci.codeMode.timeMs`). */
  limitSetting: string;
  /** A JMESPath expression applied to the script's value before it is encoded. */
  select?: string;
  /** Tokens the script's answer may take (the config's top-level resultBudget by default). */
  budget?: number;
}

/** What a script needs of the executor. */
export interface ScriptHost {
  sandbox: Sandbox;
  /** An inner call: the executor's own call(), returning the upstream's result unshaped. */
  call(ref: string, args: unknown, ctx: CallContext): Promise<ToolResult>;
  shape(result: ToolResult, req: ShapeRequest): Promise<ToolResult>;
  /** Tokens the script's answer may take. */
  budget: number;
  /** Servers still starting are waited for through it, as a call waits for its own. */
  admission: Admission;
}

/** How a script ended, for the answer and the log. */
export interface ScriptEnd {
  result: ToolResult;
  outcome: CallOutcome;
  error?: string;
  calls: number;
}

/**
 * Run one script for `ctx` (its signal is the tracked call's). Inner calls carry the script's
 * context with `parentCallId: id`, and the sandbox's signal, which aborts when the script ends.
 */
export async function runScript(
  host: ScriptHost,
  source: string,
  ctx: CallContext & { signal: AbortSignal; catalog: CatalogSource },
  id: string,
  options: ScriptOptions,
): Promise<ScriptEnd> {
  const { catalog, signal } = ctx;
  // Servers still starting are waited for (as a call waits for its own), so their tools exist.
  for (const s of catalog.servers().filter((x) => x.status === "starting")) {
    const stopped = await host.admission.untilStarted(s.name, catalog, signal);
    if (stopped)
      return { result: textResult(stopped.text, true), outcome: stopped.outcome, calls: 0 };
  }
  // Progress of several upstream requests cannot share the script's one progress token.
  const { onProgress: _perCall, catalog: _catalog, ...shared } = ctx;
  // Images and audio stay here; the script handles stand-ins, its answer carries the blocks.
  const media = new ScriptMedia();
  const call: InnerCall = async (server, tool, args, innerSignal) =>
    innerResult(
      await host.call(`${server}.${tool}`, args, {
        ...shared,
        signal: innerSignal,
        parentCallId: id,
      }),
      media,
    );
  const outcome = await host.sandbox.run(source, {
    servers: scriptServers(catalog),
    call,
    signal,
    caller: ctx.caller ?? "default",
    limitSetting: options.limitSetting,
    ...(options.limits && { limits: options.limits }),
  });
  const answer = scriptResult(withReason(outcome, signal), media);
  const result = await host.shape(answer.result, {
    source: "script",
    budget: host.budget,
    caller: ctx.caller ?? "default",
    ...(outcome.ok && options.select !== undefined && { select: options.select }),
  });
  return { ...answer, result, calls: outcome.calls };
}

/** A cancelled script says why when mcpx itself cancelled it (shutdown), as a call does. */
function withReason(outcome: ScriptOutcome, signal: AbortSignal): ScriptOutcome {
  if (outcome.ok || outcome.error.kind !== "cancelled" || !(signal.reason instanceof Error)) {
    return outcome;
  }
  const message = `The script was cancelled: ${signal.reason.message}.`;
  return { ...outcome, error: { ...outcome.error, message } };
}

/** The script's log line: caller, id (its inner calls' `parent`), outcome, inner calls. */
export function scriptLog(
  id: string,
  caller: string,
  end: ScriptEnd,
  started: number,
): { message: string; fields: Record<string, unknown> } {
  const ms = (performance.now() - started).toFixed(1);
  return {
    message: `script ${id} by ${caller}: ${end.outcome} in ${ms} ms, ${end.calls} inner call(s)`,
    fields: {
      caller,
      callId: id,
      server: null,
      tool: "(script)",
      outcome: end.outcome,
      calls: end.calls,
      ...(end.error !== undefined && { error: end.error }),
    },
  };
}

/** What the model is told when a caller has no code mode. */
export function codeModeOff(setting: string): string {
  return `Code mode is off for this caller (${setting} is false, or the config is untrusted). Call each tool with call({ method: "server.tool", arguments: { … } }) instead.`;
}

/**
 * An inner call's result as the script sees it: structured content, else the text parsed as
 * JSON, else `{ text, content }`. An `isError` result becomes the error its promise rejects with.
 * With `media`, images, audio and binary resources in `content` are stand-ins kept there.
 */
export function innerResult(result: ToolResult, media?: ScriptMedia): InnerCallResult {
  const received = Array.isArray(result.content) ? result.content : [];
  const content = media ? received.map((b) => media.stash(b)) : received;
  const text = content
    .flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : []))
    .join("\n");
  if (result.isError === true) return { error: text || "the tool reported an error" };
  if (result.structuredContent !== undefined) return { value: result.structuredContent };
  const onlyText = content.length > 0 && content.every((b) => b.type === "text");
  if (onlyText) {
    try {
      return { value: JSON.parse(text) as unknown };
    } catch {
      // Plain text: handed over as text below.
    }
  }
  return { value: { text, content } };
}

/** Every server and tool the catalog shows, by name: what a script's `servers` holds. */
export function scriptServers(catalog: CatalogSource): Record<string, string[]> {
  return Object.fromEntries(catalog.servers().map((s) => [s.name, s.tools.map((t) => t.name)]));
}

/** How a script's end is logged, as the outcome of a call. */
function outcomeOf(error: ScriptError): CallOutcome {
  switch (error.kind) {
    case "syntax":
      return "refused";
    case "cancelled":
      return "cancelled";
    case "internal":
      return "failed";
    case "busy":
      return "busy";
    case "runtime":
    case "limit":
      return "isError";
  }
}

/**
 * The script's answer before shaping: its value (a string as itself, anything else as JSON),
 * then its console lines; a failed script answers its error's message, then the lines it logged.
 * Media in the value (see ScriptMedia) follow its text as blocks of their kind.
 */
export function scriptResult(
  outcome: ScriptOutcome,
  media: ScriptMedia = new ScriptMedia(),
): {
  result: ToolResult;
  outcome: CallOutcome;
  error?: string;
} {
  const logs: ContentBlock[] =
    outcome.logs.length > 0 ? [{ type: "text", text: `console:\n${outcome.logs.join("\n")}` }] : [];
  const meta = { "mcpx/script": { calls: outcome.calls } };
  if (!outcome.ok) {
    const error = outcome.error;
    return {
      result: {
        content: [{ type: "text", text: error.message }, ...logs],
        isError: true,
        _meta: meta,
      },
      outcome: outcomeOf(error),
      error: error.kind === "limit" ? `limit ${error.limit ?? ""}` : error.kind,
    };
  }
  const { blocks: mediaBlocks, rest: value } = media.extract(outcome.value);
  const blocks: ContentBlock[] =
    value === undefined
      ? logs.length > 0 || mediaBlocks.length > 0
        ? []
        : [{ type: "text", text: "(the script returned no value)" }]
      : [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }];
  return {
    result: { content: [...blocks, ...mediaBlocks, ...logs], _meta: meta },
    outcome: "ok",
  };
}
