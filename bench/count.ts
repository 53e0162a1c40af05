/** Token counting shared by the token benchmarks: o200k_base, as the model sees text. */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { apiForm } from "../src/economy/tokens.js";
import type { BenchProxy } from "./proxy.js";
import { callText, ROOT } from "./upstreams.js";

export function tokens(text: string): number {
  return countTokens(text);
}

/**
 * The API form of a tool definition, as a host sends it to the model: the same definition
 * `mcpx stats` counts, so the two numbers cannot drift apart.
 */
export { apiForm };

export function definitionTokens(tools: readonly Tool[]): number {
  return tools.reduce((sum, t) => sum + tokens(apiForm(t)), 0);
}

export function tokenizerVersion(): string {
  const pkg = path.join(ROOT, "node_modules/gpt-tokenizer/package.json");
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

/** Run a meta-tool through the proxy and return its text (a tool error fails the benchmark). */
export function meta(p: BenchProxy, name: string, args: Record<string, unknown>): Promise<string> {
  return callText(p.client, name, args);
}
