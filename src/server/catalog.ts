/**
 * Text renderings of the catalog for the model. Plain, compact text: every character here is
 * paid for in the model's context.
 */
import { signInCommandOf } from "../errors.js";
import { firstSentence, signature } from "../compression/signature.js";
import type { CompiledSchema } from "../compression/schema.js";
import { tidyText } from "../compression/text.js";
import { lacking, lackingText, type ClientNeed } from "../registry/capability-tools.js";
import { promptName } from "../registry/lists.js";
import { treatedAs } from "../registry/notes.js";
import type { ServerState } from "../registry/registry.js";
import { findingText, flagged } from "../registry/trust.js";
import { escapeInvisible } from "../registry/trust-rules.js";
import type { PromptDef, ToolAnnotations, ToolDef } from "../types.js";
import type { ClientAbilities } from "../upstream/channel.js";

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
  // A catalog from the cache is usable while the server starts: the tool list shows it as it
  // will be, so a live catalog equal to the cached one changes nothing for clients.
  if (s.status === "ready" || (s.status === "starting" && s.catalogFrom === "cache")) return "";
  const signIn = s.status === "down" ? signInCommandOf(s.error) : undefined;
  if (signIn) return ` [needs sign-in: run ${signIn}]`;
  const why = firstSentence(s.error ?? "unknown error", 80);
  if (s.status === "down") return ` [DOWN: ${why}]`;
  return s.status === "degraded" ? ` [degraded: ${why}]` : ` [${s.status}]`;
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

/**
 * What the asking client lacks to use `tool` of `s` (capabilities the upstream lists it only
 * with, see registry/capability-tools.ts); none when the client is not known.
 */
export function lacks(s: ServerState, tool: ToolDef, abilities: ClientAbilities | undefined) {
  if (!abilities) return [];
  // Own keys only: a tool may be named `toString`.
  const needs = s.needs && Object.hasOwn(s.needs, tool.name) ? s.needs[tool.name] : undefined;
  return lacking(needs, abilities, (s.config.roots?.length ?? 0) > 0);
}

/** ` [needs sampling, which this client did not declare]` after a tool's line, or nothing. */
function lackTag(s: ServerState, tool: ToolDef, abilities: ClientAbilities | undefined): string {
  const missing = lacks(s, tool, abilities);
  return missing.length > 0 ? ` [${lackingText(missing)}]` : "";
}

/** describe({query}): the best matches with one-line signatures. */
export function renderSearch(
  query: string,
  hits: readonly { server: ServerState; tool: ToolDef }[],
  starting: readonly string[] = [],
  abilities?: ClientAbilities,
): string {
  // Servers still starting were not searched: "no match" would be a false answer.
  const pending =
    starting.length > 0
      ? `${starting.length} server${starting.length === 1 ? "" : "s"} still starting (${starting.join(", ")}), not searched yet: ask again shortly.`
      : "";
  if (hits.length === 0) {
    if (pending) return `No tool matches "${query}" among the servers ready. ${pending}`;
    return `No tool matches "${query}". Try other words, or describe() for the whole catalog.`;
  }
  return [
    `Tools matching "${query}" (best first):`,
    ...hits.map(
      ({ server, tool }) =>
        `${server.name}.${signature(tool.name, tool.inputSchema)}${hintTags(tool.annotations)}${lackTag(server, tool, abilities)} — ${shown(tool.description)}`,
    ),
    ...(pending ? [pending] : []),
  ].join("\n");
}

/** Where describe() says a server's catalog is from the cache, or that it is not running. */
function cacheNote(s: ServerState): string {
  if (s.status === "starting" && s.catalogFrom === "cache")
    return " [starting; catalog from cache]";
  return s.running === false && s.status === "ready" ? " [not running: starts on first use]" : "";
}

