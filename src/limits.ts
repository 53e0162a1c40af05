/**
 * What a client may send mcpx, in one place; the README's "Limits" section lists each. They keep
 * one bad or hostile request from taking the proxy's memory, stack or CPU; each is enforced where
 * the input arrives, with an error that names the limit and what to do instead.
 */
export const LIMITS = {
  /** An HTTP request body, in bytes (answered 413 above it). */
  httpBodyBytes: 4 * 1024 * 1024,
  /** Objects and arrays inside each other in an HTTP request body (answered 400, -32600). */
  messageDepth: 100,
  /** A meta-tool's arguments as JSON, in UTF-8 bytes, on every transport (an isError result). */
  argumentBytes: 1024 * 1024,
  /** Objects and arrays inside each other in a meta-tool's arguments (an isError result). */
  argumentDepth: 64,
  /** A server or tool name given to a meta-tool (`call`'s method, describe's names), characters. */
  nameChars: 512,
  /** Names in one describe call. */
  describeNames: 100,
  /** Free text given to a meta-tool (describe's query, call's select, a resource URI), characters. */
  textChars: 8192,
} as const;

/** Bytes in the README's units: "4 MB" (MiB, as express counts "4mb"). */
export function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}
