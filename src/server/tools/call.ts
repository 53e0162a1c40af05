import { textResult, type ToolResult } from "../../types.js";
import type { MetaTool } from "../context.js";

export const callTool: MetaTool = {
  name: "call",
  description: () =>
    'Run an upstream tool: method is "server.tool" as listed by describe; arguments is an object matching its input schema.',
  inputSchema: {
    type: "object",
    properties: {
      method: { type: "string", description: '"server.tool"' },
      arguments: { type: "object", description: "the tool's arguments" },
    },
    required: ["method"],
  },

  async handle(args, ctx, req): Promise<ToolResult> {
    if (typeof args.method !== "string" || args.method === "") {
      return textResult(
        '"method" is required: the tool to run as "server.tool" (describe() lists them).',
        true,
      );
    }
    return ctx.executor.call(args.method, args.arguments, {
      caller: req.caller,
      view: req.view,
      signal: req.signal,
      ...(req.sendProgress && { onProgress: req.sendProgress }),
      ...(req.sendLog && { onLog: req.sendLog }),
      ...(req.logLevel && { logLevel: req.logLevel }),
    });
  },
};
