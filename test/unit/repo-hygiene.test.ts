/** What working in a clone of mcpx leaves behind: nothing git would pick up by mistake. */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/proxy.js";

describe("the clone", () => {
  it("ignores the tarball npm pack writes into it", () => {
    // check-ignore exits 0 when the path is ignored, 1 when it is not.
    expect(() =>
      execFileSync("git", ["check-ignore", "-q", "mcpx-0.1.0.tgz"], { cwd: ROOT }),
    ).not.toThrow();
  });
});
