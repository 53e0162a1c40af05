/**
 * Where the daemon of one config file lives: a Unix socket, a start lock, an info file and a
 * log, named after a hash of the config's real path, in a folder only the user can enter:
 * `$XDG_RUNTIME_DIR/mcpx/`, else `<tmpdir>/mcpx-<uid>/` (0700, owned by the user). Node
 * built-ins only: the stdio shim loads this.
 */
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface DaemonPaths {
  /** The config file's real path: one daemon per file. */
  config: string;
  dir: string;
  socket: string;
  /** Held (O_EXCL) by the shim that starts the daemon: two shims start one daemon. */
  lock: string;
  /** The daemon's stderr (its log), 0600. */
  log: string;
}

/** The folder of every daemon of this user. */
export function daemonDir(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) return path.join(runtime, "mcpx");
  return path.join(os.tmpdir(), `mcpx-${os.userInfo().uid}`);
}

export function daemonPaths(configFile: string, env: NodeJS.ProcessEnv = process.env): DaemonPaths {
  const config = realpathSync(configFile);
  const key = createHash("sha256").update(config).digest("hex").slice(0, 16);
  const dir = daemonDir(env);
  const base = path.join(dir, key);
  // A socket path must fit sockaddr_un (108 bytes on Linux).
  return { config, dir, socket: `${base}.sock`, lock: `${base}.lock`, log: `${base}.log` };
}

/**
 * Create the folder (0700) or check the one there: a folder another user owns, or others can
 * enter, is refused (a socket in it could be someone else's).
 */
export function ensureDaemonDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  const uid = os.userInfo().uid;
  if (!stat.isDirectory() || stat.uid !== uid) {
    throw new Error(
      `${dir} is not a folder of this user (uid ${uid}); remove it or set XDG_RUNTIME_DIR to a folder of yours.`,
    );
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}
