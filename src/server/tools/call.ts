import { normalizeCallInput } from "../../executor/normalize.js";
import { textResult, type ToolResult } from "../../types.js";
import type { MetaTool } from "../context.js";

export const callTool: MetaTool = {
  name: "call",
  description: () =>
    'Run an upstream tool: method is "server.tool" as listed by describe; arguments is an object matching its input schema. select: JMESPath to keep only part of the result.',
  inputSchema: {
    type: "object",
    properties: {
      method: { type: "string", description: '"server.tool"' },
      arguments: { type: "object", description: "the tool's arguments" },
      select: { type: "string" },
    },
    required: ["method"],
  },

  async handle(args, ctx, req): Promise<ToolResult> {
    // Shapes models commonly write (tool/name for method, arguments at the top level) are read
    // as meant; what was read differently is noted in the answer's _meta.
    const input = normalizeCallInput(args);
    if ("error" in input) return textResult(input.error, true);
    return ctx.executor.call(
      input.method,
      input.arguments,
      {
        caller: req.caller,
        view: req.view,
        signal: req.signal,
        ...(req.sendProgress && { onProgress: req.sendProgress }),
        ...(req.sendLog && { onLog: req.sendLog }),
        ...(req.logLevel && { logLevel: req.logLevel }),
        ...(req.client && { client: req.client }),
      },
      { notes: input.notes, ...(input.select !== undefined && { select: input.select }) },
    );
  },
};
