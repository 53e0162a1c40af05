/**
 * `apps: "direct"` (a server's key or a profile's): tools that declare an MCP Apps UI are also
 * listed in tools/list as `server__tool`, next to the meta-tools, so a host sees their
 * `_meta.ui` and renders the app. Each is callable under that name; its result is the
 * upstream's as it came (an app reads its tool's content and structuredContent), never cut or
 * re-encoded.
 */
import { toolUi, withAppUris } from "../../registry/apps.js";
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

/** The app tools `view` lists directly: of servers with `apps: "direct"`, or all under the profile's. */
export function directTools(view: CatalogView): DirectTool[] {
  const everyServer = view.profile.apps === "direct";
  return view
    .servers()
    .filter((s) => everyServer || s.config.apps === "direct")
    .flatMap((s) =>
      s.tools
        .filter((t) => toolUi(t) !== undefined)
        .map((t) => ({
          name: directName(s.name, t.name),
          server: s.name,
          tool: withAppUris(s.name, t),
        })),
    );
}

/** The directly listed tool a tools/call names, if any. */
export function directTool(view: CatalogView, name: string): DirectTool | undefined {
  return directTools(view).find((d) => d.name === name);
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
