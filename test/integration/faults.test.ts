/**
 * Fault injection against the built mcpx over HTTP, with clients of both protocol eras: each
 * fault leaves the other servers serving, answers the affected call with a clear isError, leaks
 * no process, and recovers when it goes. Cancellation also runs over stdio.
 */
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  descendants,
  ERAS,
  eventually,
  fixtureServer,
  isAlive,
  npmServer,
  onToolsChanged,
  startHttp,
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
  type Era,
  type Running,
  type RunningHttp,
} from "../helpers/proxy.js";

let proxy: Running | undefined;
let seen: number[] = [];
afterEach(async () => {
  if (!proxy) return;
  const pids = [...new Set([...seen, ...descendants(proxy.pid)])];
  await proxy.close();
  // No leaked process: every upstream this proxy ever had is gone after shutdown.
  await eventually(() => pids.every((p) => !isAlive(p)), 10_000, "upstreams to exit");
  proxy = undefined;
  seen = [];
});

async function start(
  era: Era,
  servers: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  transport: "http" | "stdio" = "http",
) {
  const file = writeConfig({
    mcpServers: { ok: fixtureServer("faulty.mjs"), ...servers },
    ...extra,
  });
  proxy =
    transport === "http"
      ? await startHttp(file, [], {}, { era })
      : await startStdio(file, [], { era });
  return proxy;
}

const call = (method: string, args: Record<string, unknown> = {}) =>
  proxy!.client.callTool({ name: "call", arguments: { method, arguments: args } });

