/** The built mcpx with a log file: every line it logs reaches the file, in order, by exit. */
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixtureServer, startHttp, stop, tempDir, text, writeConfig } from "../helpers/proxy.js";

/** Log lines (they start with an ISO timestamp); mcpx's own banner lines do not. */
const logLines = (output: string) => output.split("\n").filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));

describe("log file", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("holds every line mcpx logged, a chatty upstream's stderr included, when it exits", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = path.join(dir, "mcpx.log");
    const proxy = await startHttp(
      writeConfig(
        {
          log: { file, maxBytes: 100_000_000 },
          mcpServers: {
            f: {
              ...fixtureServer("faulty.mjs", { FAULT_STDERR_FLOOD: "300" }),
              session: "shared",
            },
          },
        },
        dir,
      ),
    );
    let code: number | null;
    try {
      const result = await proxy.client.callTool({
        name: "call",
        arguments: { method: "f.echo", arguments: { message: "hi" } },
      });
      expect(text(result)).toContain("hi");
    } finally {
      code = await stop(proxy.child);
    }
    expect(code).toBe(0);
    const logged = logLines(proxy.stderr());
    expect(logged.some((l) => l.includes("shutting down (SIGTERM)"))).toBe(true);
    expect(logged.filter((l) => l.includes("flood ")).length).toBeGreaterThanOrEqual(300);
    expect(logLines(readFileSync(file, "utf8"))).toEqual(logged);
  });
});
