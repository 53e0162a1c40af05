/** Machine-readable codes of errors mcpx raises itself (not JSON-RPC wire codes). */
export type ProxyErrorCode =
  /** The config cannot be used (see ConfigError). */
  | "CONFIG_INVALID"
  /** Every session an upstream may have is busy, and the call waited past its timeout. */
  | "UPSTREAM_BUSY"
  /** A config reload removed or changed the server while the call waited for a session. */
  | "POOL_RETIRED"
  /** mcpx is shutting down and takes no new calls. */
  | "SHUTTING_DOWN"
  /** An untrusted config asked for something it may not have (see src/config/trust.ts). */
  | "UNTRUSTED_REFUSED";

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
