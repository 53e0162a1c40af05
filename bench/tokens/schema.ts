/**
 * R_schema: describe("server.tool") through a running proxy versus the tool's own JSON
 * definition, per tool, and the statistics the report prints.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { tidyText } from "../../src/compression/text.js";
import { apiForm, meta, tokens } from "../count.js";
import type { BenchProxy } from "../proxy.js";
import { percentile, stats } from "../lib/stats.js";

export interface SchemaRow {
  ref: string;
  server: string;
  /** The tool's JSON definition: API form, plus outputSchema when it has one. */
  defTokens: number;
  /** The API form alone (name, description, inputSchema). */
  apiTokens: number;
  describeTokens: number;
  ratio: number;
  typescript: boolean;
  /** Tokens of the definition's inputSchema as compact JSON. */
  inputJsonTokens: number;
  /** Tokens of the input schema as describe renders it (TypeScript or JSON). */
  inputTokens: number;
  /** Tokens of the description as a JSON string (in the definition) and as describe shows it. */
  descriptionJsonTokens: number;
  descriptionTokens: number;
  /** Parts of the describe answer the API form has no counterpart for. */
  annotationTokens: number;
  outputTokens: number;
  runTokens: number;
}

/** The parts of a describe answer, told apart by the lines renderTool writes around them. */
interface AnswerParts {
  description: string;
  annotations: string;
  input: string;
  output: string;
  run: string;
}

/**
 * Split a describe answer (see renderTool): a heading with hint tags, the description (known:
 * the tool's own), the input schema, then the output schema (`Returns ` / `Output JSON Schema:`).
 * Missing parts are empty strings.
 */
function answerParts(text: string, description: string): AnswerParts {
  const [heading = "", ...body] = text.split("\n");
  let rest = body.join("\n");
  const desc = tidyText(description);
  if (desc && rest.startsWith(desc)) rest = rest.slice(desc.length).replace(/^\n/, "");
  const out = rest.search(/^(Returns |Output JSON Schema: )/m);
  return {
    description: desc && text.includes(desc) ? desc : "",
    annotations: / \[[^\]]+\]$/.exec(heading)?.[0] ?? "",
    input: out < 0 ? rest : rest.slice(0, out).replace(/\n$/, ""),
    output: out < 0 ? "" : rest.slice(out),
    run: "",
  };
}

export async function measureSchema(
  p: BenchProxy,
  servers: string[],
  toolsOf: (name: string) => Tool[],
): Promise<SchemaRow[]> {
  const rows: SchemaRow[] = [];
  for (const server of servers) {
    for (const tool of toolsOf(server)) {
      const ref = `${server}.${tool.name}`;
      const text = await meta(p, "describe", { method: ref });
      // Like for like: describe shows the output schema, so the definition it is weighed
      // against includes the tool's outputSchema when it has one (the API form alone does not).
      const defTokens = tokens(
        tool.outputSchema
          ? JSON.stringify({ ...JSON.parse(apiForm(tool)), outputSchema: tool.outputSchema })
          : apiForm(tool),
      );
      const apiTokens = tokens(apiForm(tool));
      const describeTokens = tokens(text);
      const parts = answerParts(text, tool.description ?? "");
      const count = (part: string) => (part ? tokens(part) : 0);
      rows.push({
        ref,
        server,
        defTokens,
        apiTokens,
        describeTokens,
        ratio: describeTokens / defTokens,
        typescript: !text.includes("\nInput JSON Schema: "),
        inputJsonTokens: tokens(JSON.stringify(tool.inputSchema)),
        descriptionJsonTokens: count(JSON.stringify(tool.description ?? "")),
        descriptionTokens: count(parts.description),
        annotationTokens: count(parts.annotations),
        inputTokens: count(parts.input),
        outputTokens: count(parts.output),
        runTokens: count(parts.run),
      });
    }
  }
  return rows;
}

export function schemaStats(rows: readonly SchemaRow[]) {
  const ratios = stats(rows.map((r) => r.ratio));
  return {
    tools: rows.length,
    median: ratios.p50,
    p90: ratios.p90,
    max: ratios.max,
    above: rows.filter((r) => r.ratio > 1).length,
    typescript: rows.filter((r) => r.typescript).length,
    defTokens: rows.reduce((s, r) => s + r.defTokens, 0),
    describeTokens: rows.reduce((s, r) => s + r.describeTokens, 0),
    inputJsonTokens: rows.reduce((s, r) => s + r.inputJsonTokens, 0),
    inputTokens: rows.reduce((s, r) => s + r.inputTokens, 0),
    outputTokens: rows.reduce((s, r) => s + r.outputTokens, 0),
    descriptionJsonTokens: rows.reduce((s, r) => s + r.descriptionJsonTokens, 0),
    descriptionTokens: rows.reduce((s, r) => s + r.descriptionTokens, 0),
    annotationTokens: rows.reduce((s, r) => s + r.annotationTokens, 0),
    runTokens: rows.reduce((s, r) => s + r.runTokens, 0),
    withOutput: rows.filter((r) => r.outputTokens > 0).length,
    /** Median of the ratio with the output schema left out of the answer. */
    medianNoOutput: percentile(
      rows.map((r) => (r.describeTokens - r.outputTokens) / r.apiTokens),
      50,
    ),
    /** Max of (answer without its output schema) / API form: the other like-for-like pairing. */
    maxNoOutput: Math.max(...rows.map((r) => (r.describeTokens - r.outputTokens) / r.apiTokens)),
    /** Median of input schema as rendered / input schema as JSON. */
    medianInput: percentile(
      rows.map((r) => r.inputTokens / r.inputJsonTokens),
      50,
    ),
  };
}
