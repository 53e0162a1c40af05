/**
 * The watchdog in-process: real processes, a real /bin/sh, /proc as the witness. (The SIGKILL of
 * a whole mcpx is in test/integration/watchdog.test.ts.)
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ChildTracker } from "../../src/upstream/transport.js";
import { eventually, FIXTURES, watchdogOf } from "../helpers/proxy.js";

describe("watchdog", () => {
  it("is replaced when killed from outside, and the replacement still ends every group", async () => {
    const tracker = new ChildTracker();
    // Ignores SIGTERM and stdin EOF: only the SIGKILL after the grace period ends it.
    const child = spawn(process.execPath, [path.join(FIXTURES, "faulty.mjs")], {
      env: { ...process.env, FAULT_IGNORE_SIGTERM: "1" },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    const ended = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, signal) => resolve(signal)),
    );
    try {
      // It says so once its SIGTERM handler is in place.
      await new Promise<void>((resolve) => {
        let stderr = "";
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes("fixture pid")) resolve();
        });
      });
      tracker.add(child);
      await eventually(() => watchdogOf(process.pid) !== undefined, 5_000, "the watchdog");
      const first = watchdogOf(process.pid)!;
      process.kill(first, "SIGKILL");
      await eventually(
        () => ![undefined, first].includes(watchdogOf(process.pid)),
        5_000,
        "a new watchdog",
      );
      // The child is still registered: stopping the watchdog makes it end the child's group.
      await tracker.close();
      expect(await ended).toBe("SIGKILL");
      expect(watchdogOf(process.pid)).toBeUndefined();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 20_000);
});
