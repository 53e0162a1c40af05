/**
 * Issue 24, part 5: one caller's scripts cannot starve another's. A caller has at most
 * maxWorkers - 1 scripts running, so its busy loops always leave a worker for someone else; its
 * scripts beyond that wait in its own line (round robin over callers), and past `queued` they are
 * refused at once with a message naming the limit.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox, type ScriptOutcome } from "../../src/sandbox/index.js";
import { toolHost } from "../helpers/sandbox.js";

const WAIT = { timeout: 30_000, interval: 20 };

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/** `n` scripts of `caller` that spin until cancelled (their wall time is far off). */
function spin(
  s: Sandbox,
  caller: string,
  n: number,
  signal: AbortSignal,
): Promise<ScriptOutcome>[] {
  return Array.from({ length: n }, () =>
    s.run("while (true) {}", toolHost().options({ caller, signal, limits: { timeMs: 300_000 } })),
  );
}

describe("one caller's loops do not hold up another caller's script", () => {
  it("four spinning scripts of alice take one of two workers; bob's script runs on the other", async () => {
    const s = (sandbox = createSandbox({ maxWorkers: 2 }));
    const stop = new AbortController();
    const loops = spin(s, "alice", 4, stop.signal);
    let settled = 0;
    for (const l of loops) void l.finally(() => (settled += 1));
    // A cold worker may take seconds to start on a loaded machine.
    await expect.poll(() => s.stats(), WAIT).toEqual({ workers: 1, busy: 1, queued: 3 });
    const bob = await s.run("return 1;", toolHost().options({ caller: "bob" }));
    expect(bob).toEqual({ ok: true, value: 1, logs: [], calls: 0 });
    // Bob did not wait for any of alice's loops to end.
    expect(settled).toBe(0);
    expect(s.stats()).toMatchObject({ busy: 1, queued: 3 });
    stop.abort();
    for (const out of await Promise.all(loops)) {
      expect(out).toMatchObject({ ok: false, error: { kind: "cancelled" } });
    }
  });

  it("past its queued limit a caller's next script is refused at once, naming the limit", async () => {
    const s = (sandbox = createSandbox({ maxWorkers: 2, perCaller: { running: 1, queued: 2 } }));
    const stop = new AbortController();
    const loops = spin(s, "alice", 1, stop.signal);
    await expect.poll(() => s.stats(), WAIT).toMatchObject({ busy: 1, queued: 0 });
    loops.push(...spin(s, "alice", 2, stop.signal));
    expect(s.stats()).toMatchObject({ busy: 1, queued: 2 });
    const refused = await s.run("return 1;", toolHost().options({ caller: "alice" }));
    expect(refused).toEqual({
      ok: false,
      error: {
        kind: "busy",
        message:
          "Script not run: this caller already has 1 script(s) running and 2 waiting for the sandbox, the most mcpx holds for one caller (at most 1 of a caller's scripts run at once, so others get their turn). Wait for those to finish, or make fewer calls at once.",
      },
      logs: [],
      calls: 0,
    });
    // Another caller is not refused.
    const bob = await s.run("return 2;", toolHost().options({ caller: "bob" }));
    expect(bob).toMatchObject({ ok: true, value: 2 });
    stop.abort();
    await Promise.all(loops);
  });

  it("scripts without a caller are each their own: they run side by side, in order", async () => {
    const s = (sandbox = createSandbox({ maxWorkers: 2 }));
    const host = toolHost();
    host.barrier(2);
    const both = ["a", "b"].map(() => s.run("return servers.a.barrier();", host.options()));
    expect(await Promise.all(both)).toMatchObject([{ value: "together" }, { value: "together" }]);
  });
});
