/**
 * `apps: "direct"` (a server's key or a profile's): tools that declare an MCP Apps UI are also
 * listed in tools/list as `server__tool`, next to the meta-tools, so a host sees their
 * `_meta.ui` and renders the app. Each is callable under that name; its result is the
 * upstream's as it came (an app reads its tool's content and structuredContent), never cut or
 * re-encoded. An app's own calls of its server's tools, by the upstream's names, are routed too
 * (see directTool).
 */
import { hasApps, toolUi, withAppUris } from "../../registry/apps.js";
import type { CatalogView } from "../../registry/view.js";
import type { ToolDef } from "../../types.js";
import type { MetaTool } from "../context.js";
import { callContext } from "./call.js";

/** One directly listed tool: the name clients see and whose tool it is. */
export interface DirectTool {
  name: string;
  server: string;
  /** The tool as listed: its `_meta.ui.resourceUri` as clients read it (`ui://<server>/…`). */
  tool: ToolDef;
}

/** The name a tool is listed under directly. */
export function directName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

/** The servers of `view` whose apps are direct: with `apps: "direct"`, or all under the profile's. */
function directServers(view: CatalogView) {
  const everyServer = view.profile.apps === "direct";
  return view.servers().filter((s) => everyServer || s.config.apps === "direct");
}

/** The app tools `view` lists directly. */
export function directTools(view: CatalogView): DirectTool[] {
  return directServers(view).flatMap((s) =>
    s.tools
      .filter((t) => toolUi(t) !== undefined)
      .map((t) => ({
        name: directName(s.name, t.name),
        server: s.name,
        tool: withAppUris(s.name, t),
      })),
  );
}

/**
 * The tool a tools/call names directly, if any: a listed `server__tool`, else a tool of that
 * exact name on exactly one server with direct apps. An app calls its own server's tools by the
 * names its server gave them (app-only tools, `_meta.ui.visibility: ["app"]`, are never listed),
 * and to the host that server is mcpx.
 */
export function directTool(view: CatalogView, name: string): DirectTool | undefined {
  const listed = directTools(view).find((d) => d.name === name);
  if (listed) return listed;
  const owners = directServers(view).filter(
    (s) => hasApps(s) && s.tools.some((t) => t.name === name),
  );
  const [owner] = owners;
  const tool = owners.length === 1 ? owner?.tools.find((t) => t.name === name) : undefined;
  return owner && tool && { name, server: owner.name, tool: withAppUris(owner.name, tool) };
}

/** A direct tool's tools/list entry: the upstream's definition under its `server__tool` name. */
export function directEntry(d: DirectTool): Record<string, unknown> {
  return { ...d.tool, name: d.name };
}

/**
 * A tools/call of a directly listed tool, answered as `call` would answer `server.tool` but with
 * the upstream's result unshaped; undefined when `name` lists nothing directly for this view.
 */
export function directMetaTool(view: CatalogView, name: string): MetaTool | undefined {
  const d = directTool(view, name);
  if (!d) return undefined;
  return {
    name: d.name,
    description: () => d.tool.description ?? "",
    inputSchema: d.tool.inputSchema,
    handle: (args, ctx, req) =>
      ctx.executor.call(`${d.server}.${d.tool.name}`, args, callContext(req), { raw: true }),
  };
}
