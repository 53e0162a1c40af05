/**
 * describe({ method, api: true }): servers' tools as the typed API a code-mode script sees, one
 * TypeScript declaration of its `servers` object, argument and result types from the schema
 * compiler. An object type rather than a `declare namespace` per server: names such as
 * `get-sum` or `brave-search` cannot name a namespace or a function, and are common.
 */
import { firstSentence } from "../compression/signature.js";
import type { CompiledSchema, SchemaCompiler } from "../compression/schema.js";
import { tidyText } from "../compression/text.js";
import type { ServerState } from "../registry/registry.js";
import type { ToolDef } from "../types.js";
import { schemaTypeName, serverSummary } from "./catalog.js";

/** One server and the tools of it to declare. */
export interface ApiServer {
  server: ServerState;
  tools: readonly ToolDef[];
  /** Full descriptions (a tool asked for by name) instead of first sentences. */
  full?: boolean;
}

const HEADER =
  "// In call({ script }): await servers.<server>.<tool>(args) resolves to the tool's structured result, else its JSON text parsed, else { text, content }; a failed call throws an Error with the tool's message. console.log lines come back with the return value.";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A member name as a script writes it: bare when it is an identifier, else quoted. */
function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** The declaration of `servers` for these servers' tools. */
export async function renderApi(
  servers: readonly ApiServer[],
  schemas: SchemaCompiler,
): Promise<string> {
  const shared: string[] = [];
  const blocks: string[] = [];
  for (const { server, tools, full } of servers) {
    // A summary that only repeats the name (the server's own name for itself) says nothing.
    const summary = serverSummary(server) === server.name ? "" : serverSummary(server);
    const lines = [
      `${summary ? `  // ${firstSentence(summary, 100)}\n` : ""}  ${key(server.name)}: {`,
    ];
    for (const tool of tools) {
      const [input, output] = await Promise.all([
        schemas.compile(tool.inputSchema, schemaTypeName(tool.name, "Input")),
        tool.outputSchema
          ? schemas.compile(tool.outputSchema, schemaTypeName(tool.name, "Output"))
          : undefined,
      ]);
      const args = typeOf(input, shared);
      const result = output ? typeOf(output, shared) : "unknown";
      const optional = argsOptional(tool) ? "?" : "";
      const about = full ? tidyText(tool.description ?? "") : firstSentence(tool.description);
      if (about) lines.push(`    /** ${about.replaceAll("*/", "*\\/")} */`);
      lines.push(`    ${key(tool.name)}(args${optional}: ${args}): Promise<${result}>;`);
    }
    lines.push("  };");
    blocks.push(lines.join("\n"));
  }
  return [HEADER, ...shared, "declare const servers: {", ...blocks, "};"].join("\n");
}

/** Whether a call may leave `args` out: nothing is required, at the top or in a branch. */
function argsOptional(tool: ToolDef): boolean {
  const schema = tool.inputSchema;
  const required = Array.isArray(schema.required) ? schema.required : [];
  return required.length === 0 && !("oneOf" in schema || "anyOf" in schema || "allOf" in schema);
}

/**
 * The type to write in place: the root declaration's own body (`{ … }`, or a type alias's right
 * side). Other declarations it refers to are added to `shared`, once each.
 */
function typeOf(compiled: CompiledSchema, shared: string[]): string {
  if (compiled.format === "json") return `object /* JSON Schema: ${compiled.text} */`;
  const lines = compiled.text.split("\n");
  const root = compiled.root;
  const start = lines.findIndex(
    (l) => l === `interface ${root} {` || l.startsWith(`type ${root} = `),
  );
  const end = start < 0 ? -1 : declarationEnd(lines, start);
  if (start < 0 || end < 0) {
    addShared(shared, compiled.text);
    return root ?? "unknown";
  }
  const rest = [...lines.slice(0, start), ...lines.slice(end + 1)].join("\n");
  if (rest) addShared(shared, rest);
  const own = lines.slice(start, end + 1);
  const first = own[0]!.startsWith("interface ") ? "{" : own[0]!.replace(`type ${root} = `, "");
  const body = [first, ...own.slice(1)];
  if (body.length === 2 && body[0] === "{" && body[1] === "}") return "{}";
  const last = body.length - 1;
  return body.map((l, i) => (i === 0 ? l : i === last ? `    ${l}` : `      ${l}`)).join("\n");
}

function addShared(shared: string[], text: string): void {
  if (!shared.includes(text)) shared.push(text);
}

/** The line where the declaration starting at `start` closes its last bracket. */
function declarationEnd(lines: readonly string[], start: number): number {
  let depth = 0;
  for (let i = start; i < lines.length; i++) {
    // Brackets inside string literals and trailing comments are not structure.
    const code = (lines[i] ?? "").replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\/\/.*$/, "");
    for (const c of code) depth += "{([".includes(c) ? 1 : "})]".includes(c) ? -1 : 0;
    if (depth === 0) return i;
  }
  return -1;
}
