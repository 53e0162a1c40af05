import { UriTemplate } from "@modelcontextprotocol/server";
import { TASK_URI_PREFIX } from "../../executor/tasks.js";
import { appUri } from "../../registry/apps.js";
import { pollTask } from "./call.js";
import { readPageArgs, RESULT_URI_PREFIX } from "../../executor/result-store.js";
import type { CatalogView } from "../../registry/view.js";
import { textResult, type ContentBlock, type ToolResult } from "../../types.js";
import type { MetaTool, ProxyContext } from "../context.js";

export const resourcesTool: MetaTool = {
  name: "resources",
  description: () =>
    "List upstream resources and templates (optionally of one server), or read one by uri.",
  inputSchema: {
    type: "object",
    properties: {
      server: { type: "string", description: "only this server's" },
      uri: { type: "string", description: "to read" },
      arguments: { type: "object" },
      offset: { type: "integer" },
      limit: { type: "integer" },
    },
    additionalProperties: false,
  },
  annotations: { title: "Upstream resources", readOnlyHint: true },

  async handle(args, ctx, req): Promise<ToolResult> {
    const server = nonEmptyString(args.server);
    const uri = nonEmptyString(args.uri);
    // A call that outlived taskAfter: its result once there (tasks.ts).
    if (uri?.startsWith(TASK_URI_PREFIX)) return pollTask(ctx, req, uri);
    // A page of a cut call result: answered by mcpx itself, never by an upstream.
    if (uri?.startsWith(RESULT_URI_PREFIX)) {
      const page = readPageArgs(args);
      if ("error" in page) return textResult(page.error, true);
      return ctx.executor.readResult(uri, page.offset, page.limit, { caller: req.caller });
    }
    await untilStarted(ctx, req.view, server, req.signal);
    if (uri !== undefined) {
      const target = expandTemplate(uri, args.arguments, server, req.view);
      if ("error" in target) return textResult(target.error, true);
      const read = await ctx.executor.readResource(target.uri, target.server, {
        caller: req.caller,
        ...(req.clientKey !== undefined && { clientKey: req.clientKey }),
        view: req.view,
        signal: req.signal,
        ...(req.span && { span: req.span }),
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
        lines.push(
          `${s.name}\t${appUri(s.name, r.uri)}\t${r.name}${r.mimeType ? `\t${r.mimeType}` : ""}`,
        );
      for (const t of s.resourceTemplates)
        lines.push(
          `${s.name}\t${t.uriTemplate}\t${t.name}${t.mimeType ? `\t${t.mimeType}` : ""}\t(template)`,
        );
    }
    if (lines.length === 0) return textResult("No resources.");
    return textResult(
      `server\turi\tname\tmimeType\n${lines.join("\n")}\nRead one with resources({ uri }); a template with resources({ uri, arguments: { variable: "value" } }).`,
    );
  },
};

/**
 * Wait for the servers still starting (the named one, else all of the view's; up to
 * startupWait), as describe does: a first resources() right after mcpx starts must list them,
 * not answer "No resources.".
 */
async function untilStarted(
  ctx: ProxyContext,
  view: CatalogView,
  server: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  const names = view
    .servers()
    .filter((s) => server === undefined || s.name === server)
    .map((s) => s.name);
  await ctx.registry.firstLook(names, signal);
}

/** Variables of `{?x}` and `{&x}` expressions: optional query parameters. */
const OPTIONAL_EXPRESSION = /^[?&]/;

/**
 * The URI to read: `uri` itself, or, for a template, its RFC 6570 expansion with `values`
 * (on the server whose template it is, unless one is named).
 */
function expandTemplate(
  uri: string,
  values: unknown,
  server: string | undefined,
  view: CatalogView,
): { uri: string; server: string | undefined } | { error: string } {
  const given = values !== undefined && values !== null;
  if (!UriTemplate.isTemplate(uri)) {
    if (!given) return { uri, server };
    return { error: `"arguments" fills the variables of a template; ${uri} is not one.` };
  }
  let template: UriTemplate;
  try {
    template = new UriTemplate(uri);
  } catch (err) {
    return { error: `${uri} is not a valid URI template: ${(err as Error).message}` };
  }
  const names = template.variableNames;
  if (given && (typeof values !== "object" || Array.isArray(values)))
    return { error: `"arguments" must be an object of template variables: ${names.join(", ")}.` };
  const vars: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      vars[name] = String(value);
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) vars[name] = value;
    else return { error: `Template variable "${name}" must be a string or an array of strings.` };
  }
  const missing = requiredNames(uri).filter((n) => !(n in vars));
  if (missing.length > 0) {
    const example = Object.fromEntries(names.map((n) => [n, "..."]));
    return {
      error: `${uri} is a template: give its variables (${missing.join(", ")} missing), e.g. resources({ uri: ${JSON.stringify(uri)}, arguments: ${JSON.stringify(example)} }).`,
    };
  }
  const owner = server ?? view.templateOwner(uri)?.name;
  if (owner === undefined)
    return { error: `No server lists the template ${uri}. resources() lists the templates.` };
  return { uri: template.expand(vars), server: owner };
}

/** The variables a template cannot do without: those outside `{?...}` and `{&...}`. */
function requiredNames(uri: string): string[] {
  return [...uri.matchAll(/\{([^}]*)\}/g)].flatMap(([, body = ""]) =>
    OPTIONAL_EXPRESSION.test(body)
      ? []
      : body
          .replace(/^[+#./;]/, "")
          .split(",")
          .map((v) => v.replace(/[:*].*$/, "").trim())
          .filter(Boolean),
  );
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
