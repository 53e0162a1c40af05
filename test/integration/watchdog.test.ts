/**
 * Upstreams end with mcpx however it dies: the built mcpx, three real stdio upstreams (one that
 * ignores SIGTERM and stdin EOF), SIGKILL, and /proc as the witness.
 */
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  cacheEnv,
  descendants,
  eventually,
  fixtureServer,
  INITIALIZE,
  MCPX,
  npmServer,
  startHttp,
  startStdio,
  stop,
  watchdogOf,
  tempDir,
  writeConfig,
} from "../helpers/proxy.js";

/**
 * mcpx's watchdog, once it runs: mcpx starts it just after the first upstream (it watches that
 * upstream's process group), so it may be a moment behind the upstream a test waited for.
 */
async function watchdogOnce(pid: number): Promise<number> {
  let found: number | undefined;
  await eventually(() => (found = watchdogOf(pid)) !== undefined, 10_000, "the watchdog");
  return found!;
}

/** Config files in temp folders of their own, removed after the tests. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function config(value: unknown): string {
  const dir = tempDir();
  dirs.push(dir);
  return writeConfig(value, dir);
}

/** Running: exists and is not a zombie (an orphan's zombie may never be reaped in a container). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function pgidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

/**
 * mcpx over stdio, spawned raw (the test controls both pipes), after its answer to `initialize`
 * and with its one upstream running: that upstream's pid, stderr so far, and its exit.
 */
async function initialized(file: string, args: string[] = []) {
  const child = spawn(process.execPath, [MCPX, file, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", ...cacheEnv(), TMPDIR: tempDir() },
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let exit: number | string | undefined;
  child.once("exit", (code, signal) => (exit = code ?? signal ?? undefined));
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  try {
    await eventually(() => out.includes('"id":1'), 20_000, "the answer to initialize");
    await eventually(() => descendants(child.pid!).length === 1, 20_000, "the upstream");
  } catch (err) {
    await stop(child);
    throw err;
  }
  return {
    child,
    upstreams: descendants(child.pid!),
    stderr: () => stderr,
    /** mcpx's exit code (or signal), once it exited. */
    exited: async () => {
      await eventually(() => exit !== undefined, 20_000, "mcpx to exit");
      return exit;
    },
  };
}

const servers = {
  everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
  memory: npmServer("@modelcontextprotocol/server-memory"),
  stubborn: fixtureServer("faulty.mjs", { FAULT_IGNORE_SIGTERM: "1" }),
};

describe("upstreams end with mcpx", () => {
  it("ends every upstream, one that ignores SIGTERM and stdin EOF included, when mcpx is SIGKILLed", async () => {
    const file = config({ mcpServers: servers });
    const proxy = await startHttp(file);
    let recorded: number[] = [];
    try {
      // One warm session each (stdio pre-warms one spare).
      await eventually(() => descendants(proxy.pid).length === 3, 20_000, "three upstreams");
      const watchdog = await watchdogOnce(proxy.pid);
      recorded = [...descendants(proxy.pid), watchdog];
      // A session and process group of its own: signals to mcpx's group miss it.
      expect(pgidOf(watchdog)).not.toBe(pgidOf(proxy.pid));

      proxy.child.kill("SIGKILL");
      await new Promise((r) => proxy.child.once("exit", r));
      await eventually(
        () => recorded.every((p) => !running(p)),
        15_000,
        "the upstreams and the watchdog to end",
      );
    } finally {
      proxy.child.kill("SIGKILL");
      for (const pid of recorded.filter(running)) process.kill(pid, "SIGKILL");
    }
  }, 60_000);
});

describe("the watchdog after a normal shutdown", () => {
  it("is gone when mcpx exits on SIGTERM", async () => {
    const proxy = await startHttp(config({ mcpServers: servers }));
    try {
      await eventually(() => descendants(proxy.pid).length === 3, 20_000, "three upstreams");
      const watchdog = await watchdogOnce(proxy.pid);
      const upstreams = descendants(proxy.pid);
      proxy.child.kill("SIGTERM");
      const code = await new Promise((r) => proxy.child.once("exit", r));
      expect(code).toBe(0);
      // mcpx waited for it: gone the moment mcpx is, no polling.
      expect(running(watchdog)).toBe(false);
      expect(upstreams.filter(running)).toEqual([]);
    } finally {
      proxy.child.kill("SIGKILL");
    }
  }, 60_000);

  it("is gone when mcpx exits because its stdio client closed stdin", async () => {
    const proxy = await startStdio(
      config({ mcpServers: { memory: npmServer("@modelcontextprotocol/server-memory") } }),
    );
    await eventually(() => descendants(proxy.pid).length === 1, 20_000, "the upstream");
    const watchdog = await watchdogOnce(proxy.pid);
    // The SDK client ends stdin, then signals after a grace period; mcpx exits on the EOF.
    await proxy.close();
    await eventually(() => !running(proxy.pid), 10_000, "mcpx to exit");
    expect(running(watchdog)).toBe(false);
  }, 60_000);

  it("ends an upstream still starting when its client leaves, without calling it failed", async () => {
    const file = config({
      mcpServers: {
        // Never answers initialize: the file it waits for is never made.
        pending: fixtureServer("faulty.mjs", { FAULT_START_UNTIL: path.join(tempDir(), "never") }),
      },
    });
    const { child, upstreams, stderr, exited } = await initialized(file);
    try {
      child.stdin.end();
      expect(await exited()).toBe(0);
      expect(upstreams.filter(running)).toEqual([]);
      expect(stderr()).toContain("shutting down");
      expect(stderr()).not.toContain("failed to start");
    } finally {
      await stop(child);
    }
  }, 60_000);

  it("is gone, its upstream too, when its stdio client stops reading (EPIPE on stdout)", async () => {
    const file = config({
      mcpServers: { memory: npmServer("@modelcontextprotocol/server-memory") },
    });
    const { child, upstreams, stderr, exited } = await initialized(file, ["--log-level", "debug"]);
    try {
      const watchdog = await watchdogOnce(child.pid!);
      // The client closes its end of mcpx's stdout but keeps stdin open: the next answer fails.
      child.stdout.destroy();
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })}\n`);
      expect(await exited()).toBe(0);
      expect(upstreams.filter(running)).toEqual([]);
      expect(running(watchdog)).toBe(false);
      expect(stderr()).toContain("EPIPE");
    } finally {
      await stop(child);
    }
  }, 60_000);
});
