/**
 * Shutdown while a hot reload is under way: the pools a reload retires and the sessions it is
 * still starting must end with the proxy, not outlive it.
 */
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { FakeClock } from "../helpers/clock.js";
import { quietLogger } from "../helpers/inmemory.js";
import {
  descendants,
  eventually,
  fixtureServer,
  isAlive,
  startHttp,
  tempDir,
  text,
} from "../helpers/proxy.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** `a` answers at once; `b` never finishes starting (it waits for a file nobody writes). */
function configs(dir: string) {
  const file = path.join(dir, "mcpx.json");
  const a = { mcpServers: { a: fixtureServer("faulty.mjs") } };
  const b = {
    mcpServers: {
      b: fixtureServer("faulty.mjs", { FAULT_START_UNTIL: path.join(dir, "never") }),
    },
  };
  return { file, a, b };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });

describe("shutdown during a hot reload", () => {
  it("close() ends the retired server's processes and the new one still starting", async () => {
    const dir = tempDir();
    const { file, a, b } = configs(dir);
    proxy = createProxy(parseConfig(a, file, {}), {
      logger: quietLogger(),
      clock: new FakeClock(),
    });
    await proxy.start();
    await eventually(() => descendants(process.pid).length === 1, 10_000, "a's spare");
    const [aPid] = descendants(process.pid);

    const reload = proxy.reload(parseConfig(b, file, {}));
    await eventually(() => descendants(process.pid).some((p) => p !== aPid), 10_000, "b to spawn");
    const all = [aPid!, ...descendants(process.pid)];
    await proxy.close();
    // Everything is gone when close() resolves: nothing is left for an exit to orphan.
    expect(all.filter(isAlive)).toEqual([]);
    expect(isAlive(aPid!)).toBe(false);
    await reload;
  });

  it("SIGTERM during a reload leaves no upstream process behind", async () => {
    const dir = tempDir();
    const { a, b } = configs(dir);
    const file = path.join(dir, "mcpx.json");
    writeFileSync(file, JSON.stringify(a));
    const running = await startHttp(file);
    try {
      expect(
        text(
          await running.client.callTool({
            name: "call",
            arguments: { method: "a.echo", arguments: { message: "hi" } },
          }),
        ),
      ).toBe("hi");
      const before = new Set(descendants(running.pid));
      writeFileSync(file, JSON.stringify(b));
      await eventually(
        () => running.stderr().includes("stopping a"),
        10_000,
        "the reload to start b and stop a",
      );
      await eventually(
        () => descendants(running.pid).some((p) => !before.has(p)),
        10_000,
        "b to spawn",
      );
      const children = [...new Set([...before, ...descendants(running.pid)])];
      running.child.kill("SIGTERM");
      expect(await exited(running.child)).toBe(0);
      // The exit came after close() ended every group: nothing may be alive now.
      expect(children.filter(isAlive)).toEqual([]);
    } finally {
      running.child.kill("SIGKILL");
    }
  });
});
