/** A tool reference as data: which upstream server, which of its tools. */
export interface ToolRef {
  server: string;
  tool: string;
}

/**
 * Parse `"server.tool"`. Server names cannot contain dots, tool names can: `"a.b.c"` is server
 * `a`, tool `b.c`. Returns undefined when there is no dot or either side is empty.
 */
export function parseToolRef(ref: string): ToolRef | undefined {
  const dot = ref.indexOf(".");
  if (dot <= 0 || dot === ref.length - 1) return undefined;
  return { server: ref.slice(0, dot), tool: ref.slice(dot + 1) };
}

export function formatToolRef(ref: ToolRef): string {
  return `${ref.server}.${ref.tool}`;
}
