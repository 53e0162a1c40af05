/**
 * Graceful shutdown of the built mcpx, with clients of both protocol eras: drain, cancel past
 * the grace period, a second signal. Over HTTP, and draining over stdio too.
 */
import type { ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  descendants,
  ERAS,
  eventually,
  fixtureServer,
  isAlive,
  startHttp,
  startStdio,
  text,
  writeConfig,
} from "../helpers/proxy.js";

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });

describe.each(ERAS)("graceful shutdown over http, %s client", (era) => {
  it("lets an in-flight call finish, refuses new ones, then exits 0 with no upstream left", async () => {
    const proxy = await startHttp(
      writeConfig({ mcpServers: { f: { ...fixtureServer("faulty.mjs"), session: "shared" } } }),
      [],
      {},
      { era },
    );
    try {
      const slow = proxy.client.callTool({
        name: "call",
        arguments: { method: "f.slow", arguments: { ms: 1500 } },
      });
      await inFlight(proxy.url);
      const children = descendants(proxy.pid);
      proxy.child.kill("SIGTERM");
      await eventually(
        () => proxy.stderr().includes("shutting down (SIGTERM)"),
        5_000,
        "shutdown to begin",
      );
      const refused = await proxy.client.callTool({
        name: "call",
        arguments: { method: "f.echo", arguments: { message: "x" } },
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain("mcpx is shutting down");
      expect(text(await slow)).toBe("slept 1500 ms");
      expect(await exited(proxy.child)).toBe(0);
      await eventually(() => children.every((p) => !isAlive(p)), 10_000, "upstreams to exit");
    } finally {
      proxy.child.kill("SIGKILL");
    }
  });

  it("cancels calls still running after the grace period", async () => {
    const proxy = await startHttp(
      writeConfig({
        mcpServers: { f: { ...fixtureServer("faulty.mjs"), session: "shared" } },
        shutdownGrace: 300,
      }),
      [],
      {},
      { era },
    );
    try {
      const slow = proxy.client.callTool({
        name: "call",
        arguments: { method: "f.slow", arguments: { ms: 20_000 } },
      });
      await inFlight(proxy.url);
      const started = Date.now();
      proxy.child.kill("SIGTERM");
      const result = await slow;
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("cancelled: mcpx is shutting down");
      expect(await exited(proxy.child)).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      proxy.child.kill("SIGKILL");
    }
  });

  it("exits at once on a second signal, killing upstreams that ignore SIGTERM", async () => {
    const proxy = await startHttp(
      writeConfig({
        mcpServers: {
          f: { ...fixtureServer("faulty.mjs", { FAULT_IGNORE_SIGTERM: "1" }), session: "shared" },
        },
        shutdownGrace: 30_000,
      }),
      [],
      {},
      { era },
    );
    try {
      const slow = proxy.client.callTool({
        name: "call",
        arguments: { method: "f.slow", arguments: { ms: 20_000 } },
      });
      slow.catch(() => {}); // the connection drops with the process
      // The call holds its session (discovery started the upstream before any call).
      await inFlight(proxy.url);
      const children = descendants(proxy.pid);
      proxy.child.kill("SIGTERM");
      await eventually(
        () => proxy.stderr().includes("shutting down (SIGTERM)"),
        5_000,
        "shutdown to begin",
      );
      const started = Date.now();
      proxy.child.kill("SIGTERM");
      expect(await exited(proxy.child)).toBe(1);
      expect(Date.now() - started).toBeLessThan(3_000);
      await eventually(() => children.every((p) => !isAlive(p)), 5_000, "upstreams to be killed");
    } finally {
      proxy.child.kill("SIGKILL");
    }
  });
});

describe.each(ERAS)("graceful shutdown over stdio, %s client", (era) => {
  it("lets an in-flight call finish, refuses new ones, then exits with no upstream left", async () => {
    const proxy = await startStdio(
      writeConfig({ mcpServers: { f: { ...fixtureServer("faulty.mjs"), session: "shared" } } }),
      [],
      { era },
    );
    try {
      // The first progress from f says the call is in flight.
      let inFlight = () => {};
      const progressed = new Promise<void>((resolve) => (inFlight = resolve));
      const slow = proxy.client.callTool(
        { name: "call", arguments: { method: "f.slow", arguments: { ms: 1500 } } },
        { onprogress: () => inFlight() },
      );
      await Promise.race([
        progressed,
        slow.then((r) => {
          throw new Error(`the call ended before it was under way: ${text(r)}`);
        }),
      ]);
      const children = descendants(proxy.pid);
      process.kill(proxy.pid, "SIGTERM");
      await eventually(
        () => proxy.stderr().includes("shutting down (SIGTERM)"),
        5_000,
        "shutdown to begin",
      );
      const refused = await proxy.client.callTool({
        name: "call",
        arguments: { method: "f.echo", arguments: { message: "x" } },
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain("mcpx is shutting down");
      expect(text(await slow)).toBe("slept 1500 ms");
      await eventually(() => !isAlive(proxy.pid), 10_000, "mcpx to exit");
      expect(proxy.stderr()).not.toContain("PROTOCOL ERROR");
      await eventually(() => children.every((p) => !isAlive(p)), 10_000, "upstreams to exit");
    } finally {
      if (isAlive(proxy.pid)) process.kill(proxy.pid, "SIGKILL");
      await proxy.close();
    }
  });
});

/** Wait until /healthz shows a call holding a session of server f. */
async function inFlight(url: string): Promise<void> {
  const leased = async () => {
    const res = await fetch(url.replace(/\/mcp$/, "/healthz"));
    const body = (await res.json()) as { servers: { f?: { sessions?: { leased: number } } } };
    return (body.servers.f?.sessions?.leased ?? 0) > 0;
  };
  await eventually(leased, 10_000, "the call to reach the upstream");
}
