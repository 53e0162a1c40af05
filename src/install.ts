/**
 * mcpx's own files changing under a running mcpx: `npm install -g mcpx@latest` while a client's
 * mcpx (or the shared daemon) keeps running. What it had loaded keeps working, but what it loads
 * lazily (the schema compiler, the token counter, OAuth, metrics, trust diffs: each a chunk of
 * the bundle with a hash in its name) is gone, or belongs to another version whose chunks export
 * other names. Such an import is told apart here from any other failure, so the caller gets an
 * error that says what happened and what to do, and `serve` can react once another version is
 * installed (the daemon restarts: its shims attach to a daemon of the installed version,
 * src/daemon/shim.ts). Not covered: code mode's and select's worker threads, which run tsc's
 * files from dist/ under names an upgrade keeps.
 */
import { fileURLToPath } from "node:url";
import { ProxyError } from "./errors.js";
import { installedVersion, VERSION } from "./version.js";

/** The package's root (the folder above `dist/`), as mcpx's own missing files name it. */
const ROOT = fileURLToPath(new URL("..", import.meta.url));

type Listener = (detail: string) => void;
/** Each listener, and whether it was told already (each hears it once). */
const listeners = new Map<Listener, boolean>();

/**
 * Call `listener` once when a lazy import finds mcpx's files changed and another version
 * installed (a file gone while the version stays is a broken install, not an upgrade: a restart
 * would find it as broken).
 */
export function onInstallChanged(listener: Listener): () => void {
  listeners.set(listener, false);
  return () => listeners.delete(listener);
}

/**
 * `err` says mcpx's own files changed since it started, rather than that a module failed: a
 * file of this package that is gone, or a chunk of it that no longer exports what the running
 * code imports (a chunk of another version with the same name).
 */
export function installChangedDetail(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  if ((err as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND") {
    const file = /Cannot find module '([^']+)'/.exec(err.message)?.[1];
    const path = file?.startsWith("file:") ? pathOfUrl(file) : file;
    return path?.startsWith(ROOT) ? `${path} is gone` : undefined;
  }
  if (err instanceof SyntaxError) {
    const named =
      /requested module '(\.{1,2}\/[^']+)' does not provide an export named '([^']+)'/.exec(
        err.message,
      );
    return named ? `${named[1]} no longer exports ${named[2]}` : undefined;
  }
  return undefined;
}

/**
 * `load()` (a lazy `import()` of mcpx's own code or of a bundled dependency), with the error
 * of an install that changed since start-up said as such, and {@link onInstallChanged}'s
 * listeners told.
 */
export async function lazyImport<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const detail = installChangedDetail(err);
    if (detail === undefined) throw err;
    if (installedVersion() !== VERSION) tell(detail);
    throw new ProxyError(
      "INSTALL_CHANGED",
      `mcpx's files changed on disk after it started (an upgrade or a reinstall: ${detail}); restart mcpx (or the client that started it) to load the installed mcpx`,
      { cause: err },
    );
  }
}

function tell(detail: string): void {
  for (const [listener, told] of listeners) {
    if (told) continue;
    listeners.set(listener, true);
    try {
      listener(detail);
    } catch {
      // A listener's failure is its own: the others are told, and the caller gets its error.
    }
  }
}

function pathOfUrl(url: string): string | undefined {
  try {
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
}
