/**
 * What a client may send mcpx, in one place; the "Limits" section of docs/performance.md lists each. They keep
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
  /**
   * The arguments of a code-mode script's inner calls still running, summed (UTF-8 bytes); each
   * one is held to argumentBytes as well, in the sandbox's worker before it reaches this thread.
   */
  scriptInFlightBytes: 8 * 1024 * 1024,
  /**
   * Wall time of one `select` (ms). It runs in a worker thread (with its own 256 MB heap), so
   * an expression that multiplies its data is stopped there, never on the thread every caller shares.
   */
  selectMs: 2000,
  /** The value a `select` makes, as JSON characters: at most this or its source's size, if larger. */
  selectChars: 4 * 1024 * 1024,
  /** Free text given to a meta-tool (describe's query, call's select, a resource URI), characters. */
  textChars: 8192,
} as const;

/** Bytes in the units docs/performance.md uses: "4 MB" (MiB, as express counts "4mb"). */
export function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}
