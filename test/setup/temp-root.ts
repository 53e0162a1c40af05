/**
 * Vitest `globalSetup`: the run gets its own temp root, and fails if a test leaves anything in it.
 * TMPDIR points at the root, so `os.tmpdir()` in the test workers (forked after this runs) and in
 * every process they spawn with the inherited environment lands there. Other suites running on
 * the same machine use other roots, so the check sees only this run.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** Set while a run's root exists: the projects (vitest.config.ts) each run this setup too. */
const ROOT_MARK = "MCPX_TEST_TEMP_ROOT";

export default function setup(): () => void {
  // One root per run, not one inside another per project: a path nested three roots deep left
  // Chromium's singleton socket path longer than a socket path may be.
  if (process.env[ROOT_MARK] !== undefined && process.env[ROOT_MARK] === process.env.TMPDIR)
    return () => undefined;
  const root = mkdtempSync(path.join(tmpdir(), "mcpx-run-"));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  process.env[ROOT_MARK] = root;
  // The last line of defence for mcpx's catalog cache: a spawn that inherits this environment
  // and was given no cache folder of its own (the helpers give one per spawn) writes here, never
  // to the user's ~/.cache. Ours, so not counted as left behind.
  const cacheHome = ".xdg-cache";
  const previousCache = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = path.join(root, cacheHome);
  // The same for trust pins (`$XDG_STATE_HOME/mcpx/pins`): never the user's ~/.local/state.
  const stateHome = ".xdg-state";
  const previousState = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = path.join(root, stateHome);
  return () => {
    delete process.env[ROOT_MARK];
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (previousCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = previousCache;
    if (previousState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = previousState;
    const left = readdirSync(root).filter((name) => name !== cacheHome && name !== stateHome);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    if (left.length > 0) {
      // Vitest logs an error thrown here ("error during close") but keeps its exit code: set it.
      process.exitCode = 1;
      throw new Error(
        `tests left ${left.length} temporary folder(s) or file(s) behind (now removed): ${left.join(", ")}. ` +
          "Make them with tempDir() from test/helpers/temp.ts, or remove them in the test that made them.",
      );
    }
  };
}
