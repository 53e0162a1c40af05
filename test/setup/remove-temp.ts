/**
 * Per test file (vitest `setupFiles`): remove the temp folders made outside a test. Registered
 * before the file's own hooks, so it runs after them (after-hooks run in reverse order), once
 * every process that used a folder is stopped.
 */
import { afterAll } from "vitest";
import { removeFileTempDirs } from "../helpers/temp.js";

// A file that installed mcpx into a temp folder removes a whole node_modules tree: on a busy
// machine that can take longer than the 30 s hooks get.
afterAll(removeFileTempDirs, 180_000);
