/**
 * Temporary folders for tests, each removed as soon as nobody needs it: one made during a test
 * (or its beforeEach) when that test finishes, one made while a file is collected or in a
 * beforeAll after the file's last test (test/setup/remove-temp.ts). test/setup/temp-root.ts
 * fails the run if any folder is left.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { onTestFinished, TestRunner } from "vitest";

/** Folders made outside a test. Vitest loads this module afresh for every test file. */
const fileScoped = new Set<string>();
let removedAtExit = false;

/**
 * A new empty folder under the run's temp root, removed when the test (or the file) is done.
 * Outside vitest (bench/, `npm run load`/`soak`, which use the spawn helpers) there is no test to
 * wait for and no run's root: the folder lands in the system temp folder and goes when the process
 * exits, unless the caller removes it sooner (`removeFileTempDirs`).
 */
export function tempDir(prefix = "mcpx-test-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (TestRunner.getCurrentTest()) onTestFinished(() => remove(dir));
  else {
    if (!removedAtExit && process.env.VITEST === undefined) {
      removedAtExit = true;
      process.once("exit", removeFileTempDirs);
    }
    fileScoped.add(dir);
  }
  return dir;
}

/** Remove the folders made outside a test; runs after a file's last test and hooks. */
export function removeFileTempDirs(): void {
  for (const dir of fileScoped) remove(dir);
  fileScoped.clear();
}

function remove(dir: string): void {
  // maxRetries: an upstream that just exited may still be closing a file inside.
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
