/**
 * The isolated pool keeps up with calls paced faster than an upstream starts: one client
 * calling every 400 ms a server that takes 2 s to start (plus node's own start) finds a ready
 * spare once the pool has seen the pattern, because the pool keeps as many spares as calls
 * arrive within one replacement time. Misses are read from /healthz (`sessions.missed`).
 */
import { describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { eventually, fixtureServer, startHttp, text, writeConfig } from "../helpers/proxy.js";

/** Most of a start is this wait (no CPU), so a loaded machine can still start spares in parallel. */
const START_DELAY_MS = 2_000;
const GAP_MS = 400;
const WARM_UP = 10;
const MEASURED = 12;
/** Misses allowed after the warm-up: a start slowed by a loaded machine; a pool that does not keep up misses every call. */
const SLACK = 3;

interface Sessions {
  spares: number;
  warming: number;
  missed: number;
  open: number;
}

async function sessions(url: string): Promise<Sessions> {
  const res = await fetch(new URL("/healthz", url));
  const body = (await res.json()) as { servers: Record<string, { sessions: Sessions }> };
  return body.servers.f!.sessions;
}

describe("isolated pool, calls paced faster than a start", () => {
  it("finds a ready spare for calls 400 ms apart to a server that starts in over 2 s, after warm-up", async () => {
    const file = writeConfig({
      mcpServers: {
        f: {
          ...fixtureServer("faulty.mjs", { FAULT_START_DELAY_MS: String(START_DELAY_MS) }),
          session: "isolated",
          prewarm: 1,
          maxSessions: 16,
          timeout: 120_000,
        },
      },
    });
    const proxy = await startHttp(file);
    try {
      await eventually(async () => (await sessions(proxy.url)).spares === 1, 30_000, "a spare");
      const pids = new Set<string>();
      let before: Sessions | undefined;
      for (let i = 0; i < WARM_UP + MEASURED; i++) {
        if (i === WARM_UP) before = await sessions(proxy.url);
        const t0 = performance.now();
        const result = await proxy.client.callTool(
          { name: "call", arguments: { method: "f.pid" } },
          { timeout: 120_000 },
        );
        expect(result.isError).toBeFalsy();
        pids.add(text(result));
        // Pacing is the workload (a call every GAP_MS, start to start), not a synchronization.
        await sleep(Math.max(0, GAP_MS - (performance.now() - t0)));
      }
      const after = await sessions(proxy.url);
      // Isolated: every call ran in a process of its own.
      expect(pids.size).toBe(WARM_UP + MEASURED);
      // The first calls outran the one spare; the pool grew to the pattern...
      expect(before!.missed).toBeGreaterThan(0);
      // ...and after the warm-up (nearly) every call found a spare ready.
      expect(after.missed - before!.missed).toBeLessThanOrEqual(SLACK);
      expect(after.spares + after.warming).toBeGreaterThan(1);
    } finally {
      await proxy.close();
    }
  }, 180_000);
});
