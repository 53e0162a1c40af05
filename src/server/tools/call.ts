import type { CallContext } from "../../executor/context.js";
import { normalizeCallInput } from "../../executor/normalize.js";
import { codeModeOff } from "../../executor/script.js";
import { TASK_URI_PREFIX } from "../../executor/tasks.js";
import type { CatalogView } from "../../registry/view.js";
import { textResult, type JsonSchema, type ToolResult } from "../../types.js";
import type { MetaTool, ProxyContext, RequestContext } from "../context.js";

const DESCRIPTION =
  'Run an upstream tool: method is "server.tool" as listed by describe; arguments is an object matching its input schema. select: JMESPath to keep only part of the result.';
/** Said only to callers whose profile has code mode. */
const SCRIPT_SENTENCE =
  " Or script: JS/TS run as an async function body where await servers.<server>.<tool>(args) calls a tool; its return value is the result (describe with api: true shows the API).";

const PROPERTIES = {
  method: { type: "string", description: '"server.tool"' },
  arguments: { type: "object", description: "the tool's arguments" },
  select: { type: "string" },
};

/** Whether the caller's profile lets it run scripts (the config turned it off, or untrusted). */
function codeMode(view: CatalogView): boolean {
  return view.profile.codeMode !== false;
}

export const callTool: MetaTool = {
  name: "call",
  description: (view) => (codeMode(view) ? DESCRIPTION + SCRIPT_SENTENCE : DESCRIPTION),
  // `method` is not required: a script takes its place, and a missing one is answered by name.
  inputSchema: (view): JsonSchema => ({
    type: "object",
    properties: codeMode(view) ? { ...PROPERTIES, script: { type: "string" } } : PROPERTIES,
  }),

  async handle(args, ctx, req): Promise<ToolResult> {
    if (args.script !== undefined) {
      if (!codeMode(req.view))
        return textResult(codeModeOff(`profiles.${req.view.profile.name}.codeMode`), true);
      return outliving(ctx, req, "script", (r) => runScript(args, ctx, r));
    }
    // A handle of a call that outlived taskAfter, polled as call({ method: uri }).
    if (typeof args.method === "string" && args.method.startsWith(TASK_URI_PREFIX))
      return pollTask(ctx, req, args.method);
    // Shapes models commonly write (tool/name for method, arguments at the top level) are read
    // as meant; what was read differently is noted in the answer's _meta.
    const input = normalizeCallInput(args);
    if ("error" in input) return textResult(input.error, true);
    return outliving(ctx, req, input.method, (r) =>
      ctx.executor.call(input.method, input.arguments, callContext(r), {
        notes: input.notes,
        ...(input.select !== undefined && { select: input.select }),
      }),
    );
  },
};

/**
 * Run `work` for the request; past `taskAfter` the client gets a handle to poll and the work
 * goes on (executor/tasks.ts). The work sees a signal and a progress channel of its own.
 */
function outliving(
  ctx: ProxyContext,
  req: RequestContext,
  source: string,
  work: (req: RequestContext) => Promise<ToolResult>,
): Promise<ToolResult> {
  return ctx.executor.tasks.run(
    {
      caller: req.caller,
      source,
      // Inside an MCP Task the client already polls the task: no handle of our own.
      afterMs: req.inTask === true ? 0 : ctx.config.taskAfterMs,
      signal: req.signal,
      // The request's own controller: the call runs on it (no second signal; CallTasks checks
      // that it is the signal's).
      owner: req.controller,
      ...(req.sendProgress && { sendProgress: req.sendProgress }),
    },
    // Onto withoutProgress's copy: keys added after a spread cost V8 a slow path.
    (signal, sendProgress, controller) =>
      work(
        Object.assign(
          withoutProgress(req),
          { signal, controller },
          sendProgress && { sendProgress },
        ),
      ),
  );
}

/** A handle's result, waiting for it up to `taskAfter` (progress meanwhile). */
export function pollTask(ctx: ProxyContext, req: RequestContext, uri: string): Promise<ToolResult> {
  return ctx.executor.tasks.poll(
    req.caller,
    uri,
    ctx.config.taskAfterMs || 60_000,
    req.sendProgress,
  );
}

function withoutProgress(req: RequestContext): RequestContext {
  const { sendProgress: _dropped, ...rest } = req;
  return rest;
}

/** The request as the executor sees it. Inner calls of a script inherit all of it. */
export function callContext(req: RequestContext): CallContext {
  return {
    caller: req.caller,
    ...(req.clientKey !== undefined && { clientKey: req.clientKey }),
    view: req.view,
    signal: req.signal,
    ...(req.controller && { controller: req.controller }),
    ...(req.sendProgress && { onProgress: req.sendProgress }),
    ...(req.sendLog && { onLog: req.sendLog }),
    ...(req.logLevel && { logLevel: req.logLevel }),
    ...(req.client && { client: req.client }),
    ...(req.task && { task: req.task }),
    trace: {
      era: req.era,
      profile: req.view.profile.name,
      ...(req.traceparent !== undefined && { traceparent: req.traceparent }),
    },
  };
}

/** A key a model filled in only because the schema lists it: ignored next to a script. */
function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === "" ||
    (typeof value === "object" && Object.keys(value).length === 0)
  );
}

/** Keys `call({ script })` takes. */
const SCRIPT_KEYS = new Set(["script", "select"]);

/** `call({ script, select? })`: the script runs with the caller's profile and its limits. */
async function runScript(
  args: Record<string, unknown>,
  ctx: ProxyContext,
  req: RequestContext,
): Promise<ToolResult> {
  const script = args.script;
  if (typeof script !== "string" || script.trim() === "") {
    return textResult(
      `"script" must be the script's text, e.g. call({ script: "const r = await servers.github.get_me({}); return r.login;" }).`,
      true,
    );
  }
  const extra = Object.keys(args).filter((k) => !SCRIPT_KEYS.has(k) && !isEmpty(args[k]));
  if (extra.length > 0) {
    const named = extra.map((k) => `"${k}"`).join(", ");
    const why = extra.some((k) => ["method", "tool", "name"].includes(k))
      ? "Give either method (one tool) or script (several calls in one), not both."
      : "A script writes each call's arguments in the call itself: servers.<server>.<tool>({ … }).";
    return textResult(
      `call({ script }) takes only script and select; remove ${named}. ${why}`,
      true,
    );
  }
  const select = args.select;
  if (select !== undefined && (typeof select !== "string" || select.trim() === "")) {
    return textResult(
      `"select" must be a JMESPath expression as a string, e.g. "[].title"; got ${JSON.stringify(select)}.`,
      true,
    );
  }
  const profile = req.view.profile;
  const limits = profile.codeMode === false ? undefined : profile.codeMode;
  return ctx.executor.script(script, callContext(req), {
    limitSetting: `profiles.${profile.name}.codeMode`,
    budget: ctx.config.resultBudget,
    ...(limits && { limits }),
    ...(typeof select === "string" && { select: select.trim() }),
  });
}
