import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp.js";

// Made while the file is collected: kept until the file's last test is done.
const fileDir = tempDir();

describe("tempDir", () => {
  let testDir = "";

  it("makes folders under the run's own temp root", () => {
    testDir = tempDir();
    expect(existsSync(testDir)).toBe(true);
    expect(path.basename(path.dirname(testDir))).toMatch(/^mcpx-run-/);
    expect(path.dirname(testDir)).toBe(path.dirname(fileDir));
  });

  it("removes a folder made in a test when that test finishes, and keeps the file's", () => {
    expect(testDir).not.toBe("");
    expect(existsSync(testDir)).toBe(false);
    expect(existsSync(fileDir)).toBe(true);
  });
});
