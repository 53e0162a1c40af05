import { didYouMean, nearest } from "../../config/suggest.js";
import { parseToolRef } from "../../registry/toolref.js";
import { textResult, type ToolResult } from "../../types.js";
import {
  describeDescription,
  renderCatalog,
  renderSearch,
  renderServer,
  renderTool,
  schemaTypeName,
  lacks,
  trustLines,
} from "../catalog.js";
import type { ClientAbilities } from "../../upstream/channel.js";
import { escapeInvisible } from "../../registry/trust-rules.js";
import type { CatalogView } from "../../registry/view.js";
import { codeModeOff } from "../../executor/script.js";
import type { JsonSchema } from "../../types.js";
import { renderApi, type ApiServer } from "../script-typings.js";
import type { MetaTool, ProxyContext, RequestContext } from "../context.js";

async function describeOne(
  name: string,
  ctx: ProxyContext,
  view: CatalogView,
  abilities?: ClientAbilities,
): Promise<{ text: string; error?: true }> {
  const servers = view.servers();
  const server = view.server(name);
  if (server) return { text: renderServer(server, abilities) };
  const ref = parseToolRef(name);
  const owner = ref && view.server(ref.server);
  const tool = owner && ref ? owner.tools.find((t) => t.name === ref.tool) : undefined;
  if (owner && tool) {
    const input = await ctx.schemas.compile(tool.inputSchema, schemaTypeName(tool.name, "Input"));
    const output = tool.outputSchema
      ? await ctx.schemas.compile(tool.outputSchema, schemaTypeName(tool.name, "Output"))
      : undefined;
    const rendered = renderTool(owner.name, tool, input, output, lacks(owner, tool, abilities));
    // Schema texts too: a hidden character anywhere in the definition is shown, escaped.
    return { text: escapeInvisible([rendered, ...trustLines(owner, tool.name)].join("\n")) };
  }
  if (owner && ref && owner.trust?.held) {
    const lines = trustLines(owner, ref.tool);
    if (lines.length > 0) return { text: lines.join("\n"), error: true };
  }
  const all = [
    ...servers.map((s) => s.name),
    ...servers.flatMap((s) => s.tools.map((t) => `${s.name}.${t.name}`)),
  ];
  // A bare tool name ("echo") is a common slip: match it against the tool part too.
  const bare = servers.flatMap((s) =>
    s.tools.filter((t) => t.name === name).map((t) => `${s.name}.${t.name}`),
  );
  const guesses = bare.length > 0 ? bare : nearest(name, all);
  const hint = didYouMean(guesses);
  const why =
    owner && owner.status !== "ready"
      ? ` Server "${owner.name}" is ${owner.status}${owner.error ? `: ${owner.error}` : ""}.`
      : "";
  return {
    text: `Unknown server or tool "${name}".${why}${hint} describe() lists everything.`,
    error: true,
  };
}

/**
 * describe({ method, api: true }): the named servers and tools (every server when no method) as
 * the declaration a script sees. A name that is neither is answered as describeOne answers it.
 */
async function describeApi(
  names: string[] | undefined,
  ctx: ProxyContext,
  view: CatalogView,
): Promise<{ text: string; error?: true }> {
  const groups = new Map<string, ApiServer>();
  const unknown: string[] = [];
  for (const name of names ?? view.servers().map((s) => s.name)) {
    const server = view.server(name);
    if (server) {
      groups.set(server.name, { server, tools: server.tools });
      continue;
    }
    const ref = parseToolRef(name);
    const owner = ref && view.server(ref.server);
    const tool = owner?.tools.find((t) => t.name === ref?.tool);
    if (!owner || !tool) {
      unknown.push((await describeOne(name, ctx, view)).text);
      continue;
    }
    const group = groups.get(owner.name);
    if (group && !group.full) continue; // the whole server is already there
    groups.set(owner.name, { server: owner, tools: [...(group?.tools ?? []), tool], full: true });
  }
  const parts = groups.size > 0 ? [await renderApi([...groups.values()], ctx.schemas)] : [];
  return { text: [...parts, ...unknown].join("\n\n"), ...(groups.size === 0 && { error: true }) };
}

/** How many matches describe({query}) returns. */
const SEARCH_RESULTS = 10;

function search(
  query: string,
  ctx: ProxyContext,
  view: CatalogView,
  abilities?: ClientAbilities,
): string {
  const hits = view.search(query, SEARCH_RESULTS).flatMap((h) => {
    const server = view.server(h.server);
    const tool = server?.tools.find((t) => t.name === h.tool);
    return server && tool ? [{ server, tool }] : [];
  });
  const starting = view
    .servers()
    .filter((s) => ctx.registry.awaitsFirstCatalog(s.name))
    .map((s) => s.name);
  return renderSearch(query, hits, starting, abilities);
}

