/**
 * Where sign-ins to OAuth-protected upstreams live: one file per protected resource (the server's
 * URL) in `$XDG_STATE_HOME/mcpx/oauth/` (default ~/.local/state/mcpx/oauth/), folder 0700, files
 * 0600, written whole (temp file + rename). Each file records the issuer it was signed in with,
 * the client registration at that issuer, the tokens and the issuer's metadata (to refresh
 * without discovery). Refreshes happen under a lock file beside it (see `withLock`), so two
 * processes never spend the same refresh token.
 */
import { createHash } from "node:crypto";
import { promises as fs, constants, mkdirSync, watch } from "node:fs";
import path from "node:path";

/** One sign-in: the resource, its issuer, the client mcpx is there, the tokens. */
export interface SignInRecord {
  /** The protected resource (RFC 8707 indicator) the tokens are for. */
  resource: string;
  /** The resource its protected-resource metadata names, when not the URL itself (RFC 9728). */
  indicator?: string;
  /** The authorization server's issuer identifier. */
  issuer: string;
  /** The issuer's metadata (RFC 8414 / OIDC discovery) as found at sign-in. */
  metadata: Record<string, unknown>;
  /** The client registration (client_id, maybe client_secret, redirect_uris …). */
  client: Record<string, unknown> & { client_id: string };
  tokens?: {
    access_token: string;
    token_type: string;
    refresh_token?: string;
    scope?: string;
    /** ms since epoch when the access token expires (absent: unknown). */
    expiresAt?: number;
  };
  /**
   * Scope an upstream asked for with `403 insufficient_scope` (step-up), united with the granted
   * one: what the next `mcpx login` asks for.
   */
  wantedScope?: string;
  /** ms since epoch of the last write. */
  savedAt: number;
}

/** `$XDG_STATE_HOME/mcpx` (default ~/.local/state/mcpx): mcpx's state that is not a cache. */
export { defaultStateDir } from "../../state-dir.js";

/** The secrets a record holds: registered with the logger's redaction wherever one is read. */
export function recordSecrets(record: SignInRecord | undefined): string[] {
  if (!record) return [];
  const values = [
    record.tokens?.access_token,
    record.tokens?.refresh_token,
    record.client.client_secret,
  ];
  return values.filter((v): v is string => typeof v === "string" && v.length > 0);
}

/**
 * Where sign-ins are kept: files in the state folder ({@link TokenStore}), or Redis, sealed, shared
 * by every replica (`SharedSignIns`, shared-store.ts). Every method may reject: with Redis, with
 * the error naming Redis (unreachable) or `redis.encryptionKey` (a value it does not open).
 */
export interface SignInStore {
  /** Where the sign-ins are, for messages: a folder, or "Redis at host:port/db". */
  readonly where: string;
  read(resource: string): Promise<SignInRecord | undefined>;
  write(record: SignInRecord): Promise<void>;
  /** Forget the sign-in of `resource`; false when there was none. */
  remove(resource: string): Promise<boolean>;
  /** Run `fn` holding the refresh lock of `resource` (one holder across processes/replicas). */
  withLock<T>(
    resource: string,
    fn: () => Promise<T>,
    options?: { staleMs?: number; timeoutMs?: number },
  ): Promise<T>;
}

/** The key of one resource: a hash of its URL, so any URL makes a safe name. */
export function resourceKey(resource: string): string {
  return createHash("sha256").update(resource).digest("hex").slice(0, 32);
}

export class TokenStore implements SignInStore {
  readonly dir: string;

  /** `stateDir`: the folder of mcpx's state (see defaultStateDir); the files go in its oauth/. */
  constructor(stateDir: string) {
    this.dir = path.join(stateDir, "oauth");
  }

  get where(): string {
    return this.dir;
  }

  /** The file of one resource. */
  fileOf(resource: string): string {
    return path.join(this.dir, `${resourceKey(resource)}.json`);
  }

  async read(resource: string): Promise<SignInRecord | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(resource), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    // A torn or hand-edited file: as if signed out (the next sign-in writes it whole).
    return parseSignIn(text, resource);
  }

  async write(record: SignInRecord): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await fs.chmod(this.dir, 0o700);
    const file = this.fileOf(record.resource);
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(temp, JSON.stringify({ ...record, savedAt: Date.now() }, null, 2), {
      mode: 0o600,
    });
    await fs.rename(temp, file);
  }

  /** Forget the sign-in of `resource`; false when there was none. */
  async remove(resource: string): Promise<boolean> {
    try {
      await fs.unlink(this.fileOf(resource));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw err;
    }
  }

  /**
   * Run `fn` holding the lock of `resource`: a lock file created with O_EXCL (one winner across
   * processes). A lock older than `staleMs`, or whose holder's pid is gone, is broken. Waits at
   * most `timeoutMs`, polling.
   */
  async withLock<T>(
    resource: string,
    fn: () => Promise<T>,
    { staleMs = 30_000, timeoutMs = 20_000 } = {},
  ): Promise<T> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const lock = `${this.fileOf(resource)}.lock`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const handle = await fs.open(
          lock,
          constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
          0o600,
        );
        await handle.writeFile(String(process.pid));
        await handle.close();
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      if (await isStale(lock, staleMs)) {
        await fs.rm(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`sign-in lock ${lock} is held by another process`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    try {
      return await fn();
    } finally {
      await fs.rm(lock, { force: true });
    }
  }
}

async function isStale(lock: string, staleMs: number): Promise<boolean> {
  try {
    const [stat, text] = await Promise.all([fs.stat(lock), fs.readFile(lock, "utf8")]);
    if (Date.now() - stat.mtimeMs > staleMs) return true;
    const pid = Number(text);
    if (!Number.isInteger(pid) || pid <= 0) return Date.now() - stat.mtimeMs > 1_000;
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "ESRCH";
    }
  } catch {
    // Gone between the failed create and now: try again.
    return false;
  }
}

/**
 * Call `onChange` (debounced) when a sign-in file in `stateDir` changes: a `mcpx login` by the
 * user while mcpx runs. Returns the stop function. Never throws: no watching is a retry later.
 */
export function watchSignIns(stateDir: string, onChange: () => void, debounceMs = 100): () => void {
  const dir = path.join(stateDir, "oauth");
  let timer: NodeJS.Timeout | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const watcher = watch(dir, (_event, name) => {
      if (name !== null && !String(name).endsWith(".json")) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
      timer.unref();
    });
    watcher.on("error", () => watcher.close());
    watcher.unref();
    return () => {
      clearTimeout(timer);
      watcher.close();
    };
  } catch {
    return () => {};
  }
}

/** A kept sign-in's text as the record of `resource`, or undefined when it is not one. */
export function parseSignIn(text: string, resource: string): SignInRecord | undefined {
  try {
    const record = JSON.parse(text) as SignInRecord;
    return record.resource === resource && typeof record.client?.client_id === "string"
      ? record
      : undefined;
  } catch {
    return undefined;
  }
}