/** describe(): every server with status and summary, every tool with its first sentence. */
export function renderCatalog(
  servers: readonly ServerState[],
  abilities?: ClientAbilities,
): string {
  return servers
    .map((s) => {
      const counts = `${s.tools.length} tools${s.prompts.length > 0 ? `, ${s.prompts.length} prompts` : ""}`;
      // The status is said once, by statusNote; counts only where the tools are there.
      const listed =
        s.status === "ready" ||
        s.status === "degraded" ||
        s.tools.length > 0 ||
        s.catalogFrom === "cache";
      const head = `## ${s.name}${listed ? ` (${counts})` : ""}${statusNote(s)}${cacheNote(s)}${serverSummary(s) ? ` — ${serverSummary(s)}` : ""}`;
      const tools = s.tools.map(
        (t) => `${s.name}.${t.name}${lackTag(s, t, abilities)} — ${shown(t.description)}`,
      );
      return [head, ...tools, ...trustLines(s)].join("\n");
    })
    .join("\n\n");
}

/** describe("server"): its tools with compact signatures and first-sentence descriptions. */
export function renderServer(s: ServerState, abilities?: ClientAbilities): string {
  const lines = [
    `## ${s.name}${statusNote(s)}${cacheNote(s)}${s.identity?.era ? ` (MCP ${s.identity.protocolVersion ?? "?"}, ${s.identity.era})` : ""}${serverSummary(s) ? ` — ${serverSummary(s)}` : ""}`,
  ];
  const signIn = s.status === "down" ? signInCommandOf(s.error) : undefined;
  if (signIn) {
    lines.push(
      `Needs sign-in: the user runs \`${signIn}\` in a terminal; its tools then arrive without restarting mcpx.`,
    );
  } else if (s.status === "down") {
    // The header keeps only the error's first sentence; asked about this server, give all of it.
    if (s.error) lines.push(`Error: ${s.error}`);
    lines.push("Its tools are unavailable until it is back; mcpx retries it.");
  }
  if (s.status === "starting" && s.tools.length === 0) {
    lines.push("Still starting: its tools are listed once it is ready; a call to it waits for it.");
  }
  for (const t of s.tools) {
    lines.push(
      `${s.name}.${signature(t.name, t.inputSchema)}${hintTags(t.annotations)}${lackTag(s, t, abilities)} — ${shown(t.description)}`,
    );
  }
  if (s.prompts.length > 0) {
    lines.push("Prompts (a person runs them; listed to clients as server__prompt):");
    for (const p of s.prompts) lines.push(promptLine(s.name, p));
  }
  if (s.resources.length + s.resourceTemplates.length > 0) {
    lines.push(
      `(${s.resources.length} resources, ${s.resourceTemplates.length} templates: see the resources tool)`,
    );
  }
  lines.push(...noteLines(s), ...trustLines(s));
  return lines.join("\n");
}

/** A description's first sentence, invisible and bidi control characters shown escaped. */
function shown(description: string | undefined): string {
  return escapeInvisible(firstSentence(description));
}

/**
 * What the trust pins say about a server's definitions (src/registry/trust.ts): held ones are not
 * in the list above; under `warn` they are, and this says they changed.
 */
export function trustLines(s: ServerState, only?: string): string[] {
  const report = s.trust;
  if (!report) return [];
  return report.findings
    .filter((f) => only === undefined || (f.kind === "tool" && f.name === only))
    .map((f) => {
      const ref = `${s.name}.${f.name}`;
      const outcome = !flagged(f)
        ? ""
        : report.held
          ? " Held: not served until a person approves it (mcpx trust approve)."
          : " Served anyway (trust: warn); a person can review it with mcpx trust diff.";
      return `Trust: ${f.kind} ${ref} ${escapeInvisible(findingText(f))}.${outcome}`;
    });
}

/** What an upstream failed without being down: each optional request, treated as empty. */
function noteLines(s: ServerState): string[] {
  return Object.entries(s.notes ?? {}).map(
    ([method, why]) => `Note: ${method} failed (${firstSentence(why, 120)}); ${treatedAs(method)}.`,
  );
}

