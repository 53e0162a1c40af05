import { readPageArgs, RESULT_URI_PREFIX } from "../../executor/results.js";
import { textResult, type ContentBlock, type ToolResult } from "../../types.js";
import type { MetaTool } from "../context.js";

export const resourcesTool: MetaTool = {
  name: "resources",
  description: () =>
    "List upstream resources and templates (optionally of one server), or read one by uri.",
  inputSchema: {
    type: "object",
    properties: {
      server: { type: "string", description: "only this server's" },
      uri: { type: "string", description: "read this resource" },
      offset: { type: "integer" },
      limit: { type: "integer" },
    },
    additionalProperties: false,
  },
  annotations: { title: "Upstream resources", readOnlyHint: true },

  async handle(args, ctx, req): Promise<ToolResult> {
    const server = nonEmptyString(args.server);
    const uri = nonEmptyString(args.uri);
    // A page of a cut call result: answered by mcpx itself, never by an upstream.
    if (uri?.startsWith(RESULT_URI_PREFIX)) {
      const page = readPageArgs(args);
      if ("error" in page) return textResult(page.error, true);
      return ctx.executor.readResult(uri, page.offset, page.limit, { caller: req.caller });
    }
    if (uri !== undefined) {
      const read = await ctx.executor.readResource(uri, server, {
        caller: req.caller,
        view: req.view,
        signal: req.signal,
      });
      if ("error" in read) return textResult(read.error, true);
      // Each content becomes an embedded resource block: text and blob pass through as they are.
      const content: ContentBlock[] = read.result.contents.map((c) => ({
        type: "resource",
        resource: c,
      }));
      return { content };
    }
    const all = req.view.servers();
    const servers = server === undefined ? all : all.filter((s) => s.name === server);
    if (server !== undefined && servers.length === 0) {
      return textResult(
        `Unknown server "${server}". Servers: ${all.map((s) => s.name).join(", ")}.`,
        true,
      );
    }
    const lines: string[] = [];
    for (const s of servers) {
      for (const r of s.resources)
        lines.push(`${s.name}\t${r.uri}\t${r.name}${r.mimeType ? `\t${r.mimeType}` : ""}`);
      for (const t of s.resourceTemplates)
        lines.push(
          `${s.name}\t${t.uriTemplate}\t${t.name}${t.mimeType ? `\t${t.mimeType}` : ""}\t(template)`,
        );
    }
    if (lines.length === 0) return textResult("No resources.");
    return textResult(
      `server\turi\tname\tmimeType\n${lines.join("\n")}\nRead one with resources({ uri }).`,
    );
  },
};

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
