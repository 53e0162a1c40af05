/** No leaked processes: counted from /proc around the built mcpx, with real upstream processes. */
import { describe, expect, it } from "vitest";
import {
  descendants,
  eventually,
  fixtureServer,
  isAlive,
  startHttp,
  text,
  writeConfig,
} from "../helpers/proxy.js";

describe("process hygiene", () => {
  it("is back to the pre-warm count after 48 isolated calls, and at zero after shutdown", async () => {
    const file = writeConfig({
      mcpServers: {
        // The bursts grow the spares up to maxSessions; idleTimeout shrinks them back.
        f: {
          ...fixtureServer("faulty.mjs"),
          session: "isolated",
          prewarm: 2,
          maxSessions: 8,
          idleTimeout: 1_000,
        },
      },
    });
    const proxy = await startHttp(file);
    try {
      await eventually(() => descendants(proxy.pid).length === 2, 15_000, "two warm spares");
      const pids = new Set<string>();
      const one = async () => {
        const r = await proxy.client.callTool({ name: "call", arguments: { method: "f.pid" } });
        expect(r.isError).toBeFalsy();
        pids.add(text(r));
      };
      for (let batch = 0; batch < 6; batch++) await Promise.all(Array.from({ length: 8 }, one));
      // Every call ran in its own process: isolation is real, not a shared session.
      expect(pids.size).toBe(48);
      await eventually(
        () => descendants(proxy.pid).length === 2,
        20_000,
        "used sessions and the burst's spares to be closed",
      );
      const left = descendants(proxy.pid);
      proxy.child.kill("SIGTERM");
      const code = await new Promise((r) => proxy.child.once("exit", r));
      expect(code).toBe(0);
      await eventually(() => left.every((p) => !isAlive(p)), 10_000, "spares to exit");
    } finally {
      proxy.child.kill("SIGKILL");
    }
  }, 120_000);

  it.each(["SIGTERM", "SIGINT"] as const)(
    "kills an upstream that ignores SIGTERM when mcpx gets %s",
    async (signal) => {
      const file = writeConfig({
        mcpServers: {
          stubborn: {
            ...fixtureServer("faulty.mjs", { FAULT_IGNORE_SIGTERM: "1" }),
            session: "shared",
          },
          spare: { ...fixtureServer("faulty.mjs", { FAULT_IGNORE_SIGTERM: "1" }), prewarm: 1 },
        },
      });
      const proxy = await startHttp(file);
      try {
        await proxy.client.callTool({
          name: "call",
          arguments: { method: "stubborn.echo", arguments: { message: "x" } },
        });
        await eventually(
          () => descendants(proxy.pid).length === 2,
          15_000,
          "shared session and spare",
        );
        const children = descendants(proxy.pid);
        proxy.child.kill(signal);
        await new Promise((r) => proxy.child.once("exit", r));
        // SIGTERM is ignored; the SIGKILL after the grace period is not.
        await eventually(
          () => children.every((p) => !isAlive(p)),
          10_000,
          "stubborn upstreams to die",
        );
      } finally {
        proxy.child.kill("SIGKILL");
      }
    },
    30_000,
  );
});