/** `everything__args-prompt(city, state?) — A prompt with two arguments`: a prompt as a signature. */
function promptLine(server: string, p: PromptDef): string {
  const args = (p.arguments ?? []).map((a) => `${a.name}${a.required === true ? "" : "?"}`);
  const about = firstSentence(p.description) || p.title || "";
  return `${promptName(server, p.name)}(${args.join(", ")})${about ? ` — ${about}` : ""}`;
}

/** `create_issue` → `CreateIssueInput`: a readable, valid TypeScript type name for a tool's schema. */
export function schemaTypeName(tool: string, suffix: "Input" | "Output"): string {
  const words = tool.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const base = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("") || "Tool";
  return `${/^[0-9]/.test(base) ? `T${base}` : base}${suffix}`;
}

/**
 * describe("server.tool"): full description, annotation hints, input schema and output schema.
 * Every token here is paid per lookup, so no labels the declaration does not need.
 */
export function renderTool(
  server: string,
  tool: ToolDef,
  input: CompiledSchema,
  output?: CompiledSchema,
  missing: readonly ClientNeed[] = [],
): string {
  const lines = [`${server}.${tool.name}${hintTags(tool.annotations)}`];
  if (missing.length > 0) {
    const what = lackingText(missing);
    lines.push(
      `Note: this tool ${what}; the server lists it only to clients that do, and calls to it fail here.`,
    );
  }
  const description = escapeInvisible(
    tidyText(tool.description ?? "") || tool.title || tool.annotations?.title || "",
  );
  if (description) lines.push(description);
  lines.push(
    input.format === "typescript"
      ? argumentLines(input.text, input.root)
      : `Input JSON Schema: ${input.text}`,
  );
  if (output) {
    lines.push(
      output.format === "typescript"
        ? `Returns ${anonymous(output.text)}`
        : `Output JSON Schema: ${output.text}`,
    );
  }
  return lines.join("\n");
}

/**
 * The input declaration as argument lines: `interface CreateIssueInput { ... }` loses its
 * wrapper (the heading names the tool), leaving `owner: string // Repository owner` lines first.
 * Declarations of other types the input refers to follow unchanged.
 */
function argumentLines(declaration: string, root: string | undefined): string {
  const lines = declaration.split("\n");
  const start = lines.findIndex((l) =>
    root === undefined ? /^interface [\w$]+ \{$/.test(l) : l === `interface ${root} {`,
  );
  if (start < 0) return declaration;
  let depth = 1;
  for (let i = start + 1; i < lines.length; i++) {
    // Braces inside string literals and trailing comments are not structure.
    const code = (lines[i] ?? "").replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\/\/.*$/, "");
    for (const c of code) depth += c === "{" ? 1 : c === "}" ? -1 : 0;
    if (depth === 0) {
      if (lines[i] !== "}") return declaration; // `} & Other`: not a plain object, keep as is
      const body = lines.slice(start + 1, i);
      const rest = [...lines.slice(0, start), ...lines.slice(i + 1)];
      return [...(body.length > 0 ? body : ["(no arguments)"]), ...rest].join("\n");
    }
  }
  return declaration;
}

/** `interface CreateIssueInput {` → `{`: the heading already names the tool. */
function anonymous(declaration: string): string {
  return declaration.replace(/^interface [\w$]+ \{/, "{");
}

/**
 * The annotation hints a model acts on, as short tags: ` [readonly]`, ` [destructive]`,
 * ` [idempotent]`. For a read-only tool the spec gives destructive and idempotent hints no
 * meaning, so none follow it; the open-world hint rarely changes what a model should do.
 */
function hintTags(a: ToolAnnotations | undefined): string {
  if (!a) return "";
  // "readonly" is one token where "read-only" is two, and every model knows the TypeScript word.
  if (a.readOnlyHint === true) return " [readonly]";
  const tags = [
    a.destructiveHint === true && "destructive",
    a.idempotentHint === true && "idempotent",
  ].filter((t): t is string => typeof t === "string");
  return tags.length > 0 ? ` [${tags.join(", ")}]` : "";
}
