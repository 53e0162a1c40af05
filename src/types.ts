/**
 * Protocol-shaped data that crosses layers. These mirror the MCP wire shapes structurally, so
 * only the files allowed to import the SDK depend on it (see eslint.config.js).
 */

/**
 * The protocol era a client or an upstream speaks: "modern" is 2026-07-28 and later (stateless
 * requests, `server/discover`, each request with its `_meta` envelope), "legacy" the 2025
 * revisions and before (`initialize`, sessions).
 */
export type Era = "modern" | "legacy";

/** A JSON Schema object as upstreams send it (inputSchema / outputSchema). */
export type JsonSchema = { [key: string]: unknown };

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

/** A tool definition as an upstream lists it. */
export interface ToolDef {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  [key: string]: unknown;
}

export interface ResourceDef {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  [key: string]: unknown;
}

export interface ResourceTemplateDef {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  [key: string]: unknown;
}

export interface PromptDef {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
  [key: string]: unknown;
}

/** One content block of a tool result (text, image, audio, resource, resource_link, ...). */
export type ContentBlock = { type: string; [key: string]: unknown };

/** The result of tools/call. */
export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: { [key: string]: unknown };
  isError?: boolean;
  _meta?: { [key: string]: unknown };
  [key: string]: unknown;
}

/** The result of resources/read. */
export interface ReadResourceResult {
  contents: ({ uri: string; mimeType?: string; text?: string; blob?: string } & {
    [key: string]: unknown;
  })[];
  [key: string]: unknown;
}

/** The result of prompts/get: the upstream's messages, passed through as they are. */
export interface PromptResult {
  messages: { role: string; content: unknown; [key: string]: unknown }[];
  description?: string;
  [key: string]: unknown;
}

/** What completion/complete asks: a prompt argument or a template variable, and its value so far. */
export interface CompleteParams {
  ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
  [key: string]: unknown;
}

/** The result of completion/complete. */
export interface CompleteResult {
  completion: { values: string[]; total?: number; hasMore?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

/** Build a text-only tool result. */
export function textResult(text: string, isError = false): ToolResult {
  return isError
    ? { content: [{ type: "text", text }], isError: true }
    : { content: [{ type: "text", text }] };
}

/** The MCP Apps extension: interactive UIs tools declare in `_meta.ui` (see registry/apps.ts). */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an MCP Apps UI resource. */
export const UI_MIME_TYPE = "text/html;profile=mcp-app";
