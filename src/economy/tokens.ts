/**
 * Token accounting shared by `mcpx stats` and the token benchmark (bench/tokens.ts): a tool
 * definition costs its API form, `JSON.stringify({ name, description, inputSchema })`, in
 * o200k_base tokens (gpt-tokenizer). The tokenizer is loaded only when something is counted.
 */
import { lazyImport } from "../install.js";

/** The fields of a tool definition a host sends the model. */
export interface ToolLike {
  name: string;
  description?: string | undefined;
  inputSchema: unknown;
}

/** The API form of a tool definition, as a host sends it to the model. */
export function apiForm(t: ToolLike): string {
  return JSON.stringify({ name: t.name, description: t.description, inputSchema: t.inputSchema });
}

export type CountTokens = (text: string) => number;

/** o200k_base token counting (loads gpt-tokenizer's encoding, a few MB, on first use). */
export async function loadTokenCounter(): Promise<CountTokens> {
  const { countTokens } = await lazyImport(() => import("gpt-tokenizer/encoding/o200k_base"));
  return (text) => countTokens(text);
}

/** Tokens of a list of tool definitions as a client loads them. */
export function definitionTokens(tools: readonly ToolLike[], count: CountTokens): number {
  return tools.reduce((sum, t) => sum + count(apiForm(t)), 0);
}
