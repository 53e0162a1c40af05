/**
 * Hot reload: watch the config file and hand every valid edit to `onConfig`. An invalid edit is
 * reported to `onInvalid` and changes nothing, so the proxy keeps serving the config it has.
 */
import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { ConfigError, loadConfig, type Config, type LoadOptions } from "./load.js";
import { assertPublicServers, isUntrustedRefusal } from "./trust.js";

export interface WatchOptions {
  logger: Logger;
  /** Apply a config that passed validation. Reloads never overlap: the next waits for this one. */
  onConfig: (config: Config) => Promise<void>;
  /** A config that fails validation (also the extra checks `onConfig` cannot undo). */
  onInvalid: (error: ConfigError) => void;
  /** Extra checks a loaded config must pass (e.g. auth while bound beyond loopback). */
  check?: (config: Config) => string[];
  /** Editors write in bursts (truncate, write, rename): wait this long for quiet. Default 100. */
  debounceMs?: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** How the file is read (its format, the project, whether it is trusted). */
  load?: LoadOptions;
}

export interface ConfigWatcher {
  /** Resolves when every reload started so far is done (tests, shutdown). */
  idle(): Promise<void>;
  close(): void;
}

/**
 * Watches the file's directory, not the file: editors and `mv` replace the file with a new
 * inode, which a watch on the file itself would stop seeing.
 */
export function watchConfig(file: string, options: WatchOptions): ConfigWatcher {
  const abs = path.resolve(file);
  const name = path.basename(abs);
  const log = options.logger;
  let timer: NodeJS.Timeout | undefined;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;

  const reload = async () => {
    if (closed) return;
    let next: Config;
    try {
      next = loadConfig(abs, options.env, options.load);
      const problems = options.check?.(next) ?? [];
      if (problems.length > 0) throw new ConfigError(abs, problems);
      // An untrusted file's hosts are checked again: the edit may point them elsewhere.
      await assertPublicServers(next).catch((err: unknown) => {
        throw isUntrustedRefusal(err) ? new ConfigError(abs, [err.message]) : err;
      });
    } catch (err) {
      if (err instanceof ConfigError) options.onInvalid(err);
      else log.error(`config reload failed: ${errorMessage(err)}`);
      return;
    }
    for (const w of next.warnings) log.warn(w);
    await options.onConfig(next);
  };

  let watcher: FSWatcher | undefined;
  try {
    // Not persistent: watching never keeps the process alive on its own.
    watcher = watch(path.dirname(abs), { persistent: false }, (_event, changed) => {
      // Some platforms give no file name; then any change in the directory may be ours.
      if (closed || (changed !== null && changed !== name)) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        queue = queue.then(reload).catch((err: unknown) => {
          log.error(`config reload failed: ${errorMessage(err)}`);
        });
      }, options.debounceMs ?? 100);
    });
    watcher.on("error", (err) => log.warn(`watching ${abs} stopped: ${errorMessage(err)}`));
  } catch (err) {
    log.warn(`cannot watch ${abs} for changes (${errorMessage(err)}); edits need a restart`);
  }

  return {
    idle: () => queue,
    close: () => {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