async function healthz(): Promise<{
  status: string;
  servers: Record<string, { status: string; error?: string; stderrLines?: { dropped: number } }>;
}> {
  const res = await fetch((proxy as RunningHttp).url.replace(/\/mcp$/, "/healthz"));
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

async function othersStillWork() {
  expect(text(await call("ok.echo", { message: "still here" }))).toBe("still here");
}

describe.each(ERAS)("faults, %s client", (era) => {
  it("a crash in the middle of a call", async () => {
    // isolated: the next call gets a fresh session (client sessions say so: stateful.test.ts).
    await start(era, { f: { ...fixtureServer("faulty.mjs"), session: "isolated" } });
    const r = await call("f.crash");
    expect(r.isError).toBe(true);
    expect(text(r)).toContain(
      'Server "f" closed the connection during crash (it may have crashed)',
    );
    await othersStillWork();
    // Recovery: the next call gets a fresh session.
    expect(text(await call("f.echo", { message: "after the crash" }))).toBe("after the crash");
  });

  it("an upstream that hangs forever: timeout, and its session is killed", async () => {
    // isolated: the timed-out call's session is killed (a client's session is kept).
    await start(era, {
      f: { ...fixtureServer("faulty.mjs"), timeout: 500, prewarm: 0, session: "isolated" },
    });
    const earlier = descendants(proxy!.pid);
    const before = earlier.length;
    const hanging = call("f.hang");
    // A new process, not a higher count: a background look for tools' needs may end meanwhile.
    await eventually(
      () => descendants(proxy!.pid).some((p) => !earlier.includes(p)),
      10_000,
      "the call's process",
    );
    const theCall = descendants(proxy!.pid).filter((p) => !seen.includes(p));
    seen.push(...theCall);
    const r = await hanging;
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('Server "f" did not answer hang within 500 ms');
    // Its process is killed; a background look for tools' needs (capability-tools.ts) may have
    // come and gone meanwhile, so the count may also end below where it was.
    await eventually(
      () => theCall.some((p) => !isAlive(p)) && descendants(proxy!.pid).length <= before,
      10_000,
      "the hung session to be killed",
    );
    await othersStillWork();
    expect(text(await call("f.echo", { message: "fine" }))).toBe("fine");
  });

  it("garbage and partial JSON on stdout", async () => {
    await start(era, { f: fixtureServer("faulty.mjs", { FAULT_NOISY_STDOUT: "1" }) });
    expect(text(await call("f.echo", { message: "through the noise" }))).toBe("through the noise");
    await othersStillWork();
  });

  it("exits at startup, then succeeds on retry: down → ready, list_changed sent", async () => {
    const state = path.join(tempDir(), "starts");
    await start(
      era,
      // Two failing starts: a stdio server that ends during the era probe is started once more
      // as a legacy server before mcpx calls it down.
      { f: fixtureServer("faulty.mjs", { FAULT_FAIL_STARTS: "2", FAULT_STATE_FILE: state }) },
      // The first retry comes at least 1.1 s after startup (1.5 s - 25% jitter): time to look.
      { health: { retryInitial: 1500 } },
    );
    // The catalog each list_changed leads to: the one that says "down" may itself arrive after
    // this subscription (HTTP streams open late), so wait for one after which f is back.
    const afterChange: Promise<string>[] = [];
    await onToolsChanged(proxy!.client, () =>
      afterChange.push(proxy!.client.listTools().then((r) => r.tools[0]?.description ?? "")),
    );
    const { tools } = await proxy!.client.listTools();
    expect(tools[0]?.description).toMatch(/f \[DOWN: /);
    expect(text(await call("f.echo", { message: "x" }))).toMatch(
      /Server "f" is down since .* mcpx retries it in \d+ s/,
    );
    await vi.waitFor(
      async () => {
        const seen = await Promise.all(afterChange);
        expect(seen.some((d) => d.includes("f: echo"))).toBe(true);
      },
      { timeout: 20_000, interval: 50 },
    );
    const h = await healthz();
    expect(h.servers.f?.status).toBe("ready");
    expect(text(await call("f.echo", { message: "back" }))).toBe("back");
    const after = await proxy!.client.listTools();
    expect(after.tools[0]?.description).toContain("f: echo");
  });

  it("slow startup beyond the discovery timeout", async () => {
    const state = path.join(tempDir(), "starts");
    await start(
      era,
      {
        f: fixtureServer("faulty.mjs", {
          FAULT_START_DELAY_MS: "4000",
          FAULT_SLOW_STARTS: "1",
          FAULT_STATE_FILE: state,
        }),
      },
      { discoveryTimeout: 1000, health: { retryInitial: 2000 } },
    );
    // Startup was not held up by the slow one beyond its timeout, and the others serve (ok, held
    // to the same 1 s, may need its retry on a busy machine: f never starts within it).
    await pollHealth("ok", "ready");
    await othersStillWork();
    expect((await healthz()).servers.f?.error).toContain("did not start within 1000 ms");
    await pollHealth("f", "ready");
    expect(text(await call("f.echo", { message: "caught up" }))).toBe("caught up");
  });

  it("an HTTP upstream that returns 500s, then recovers", async () => {
    const upstream = await startHttpFixture();
    try {
      await start(
        era,
        { remote: { url: upstream.url } },
        {
          health: {
            interval: 200,
            timeout: 500,
            failureThreshold: 2,
            retryInitial: 200,
            retryMax: 400,
          },
        },
      );
      expect(text(await call("remote.echo", { message: "up" }))).toBe("up");
      await fetch(`${upstream.base}/control/fail?status=500`, { method: "POST" });
      const failing = await call("remote.echo", { message: "x" });
      expect(failing.isError).toBe(true);
      expect(text(failing)).toContain('Server "remote"');
      await pollHealth("remote", "down");
      const down = await call("remote.echo", { message: "x" });
      expect(text(down)).toMatch(/Server "remote" is down since/);
      await othersStillWork();
      await fetch(`${upstream.base}/control/recover`, { method: "POST" });
      await pollHealth("remote", "ready");
      // The reconnect replaced the client's upstream session: said first, then the answer.
      const recovered = await call("remote.echo", { message: "recovered" });
      expect(recovered.isError).toBeFalsy();
      expect(text(recovered)).toMatch(
        /^Note from mcpx: server "remote" restarted since your last call \(mcpx reconnected it after it failed health checks\)\..*\nrecovered$/,
      );
      expect(text(await call("remote.echo", { message: "once" }))).toBe("once");
    } finally {
      await stop(upstream.child);
    }
  });

  it("an upstream that floods stderr", async () => {
    await start(era, {
      f: { ...fixtureServer("faulty.mjs", { FAULT_STDERR_FLOOD: "3000" }), session: "shared" },
    });
    for (let i = 0; i < 3; i++)
      expect(text(await call("f.echo", { message: `n${i}` }))).toBe(`n${i}`);
    await othersStillWork();
    // Kept lines are bounded; the rest are counted as dropped, not held in memory.
    const lines = (await healthz()).servers.f?.stderrLines;
    expect(lines?.dropped).toBeGreaterThan(1000);
  });
});

const matrix = (["stdio", "http"] as const).flatMap((t) => ERAS.map((era) => [t, era] as const));

describe.each(matrix)("cancellation over %s, %s client", (transport, era) => {
  it("a cancelled long call, with progress forwarded before the cancel", async () => {
    await start(
      era,
      {
        everything: {
          ...npmServer("@modelcontextprotocol/server-everything", "stdio"),
          prewarm: 0,
          // isolated: the cancelled call's session closes with it.
          session: "isolated",
        },
      },
      {},
      transport,
    );
    const before = descendants(proxy!.pid);
    const controller = new AbortController();
    const progress: number[] = [];
    const running = proxy!.client.callTool(
      {
        name: "call",
        arguments: {
          method: "everything.trigger-long-running-operation",
          // A progress every 100 ms; cancelled after two, long before its 3 s end.
          arguments: { duration: 3, steps: 30 },
        },
      },
      {
        signal: controller.signal,
        onprogress: (p) => {
          progress.push(p.progress);
          if (progress.length === 2) controller.abort("user cancelled");
        },
      },
    );
    await expect(running).rejects.toThrow();
    expect(progress.length).toBeGreaterThanOrEqual(2);
    // The isolated session of the cancelled call is closed: back to where we were.
    await eventually(
      () => descendants(proxy!.pid).length === before.length,
      10_000,
      "the cancelled session to close",
    );
    await othersStillWork();
    expect(text(await call("everything.echo", { message: "after cancel" }))).toContain(
      "after cancel",
    );
  });
});

async function pollHealth(server: string, status: string) {
  await eventually(
    async () => (await healthz()).servers[server]?.status === status,
    15_000,
    `${server} to become ${status}`,
  );
}
