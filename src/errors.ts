/** Machine-readable codes of errors mcpx raises itself (not JSON-RPC wire codes). */
export type ProxyErrorCode =
  | "CONFIG_INVALID"
  | "CONFIG_NOT_FOUND"
  | "UNKNOWN_SERVER"
  | "UNKNOWN_TOOL"
  | "UPSTREAM_UNAVAILABLE"
  | "UPSTREAM_TIMEOUT"
  | "UPSTREAM_ERROR"
  | "UPSTREAM_BUSY"
  | "INVALID_ARGUMENTS"
  | "AMBIGUOUS_RESOURCE"
  | "UNKNOWN_RESOURCE";

/** An error mcpx raises on purpose: a code to branch on, a message fit to show a user or model. */
export class ProxyError extends Error {
  readonly code: ProxyErrorCode;

  constructor(code: ProxyErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The message of any thrown value, without its stack. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
