/**
 * mcpx answers `initialize` at once, whatever its upstreams are doing: a server still starting
 * shows as such, arrives later through notifications/tools/list_changed, and a call to it waits
 * for it instead of failing. The slow upstream here starts only when the test says so.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ERAS,
  eventually,
  fixtureServer,
  npmServer,
  onToolsChanged,
  startHttp,
  startStdio,
  tempDir,
  text,
  writeConfig,
  type Era,
  type Running,
  untilStarted,
} from "../helpers/proxy.js";

/** `startupWait` short where a test looks while slow is held back (each first look waits it out). */
function slowConfig(startupWait?: number) {
  const dir = tempDir();
  const release = path.join(dir, "release");
  const file = writeConfig(
    {
      ...(startupWait === undefined ? {} : { startupWait }),
      mcpServers: {
        memory: npmServer("@modelcontextprotocol/server-memory"),
        slow: fixtureServer("faulty.mjs", { FAULT_START_UNTIL: release }),
      },
    },
    dir,
  );
  return { file, release: () => writeFileSync(release, "") };
}

const transports: [string, (file: string, era: Era) => Promise<Running>][] = [
  ["stdio", (file, era) => startStdio(file, [], { waitReady: false, era })],
  ["http", (file, era) => startHttp(file, [], {}, { waitReady: false, era })],
];
const matrix = transports.flatMap(([name, start]) =>
  ERAS.map((era) => [name, era, start] as const),
);

describe.each(matrix)("startup over %s, %s client", (_name, era, start) => {
  it("answers initialize while an upstream is still starting; it arrives by list_changed", async () => {
    const { file, release } = slowConfig(200);
    // Connecting means initialize was answered, and the slow server has not started: it cannot
    // until release() below.
    const proxy = await start(file, era);
    try {
      let changed = 0;
      await onToolsChanged(proxy.client, () => {
        changed += 1;
      });
      const catalog = async () =>
        (await proxy.client.listTools()).tools.find((t) => t.name === "describe")?.description ??
        "";
      expect(await catalog()).toMatch(/slow \[starting\]/);
      // memory starts on its own time (slowly on a busy machine): only slow may still be starting
      // when it is released, so the list_changed below is slow's.
      const deadline = Date.now() + 30_000;
      while ((await catalog()).includes("memory [starting]")) {
        if (Date.now() > deadline) throw new Error("memory did not start in 30 s");
      }

      // A call to the starting server waits for it rather than failing.
      const pending = proxy.client.callTool({
        name: "call",
        arguments: { method: "slow.echo", arguments: { message: "waited" } },
      });
      const before = changed;
      release();
      expect(text(await pending)).toBe("waited");
      await eventually(() => changed > before, 10_000, "tools/list_changed");
      await untilStarted(proxy.client);
      const after = await proxy.client.listTools();
      const now = after.tools.find((t) => t.name === "describe")?.description ?? "";
      expect(now).not.toMatch(/\[starting\]/);
      expect(now).toMatch(/slow: .*echo/);
    } finally {
      release();
      await proxy.close();
    }
  });
});

describe.each(matrix)("first lists over %s, %s client", (_name, era, start) => {
  // A one-shot client (the Inspector's CLI) asks once, right after spawning mcpx, and never sees
  // the list_changed that follows: its lists must already hold the starting server's entries.
  it("prompts and resources of a server still starting are waited for, not answered empty", async () => {
    const { file, release } = slowConfig();
    const proxy = await start(file, era);
    try {
      const lists = Promise.all([
        proxy.client.listResources(),
        proxy.client.listPrompts(),
        proxy.client.readResource({ uri: "fixture://info" }),
        proxy.client.getPrompt({ name: "slow__greet", arguments: { name: "Ada" } }),
        proxy.client.callTool({ name: "resources", arguments: {} }),
      ]);
      release();
      const [resources, prompts, read, prompt, tool] = await lists;
      expect(resources.resources.map((r) => r.uri)).toContain("fixture://info");
      expect(prompts.prompts.map((p) => p.name)).toContain("slow__greet");
      expect(JSON.stringify(read.contents)).toContain("fixture://info");
      expect(JSON.stringify(prompt.messages)).toContain("Ada");
      expect(text(tool)).toContain("slow\tfixture://info");
    } finally {
      release();
      await proxy.close();
    }
  });
});
