/**
 * Vitest `globalSetup`: the run gets its own temp root, and fails if a test leaves anything in it.
 * TMPDIR points at the root, so `os.tmpdir()` in the test workers (forked after this runs) and in
 * every process they spawn with the inherited environment lands there. Other suites running on
 * the same machine use other roots, so the check sees only this run.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(path.join(tmpdir(), "mcpx-run-"));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    const left = readdirSync(root);
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
