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
  | "UNTRUSTED_REFUSED"
  /** An OAuth-protected upstream has no usable sign-in: the user runs `mcpx login` (upstream/oauth/). */
  | "NEEDS_SIGN_IN"
  /** mcpx's own files changed on disk after it started, an upgrade most often (src/install.ts). */
  | "INSTALL_CHANGED";

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

/** How every "needs sign-in" message starts: the status shown wherever a server's error is. */
export const NEEDS_SIGN_IN = "needs sign-in";

/** The command that signs in to `server` of the config file `file`, quoted for a shell when needed. */
export function loginCommand(file: string, server: string): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);
  return `mcpx login ${quote(file)} ${quote(server)}`;
}

/** The error of a server that needs sign-in, naming the exact command that fixes it. */
export function needsSignIn(command: string, why?: string): ProxyError {
  return new ProxyError(
    "NEEDS_SIGN_IN",
    `${NEEDS_SIGN_IN}${why ? ` (${why})` : ""}: run \`${command}\`; its tools arrive without restarting mcpx`,
  );
}

/** The command to run when `error` (a server's stored error text) says the server needs sign-in. */
export function signInCommandOf(error: string | undefined): string | undefined {
  if (!error?.startsWith(NEEDS_SIGN_IN)) return undefined;
  return /`(mcpx login [^`]+)`/.exec(error)?.[1];
}
