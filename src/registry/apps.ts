/**
 * MCP Apps (extension `io.modelcontextprotocol/ui`): a tool declares an interactive UI with
 * `_meta.ui.resourceUri` (older servers: `_meta["ui/resourceUri"]`), a `ui://` resource the host
 * reads and renders. Behind mcpx every server's `ui://` URIs share one namespace, so each is
 * shown as `ui://<server>/<rest>` (the scheme kept, hosts check it) and read back from its server
 * as `ui://<rest>`; a tool's declaration is rewritten to match. Everything else in `_meta`
 * (the resource's `_meta.ui` csp and permissions, a tool's visibility) passes through unchanged.
 */
import { isRecord } from "../json.js";
import { UI_EXTENSION, type ReadResourceResult, type ResourceDef, type ToolDef } from "../types.js";
import type { ServerState } from "./types.js";

export const UI_SCHEME = "ui://";

/** The flat key older MCP Apps servers declare the UI with. */
const LEGACY_KEY = "ui/resourceUri";

/** `ui://weather/view.html` of `forecast` → `ui://forecast/weather/view.html`; other URIs as given. */
export function appUri(server: string, uri: string): string {
  return uri.startsWith(UI_SCHEME) ? `${UI_SCHEME}${server}/${uri.slice(UI_SCHEME.length)}` : uri;
}

/** `ui://forecast/weather/view.html` → forecast's `ui://weather/view.html`; undefined for others. */
export function splitAppUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(UI_SCHEME)) return undefined;
  const rest = uri.slice(UI_SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  return { server: rest.slice(0, slash), uri: `${UI_SCHEME}${rest.slice(slash + 1)}` };
}

/** The `ui://` resource a tool declares, as its server gave it; undefined when it declares none. */
export function toolUi(tool: ToolDef): string | undefined {
  const meta = tool._meta;
  if (!isRecord(meta)) return undefined;
  const ui = isRecord(meta.ui) ? meta.ui.resourceUri : undefined;
  const uri = typeof ui === "string" ? ui : meta[LEGACY_KEY];
  return typeof uri === "string" && uri.startsWith(UI_SCHEME) ? uri : undefined;
}

/** A tool of `server` with its UI declaration naming the URI clients see; others unchanged. */
export function withAppUris(server: string, tool: ToolDef): ToolDef {
  if (toolUi(tool) === undefined || !isRecord(tool._meta)) return tool;
  const meta: Record<string, unknown> = { ...tool._meta };
  if (isRecord(meta.ui) && typeof meta.ui.resourceUri === "string")
    meta.ui = { ...meta.ui, resourceUri: appUri(server, meta.ui.resourceUri) };
  if (typeof meta[LEGACY_KEY] === "string") meta[LEGACY_KEY] = appUri(server, meta[LEGACY_KEY]);
  return { ...tool, _meta: meta };
}

/** A resource of `server` as clients see it: a `ui://` URI under the server's name. */
export function appResource(server: string, resource: ResourceDef): ResourceDef {
  return resource.uri.startsWith(UI_SCHEME)
    ? { ...resource, uri: appUri(server, resource.uri) }
    : resource;
}

/** A resources/read result of `server` with its `ui://` contents under the server's name. */
export function appContents(server: string, result: ReadResourceResult): ReadResourceResult {
  if (!Array.isArray(result.contents)) return result;
  return {
    ...result,
    contents: result.contents.map((c) =>
      isRecord(c) && typeof c.uri === "string" && c.uri.startsWith(UI_SCHEME)
        ? { ...c, uri: appUri(server, c.uri) }
        : c,
    ),
  };
}

/** Whether the server said it speaks MCP Apps (its capabilities' `extensions`). */
export function declaresApps(s: ServerState): boolean {
  const extensions = s.identity?.capabilities.extensions;
  return isRecord(extensions) && extensions[UI_EXTENSION] !== undefined;
}

/** Whether a server has any tool with a UI (it may not declare the extension, older ones do not). */
export function hasApps(s: ServerState): boolean {
  return declaresApps(s) || s.tools.some((t) => toolUi(t) !== undefined);
}
