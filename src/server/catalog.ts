/**
 * Text renderings of the catalog for the model. Plain, compact text: every character here is
 * paid for in the model's context.
 */
import { firstSentence, signature } from "../compression/signature.js";
import type { CompiledSchema } from "../compression/schema.js";
import type { ServerState } from "../registry/registry.js";
import type { ToolAnnotations, ToolDef } from "../types.js";

/** Claude Code cuts tool descriptions at 2 KB; stay under it with room to spare. */
export const DESCRIPTION_LIMIT = 2_000;

const USAGE =
  'Gateway to the tools of several MCP servers. describe("server") lists a server\'s tools with signatures; ' +
  'describe("server.tool") gives a tool\'s description and input schema; describe({query}) searches all tools; ' +
  "arrays are accepted. Then run a tool with call.";

const LARGE_CATALOG_HINT =
  'Too many tools to list here: use describe({query: "what you want to do"}) or describe("server").';

/** One line about a server: its configured description, else what it said about itself. */
export function serverSummary(s: ServerState): string {
  if (s.config.description) return s.config.description;
  const fromServer = s.identity?.title ?? firstSentence(s.identity?.instructions, 100);
  return fromServer || s.identity?.name || "";
}

function statusNote(s: ServerState): string {
  if (s.status === "ready") return "";
  return s.status === "failed"
    ? ` [FAILED: ${firstSentence(s.error ?? "unknown error", 80)}]`
    : ` [${s.status}]`;
}

/**
 * The description of the describe tool: how to use the proxy plus the most catalog that fits
 * in DESCRIPTION_LIMIT — full tool names, else servers with tool counts.
 */
export function describeDescription(servers: readonly ServerState[]): string {
  const full =
    `${USAGE}\nTools:\n` +
    servers
      .map((s) => `${s.name}${statusNote(s)}: ${s.tools.map((t) => t.name).join(", ")}`)
      .join("\n");
  if (full.length <= DESCRIPTION_LIMIT) return full;
  const head = `${USAGE}\n${LARGE_CATALOG_HINT}\nServers:\n`;
  const withSummaries = servers.map((s) => {
    const summary = serverSummary(s);
    return `${s.name} (${s.tools.length} tools)${statusNote(s)}${summary ? `: ${firstSentence(summary, 60)}` : ""}`;
  });
  let text = head + withSummaries.join("\n");
  if (text.length > DESCRIPTION_LIMIT) {
    text = head + servers.map((s) => `${s.name} (${s.tools.length})`).join(", ");
  }
  return text.length <= DESCRIPTION_LIMIT ? text : text.slice(0, DESCRIPTION_LIMIT - 1) + "…";
}

/** describe({query}): the best matches with one-line signatures. */
export function renderSearch(
  query: string,
  hits: readonly { server: ServerState; tool: ToolDef }[],
): string {
  if (hits.length === 0) {
    return `No tool matches "${query}". Try other words, or describe() for the whole catalog.`;
  }
  return [
    `Tools matching "${query}" (best first):`,
    ...hits.map(
      ({ server, tool }) =>
        `${server.name}.${signature(tool.name, tool.inputSchema)}${annotationTag(tool.annotations)} — ${firstSentence(tool.description)}`,
    ),
  ].join("\n");
}

/** describe(): every server with status and summary, every tool with its first sentence. */
export function renderCatalog(servers: readonly ServerState[]): string {
  return servers
    .map((s) => {
      const head = `## ${s.name} (${s.status === "ready" ? `${s.tools.length} tools` : s.status})${statusNote(s)}${serverSummary(s) ? ` — ${serverSummary(s)}` : ""}`;
      const tools = s.tools.map((t) => `${s.name}.${t.name} — ${firstSentence(t.description)}`);
      return [head, ...tools].join("\n");
    })
    .join("\n\n");
}

/** describe("server"): its tools with compact signatures and first-sentence descriptions. */
export function renderServer(s: ServerState): string {
  const lines = [`## ${s.name}${statusNote(s)}${serverSummary(s) ? ` — ${serverSummary(s)}` : ""}`];
  if (s.status === "failed") lines.push("Its tools are unavailable until it starts.");
  for (const t of s.tools) {
    lines.push(
      `${s.name}.${signature(t.name, t.inputSchema)}${annotationTag(t.annotations)} — ${firstSentence(t.description)}`,
    );
  }
  if (s.resources.length + s.resourceTemplates.length > 0) {
    lines.push(
      `(${s.resources.length} resources, ${s.resourceTemplates.length} templates: see the resources tool)`,
    );
  }
  return lines.join("\n");
}

/** describe("server.tool"): full description, input schema, annotations, output schema. */
export function renderTool(
  server: string,
  tool: ToolDef,
  input: CompiledSchema,
  output?: CompiledSchema,
): string {
  const lines = [`## ${server}.${tool.name}${tool.title ? ` (${tool.title})` : ""}`];
  if (tool.description) lines.push(tool.description.trim());
  const hints = annotationList(tool.annotations);
  if (hints) lines.push(`Annotations: ${hints}`);
  lines.push(
    `Input (${input.format === "typescript" ? "TypeScript" : "JSON Schema"}):`,
    input.text,
  );
  if (output)
    lines.push(
      `Output (${output.format === "typescript" ? "TypeScript" : "JSON Schema"}):`,
      output.text,
    );
  lines.push(`Run: call({ method: "${server}.${tool.name}", arguments: {...} })`);
  return lines.join("\n");
}

function annotationTag(a: ToolAnnotations | undefined): string {
  if (!a) return "";
  if (a.readOnlyHint) return " [read-only]";
  if (a.destructiveHint) return " [destructive]";
  return "";
}

function annotationList(a: ToolAnnotations | undefined): string {
  if (!a) return "";
  return Object.entries(a)
    .filter(([k, v]) => k !== "title" && v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");
}