/**
 * The servers a describe looks at: the named ones (a tool ref names its server), else, for the
 * whole catalog or a search, every server of the view.
 */
function looksAt(names: readonly unknown[] | undefined, view: CatalogView): string[] {
  if (!names) return view.servers().map((s) => s.name);
  return names.flatMap((n) => {
    if (typeof n !== "string") return [];
    const name = n.trim();
    const server = view.server(name) ?? view.server(parseToolRef(name)?.server ?? "");
    return server ? [server.name] : [];
  });
}

/**
 * A first look waits for the servers it looks at that are still starting, up to `startupWait`
 * (a cancelled request stops waiting), then answers from a fresh view with what is ready.
 */
async function afterFirstLook(
  names: readonly unknown[] | undefined,
  ctx: ProxyContext,
  req: RequestContext,
): Promise<RequestContext> {
  const servers = looksAt(names, req.view);
  if (!servers.some((n) => ctx.registry.awaitsFirstCatalog(n))) return req;
  await ctx.registry.firstLook(servers, req.signal);
  return { ...req, view: ctx.views.forCaller(req.caller) };
}

export const describeTool: MetaTool = {
  name: "describe",
  description: (view) => describeDescription(view.servers()),
  inputSchema: (view): JsonSchema => ({
    type: "object",
    properties: {
      method: {
        anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
        description: '"server", "server.tool", or an array of them; omit for the whole catalog',
      },
      query: { type: "string", description: "search all tools by what they do" },
      // Only where call takes a script: the typed API is what scripts are written against.
      ...(view.profile.codeMode !== false && { api: { type: "boolean" } }),
    },
    additionalProperties: false,
  }),
  annotations: { title: "Describe upstream tools", readOnlyHint: true, openWorldHint: false },

  async handle(args, ctx, first): Promise<ToolResult> {
    const query = typeof args.query === "string" ? args.query.trim() : "";
    const method = args.method;
    const noMethod = method === undefined || method === null || method === "";
    const req = await afterFirstLook(
      noMethod || query !== "" ? undefined : Array.isArray(method) ? method : [method],
      ctx,
      first,
    );
    if (args.api !== undefined && args.api !== false) return api(args, ctx, req);
    // What the asking client declared: tools it lacks a capability for are marked.
    const abilities = req.client?.abilities;
    if (query === "" && noMethod) return textResult(renderCatalog(req.view.servers(), abilities));
    const parts: { text: string; error?: true }[] = [];
    if (query !== "") parts.push({ text: search(query, ctx, req.view, abilities) });
    if (!noMethod) {
      const names = Array.isArray(method) ? method : [method];
      if (names.length === 0 || names.some((n) => typeof n !== "string")) {
        return textResult(
          '"method" must be a string or an array of strings, e.g. "everything" or ["everything.echo"].',
          true,
        );
      }
      parts.push(
        ...(await Promise.all(
          (names as string[]).map((n) => describeOne(n.trim(), ctx, req.view, abilities)),
        )),
      );
    }
    // A batch with some unknown names still answers the known ones; it is an error only if nothing was found.
    return textResult(
      parts.map((p) => p.text).join("\n\n"),
      parts.every((p) => p.error),
    );
  },
};

/** describe({ method?, api: true }). */
async function api(
  args: Record<string, unknown>,
  ctx: ProxyContext,
  req: RequestContext,
): Promise<ToolResult> {
  if (req.view.profile.codeMode === false) {
    return textResult(codeModeOff(`profiles.${req.view.profile.name}.codeMode`), true);
  }
  if (args.api !== true) return textResult('"api" must be true or false.', true);
  if (args.query !== undefined) {
    return textResult(
      'api goes with method, not query: describe({ method: "server", api: true }). Search first with describe({ query }).',
      true,
    );
  }
  const method = args.method;
  const names =
    method === undefined || method === null || method === ""
      ? undefined
      : Array.isArray(method)
        ? method
        : [method];
  if (names && (names.length === 0 || names.some((n) => typeof n !== "string"))) {
    return textResult(
      '"method" must be a string or an array of strings, e.g. "everything" or ["everything.echo"].',
      true,
    );
  }
  const answer = await describeApi(
    names?.map((n) => (n as string).trim()),
    ctx,
    req.view,
  );
  return textResult(answer.text, answer.error === true);
}
