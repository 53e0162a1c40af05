/**
 * The persistent catalog cache: each server's discovered catalog (tools, prompts, resources,
 * templates, identity) kept on disk, so the next start answers `tools/list` at once while
 * discovery refreshes it in the background.
 *
 * One file per launch, `<dir>/catalogs/<key>.json`, keyed by `launchKey`: a hash of how the
 * server is started, where env and header values enter only as their own hash. Files hold no
 * launch details and no env or header values (an entry whose catalog quotes a config secret is
 * not written); they are written atomically (temp file + rename) with mode 0600, bounded per
 * entry and in total (oldest evicted), and an unreadable one is removed and rebuilt.
 */
import { createHash, randomBytes } from "node:crypto";
import { promises as fs, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import type { ServerConfig } from "../config/load.js";
import { errorMessage } from "../errors.js";
import { canonicalJson } from "../json.js";
import type { Logger } from "../logger.js";
import type { PromptDef, ResourceDef, ResourceTemplateDef, ToolDef } from "../types.js";
import type { ServerIdentity } from "../upstream/types.js";
import { CLIENT_NEEDS, type KnownLook } from "./capability-tools.js";
import type { ServerState } from "./types.js";

/** What one discovery produces and the cache keeps. */
export interface CachedCatalog {
  identity?: ServerIdentity;
  tools: ToolDef[];
  resources: ResourceDef[];
  resourceTemplates: ResourceTemplateDef[];
  prompts: PromptDef[];
  /** Which tools need a client capability, as last looked (capability-tools.ts). */
  look?: KnownLook;
}

/** Bumped when the file layout changes: entries of another version are ignored. */
const FORMAT = 1;
/** One entry larger than this is not kept (a catalog this big is rediscovered each start). */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;
/** All entries together; the oldest are evicted beyond it. */
export const MAX_TOTAL_BYTES = 64 * 1024 * 1024;

/** The cache folder: `catalogCache` when the config sets one, else `$XDG_CACHE_HOME/mcpx`, else `~/.cache/mcpx`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CACHE_HOME;
  // The XDG spec: a relative value is invalid and must be ignored.
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "mcpx");
  return path.join(os.homedir(), ".cache", "mcpx");
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The cache key of a server: command, args, cwd, url and roots in the clear inside the hash, env
 * and headers only as a hash of their own. A server whose launch changes gets a fresh entry.
 */
export function launchKey(server: ServerConfig): string {
  const spec = server.spec;
  const launch =
    spec.transport === "stdio"
      ? {
          transport: spec.transport,
          command: spec.command,
          args: spec.args,
          cwd: spec.cwd ?? null,
          inheritEnv: spec.inheritEnv,
          env: sha(canonicalJson(spec.env)),
        }
      : { transport: spec.transport, url: spec.url, headers: sha(canonicalJson(spec.headers)) };
  return sha(canonicalJson({ launch, roots: server.roots ?? null })).slice(0, 32);
}

const entrySchema = z.object({
  format: z.literal(FORMAT),
  key: z.string(),
  savedAt: z.number(),
  catalog: z.object({
    identity: z.record(z.string(), z.unknown()).optional(),
    tools: z.array(
      z.looseObject({ name: z.string(), inputSchema: z.record(z.string(), z.unknown()) }),
    ),
    resources: z.array(z.looseObject({ uri: z.string(), name: z.string() })),
    resourceTemplates: z.array(z.looseObject({ uriTemplate: z.string(), name: z.string() })),
    prompts: z.array(z.looseObject({ name: z.string() })),
    // Optional: entries written before it are read as they were (their servers looked at again);
    // one this version cannot read (a need it does not know) costs the look, not the catalog.
    look: z
      .object({
        of: z.string(),
        needs: z.record(z.string(), z.array(z.enum(CLIENT_NEEDS))),
      })
      .optional()
      .catch(undefined),
  }),
});

export interface CatalogCacheOptions {
  /** The folder (created 0700 on first write). */
  dir: string;
  logger: Logger;
  /** Values that must never be written (env values, header values, tokens). */
  secrets: () => Iterable<string>;
  now?: () => number;
  maxEntryBytes?: number;
  maxTotalBytes?: number;
}

/** Reads and writes catalog entries; every failure is a log line, never an exception. */
export class CatalogCache {
  private readonly folder: string;
  private readonly now: () => number;
  /** Writes in flight, so close() (and tests) can wait for them. */
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly options: CatalogCacheOptions) {
    this.folder = path.join(options.dir, "catalogs");
    this.now = options.now ?? Date.now;
  }

  /** The file of one key. */
  file(key: string): string {
    return path.join(this.folder, `${key}.json`);
  }

  /** The cached catalog of `key`, or undefined (none, another format, or unreadable: removed). */
  load(key: string, server: string): CachedCatalog | undefined {
    const file = this.file(key);
    let text: string;
    try {
      // Synchronous: read as the registry is built, before the first request can be answered.
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
        this.options.logger.warn(
          `${server}: catalog cache unreadable (${errorMessage(err)}); discovering`,
        );
      }
      return undefined;
    }
    let parsed: z.infer<typeof entrySchema> | undefined;
    try {
      const result = entrySchema.safeParse(JSON.parse(text));
      if (result.success && result.data.key === key) parsed = result.data;
    } catch {
      // Not JSON: handled as any other unusable entry below.
    }
    if (!parsed) {
      this.options.logger.warn(
        `${server}: catalog cache entry ${file} is corrupt; ignored, and rebuilt from the server`,
      );
      try {
        rmSync(file, { force: true });
      } catch {
        // Left in place: the next successful discovery overwrites it.
      }
      return undefined;
    }
    return parsed.catalog as CachedCatalog;
  }

  /** Keep `catalog` as the entry of `key` (in the background; see `flush`). */
  save(key: string, server: string, catalog: CachedCatalog): void {
    const write = this.write(key, server, catalog)
      .catch((err: unknown) =>
        this.options.logger.warn(`${server}: catalog cache not written: ${errorMessage(err)}`),
      )
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  /**
   * Keep a server's catalog as its state holds it, under the key of its launch, with `look` (the
   * finding on these tools of which need a client capability, when there is one).
   */
  saveState(state: ServerState, look?: KnownLook): void {
    const { identity, tools, resources, resourceTemplates, prompts } = state;
    this.save(launchKey(state.config), state.name, {
      ...(identity && { identity }),
      tools,
      resources,
      resourceTemplates,
      prompts,
      ...(look && { look }),
    });
  }

  /** Resolves when every write started so far is done. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.writing]);
  }

  private async write(key: string, server: string, catalog: CachedCatalog): Promise<void> {
    const text = JSON.stringify({ format: FORMAT, key, savedAt: this.now(), catalog });
    for (const secret of this.options.secrets()) {
      // An upstream that echoes a credential into its catalog: nothing of it goes to disk.
      if (secret.length >= 4 && text.includes(JSON.stringify(secret).slice(1, -1))) {
        this.options.logger.warn(
          `${server}: catalog not cached: it contains a value of the server's env or headers`,
        );
        await fs.rm(this.file(key), { force: true });
        return;
      }
    }
    const limit = this.options.maxEntryBytes ?? MAX_ENTRY_BYTES;
    if (Buffer.byteLength(text) > limit) {
      this.options.logger.info(
        `${server}: catalog not cached: ${Buffer.byteLength(text)} bytes, over the ${limit}-byte entry limit`,
      );
      await fs.rm(this.file(key), { force: true });
      return;
    }
    await this.makeFolder();
    const file = this.file(key);
    const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await fs.writeFile(temp, text, { mode: 0o600, flag: "wx" });
      await fs.rename(temp, file);
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
    await this.evict(file);
  }

  /**
   * Create the cache folder and its parent (`~/.cache` on a fresh account), no further up: a
   * folder removed from under a running mcpx (a test's, a user's) is not brought back.
   */
  private async makeFolder(): Promise<void> {
    const made = async (dir: string) =>
      fs.mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
      });
    await made(path.dirname(this.options.dir));
    await made(this.options.dir);
    await made(this.folder);
  }

  /** Remove the oldest entries (never `keep`) until the total fits; stray temp files too. */
  private async evict(keep: string): Promise<void> {
    const limit = this.options.maxTotalBytes ?? MAX_TOTAL_BYTES;
    const names = await fs.readdir(this.folder);
    const entries: { file: string; size: number; mtime: number }[] = [];
    for (const name of names) {
      const file = path.join(this.folder, name);
      try {
        const st = await fs.stat(file);
        // Another mcpx's write in progress is at most seconds old; older temp files are litter.
        if (name.endsWith(".tmp")) {
          if (this.now() - st.mtimeMs > 60_000) await fs.rm(file, { force: true });
          continue;
        }
        if (name.endsWith(".json")) entries.push({ file, size: st.size, mtime: st.mtimeMs });
      } catch {
        // Removed by another mcpx meanwhile: nothing to count.
      }
    }
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    for (const e of entries.sort((a, b) => a.mtime - b.mtime)) {
      if (total <= limit) break;
      if (e.file === keep) continue;
      await fs.rm(e.file, { force: true });
      total -= e.size;
    }
  }
}
