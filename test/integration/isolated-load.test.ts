/**
 * The isolated pool under load, with real upstream processes counted from /proc: many calls at
 * once beyond maxSessions all succeed (they wait for a session), each in a process of its own,
 * the processes under mcpx stay bounded, and none is left once mcpx is gone.
 */
import { describe, expect, it } from "vitest";
import { SeenProcesses } from "../helpers/procfs.js";
import {
  descendants,
  eventually,
  fixtureServer,
  startHttp,
  text,
  writeConfig,
} from "../helpers/proxy.js";

const MAX_SESSIONS = 4;
const CALLS = 24;

describe("isolated pool under load", () => {
  it("answers every call of a burst past maxSessions, with bounded processes and none left after", async () => {
    const file = writeConfig({
      mcpServers: {
        f: {
          ...fixtureServer("faulty.mjs"),
          session: "isolated",
          prewarm: 1,
          maxSessions: MAX_SESSIONS,
          idleTimeout: 1_000,
          // A queued call waits for a session up to its timeout: generous for a loaded machine.
          timeout: 240_000,
        },
      },
    });
    const proxy = await startHttp(file);
    const seen = new SeenProcesses();
    let most = 0;
    const count = () => {
      const pids = descendants(proxy.pid);
      seen.add(pids);
      most = Math.max(most, pids.length);
    };
    // Sampling, not synchronization: every reading counts toward the bound.
    const sampler = setInterval(count, 20);
    try {
      await eventually(() => descendants(proxy.pid).length === 1, 15_000, "the warm spare");
      const results = await Promise.all(
        Array.from({ length: CALLS }, () =>
          // Queued calls wait for a session: on a loaded machine longer than the SDK's 60 s.
          proxy.client.callTool(
            { name: "call", arguments: { method: "f.pid" } },
            { timeout: 240_000 },
          ),
        ),
      );
      count();
      // Every call succeeded, each in a process of its own.
      expect(results.filter((r) => r.isError)).toEqual([]);
      expect(new Set(results.map(text)).size).toBe(CALLS);
      // maxSessions held (calls, spares), plus at most as many used ones still exiting.
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(2 * MAX_SESSIONS);
      // Back to the one spare once the burst's spares idle out.
      await eventually(() => descendants(proxy.pid).length === 1, 20_000, "back to prewarm");
    } finally {
      clearInterval(sampler);
      proxy.child.kill("SIGTERM");
      await new Promise((r) => proxy.child.once("exit", r));
    }
    expect(seen.size).toBeGreaterThanOrEqual(CALLS);
    expect(await seen.untilGone(10_000)).toEqual([]);
  }, 300_000);
});
