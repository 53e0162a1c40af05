/**
 * Which tool a `call`'s method names, in the caller's view only: `server.tool` as documented, or
 * a form models commonly write when it names exactly one (server, tool) pair of the view —
 * `server__tool`, `server/tool`, `mcp__<proxy>__server__tool`, `mcp__server__tool`, or a bare
 * tool name. Server and tool names may themselves contain `__` or `/`, so forms are matched
 * against the view's actual pairs, never split apart.
 */
import { signInCommandOf } from "../errors.js";
import { didYouMean, nearest } from "../config/suggest.js";
import type { ServerState } from "../registry/registry.js";
import { matchesUriTemplate } from "../upstream/uri-template.js";
import { parseToolRef } from "../registry/toolref.js";
import type { CatalogSource } from "../registry/view.js";
import type { ToolDef } from "../types.js";
import { approveCommand, findingText, flagged } from "../registry/trust.js";

export type Resolution =
  | {
      server: ServerState;
      tool: ToolDef;
      /** How a non-canonical method was read. */ note?: string;
    }
  | { error: string };

/** Resolve against what the caller may see only: hidden names get no hint that they exist. */
export function resolveTool(
  ref: string,
  catalog: CatalogSource,
  redact: (text: string) => string,
): Resolution {
  const parsed = parseToolRef(ref);
  const named = parsed && catalog.server(parsed.server);
  const exact = named?.tools.find((t) => t.name === parsed?.tool);
  if (named && exact) return usable(named, exact, redact);
  const held = named && parsed && heldTool(named, parsed.tool);
  if (held) return { error: held };
  // A down server fails fast with what we know, so the model stops retrying it.
  if (named && !exact && !available(named)) return { error: unavailable(named, redact) };

  const matches = otherForms(ref, catalog);
  if (matches.length === 1) {
    const [{ server, tool }] = matches as [Match];
    const read = usable(server, tool, redact);
    return "error" in read
      ? read
      : { ...read, note: `method "${ref}" read as "${server.name}.${tool.name}"` };
  }
  if (matches.length > 1) {
    const refs = matches.map((m) => `"${m.server.name}.${m.tool.name}"`);
    return {
      error: `"${ref}" could name ${refs.length} tools: ${refs.join(", ")}. Call again with one of them as method.`,
    };
  }
  return { error: notFound(ref, parsed, named, catalog) };
}

/**
 * Why `tool` of `server` is held out of the catalog (changed, new or suspicious under trust
 * `hold`), naming what changed and the commands that review and approve it; undefined when it
 * is not held. Findings are already narrowed to the caller's view.
 */
function heldTool(server: ServerState, tool: string): string | undefined {
  const report = server.trust;
  const finding = report?.findings.find((f) => f.kind === "tool" && f.name === tool);
  if (!report?.held || !finding || !flagged(finding)) return undefined;
  const ref = `${server.name}.${tool}`;
  return `Tool "${ref}" is held: ${findingText(finding)}. mcpx does not serve it until a person reviews it: \`mcpx trust diff ${JSON.stringify(report.config)} ${ref}\`, then \`${approveCommand(report.config, ref)}\`. Tell the user; do not retry.`;
}

interface Match {
  server: ServerState;
  tool: ToolDef;
}

/** The (server, tool) pairs of the view that `ref` names in one of the forms models write. */
function otherForms(ref: string, catalog: CatalogSource): Match[] {
  const out: Match[] = [];
  for (const server of catalog.servers()) {
    for (const tool of server.tools) {
      const joined = `${server.name}__${tool.name}`;
      const hit =
        ref === joined ||
        ref === `${server.name}/${tool.name}` ||
        ref === tool.name ||
        // mcp__server__tool (the upstream's own name in a client) or mcp__<proxy>__server__tool.
        (ref.startsWith("mcp__") &&
          (ref === `mcp__${joined}` ||
            (ref.endsWith(`__${joined}`) && ref.length > `mcp____${joined}`.length)));
      if (hit) out.push({ server, tool });
    }
  }
  return out;
}

function available(server: ServerState): boolean {
  return !(server.status === "down" || (server.status === "starting" && server.tools.length === 0));
}

function usable(server: ServerState, tool: ToolDef, redact: (t: string) => string): Resolution {
  return available(server) ? { server, tool } : { error: unavailable(server, redact) };
}

function notFound(
  ref: string,
  parsed: ReturnType<typeof parseToolRef>,
  named: ServerState | undefined,
  catalog: CatalogSource,
): string {
  const servers = catalog.servers();
  if (!parsed) {
    const guesses = nearest(
      ref,
      servers.flatMap((s) => s.tools.map((t) => `${s.name}.${t.name}`)),
    );
    return `"${ref}" is not a tool ref: use "server.tool".${didYouMean(guesses)} describe() lists every tool.`;
  }
  if (!named) {
    const guesses = nearest(
      parsed.server,
      servers.map((s) => s.name),
    );
    return `Unknown server "${parsed.server}".${didYouMean(guesses)} Servers: ${servers.map((s) => s.name).join(", ")}.`;
  }
  const guesses = nearest(
    parsed.tool,
    named.tools.map((t) => t.name),
  ).map((t) => `${named.name}.${t}`);
  return `Unknown tool "${parsed.tool}" on server "${named.name}".${didYouMean(guesses)} describe("${named.name}") lists its tools.`;
}

/** Why a server's tools cannot be called now, and when that may change. */
export function unavailable(server: ServerState, redact: (text: string) => string): string {
  if (server.status === "starting") {
    return `Server "${server.name}" is still starting. Try again in a few seconds.`;
  }
  const signIn = signInCommandOf(server.error);
  if (server.status === "down" && signIn) {
    return `Server "${server.name}" needs sign-in: ask the user to run \`${signIn}\` in a terminal (it opens a browser). Its tools arrive without restarting mcpx; other servers keep working.`;
  }
  const h = server.health;
  const since = h.downSince !== undefined ? ` since ${new Date(h.downSince).toISOString()}` : "";
  const error = server.error ? ` (last error: ${redact(server.error)})` : "";
  const retry =
    h.nextRetryAt !== undefined
      ? ` mcpx retries it in ${Math.max(0, Math.ceil((h.nextRetryAt - Date.now()) / 1000))} s.`
      : "";
  return `Server "${server.name}" is down${since}${error}.${retry} Its tools are unavailable until then; other servers keep working.`;
}

/** The server to read `uri` from: the one named, or the only one listing it (or a matching template). */
export function resourceServer(
  uri: string,
  serverName: string | undefined,
  catalog: CatalogSource,
): { server: ServerState } | { error: string } {
  if (serverName !== undefined) {
    const server = catalog.server(serverName);
    if (!server)
      return {
        error: `Unknown server "${serverName}". Servers: ${catalog
          .servers()
          .map((s) => s.name)
          .join(", ")}.`,
      };
    return { server };
  }
  const servers = catalog.servers();
  let owners = servers.filter((s) => s.resources.some((r) => r.uri === uri));
  if (owners.length === 0)
    owners = servers.filter((s) =>
      s.resourceTemplates.some((t) => matchesUriTemplate(t.uriTemplate, uri)),
    );
  if (owners.length === 1 && owners[0]) return { server: owners[0] };
  if (owners.length > 1) {
    return {
      error: `${uri} is offered by several servers (${owners.map((s) => s.name).join(", ")}). Pass "server" to choose one.`,
    };
  }
  return {
    error: `No server lists the resource ${uri}. resources() lists what is available; pass "server" to read from a specific one anyway.`,
  };
}
