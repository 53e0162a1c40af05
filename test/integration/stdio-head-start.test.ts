/**
 * Over stdio the upstreams start once mcpx has answered the client's `initialize`: spawning a
 * dozen node servers takes the CPU mcpx needs to answer it. A client that sends nothing does not
 * keep them from starting.
 */
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import {
  cacheEnv,
  descendants,
  eventually,
  MCPX,
  npmServer,
  startStdio,
  stop,
  tempDir,
  writeConfig,
} from "../helpers/proxy.js";

const config = () =>
  writeConfig({
    mcpServers: {
      everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
      memory: npmServer("@modelcontextprotocol/server-memory"),
    },
  });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

describe("stdio: upstreams start after initialize is answered", () => {
  it("logs the answer to initialize before it starts an upstream", async () => {
    const running = await startStdio(config(), ["--log-level", "debug"]);
    cleanups.push(() => running.close());
    const log = running.stderr();
    const answered = log.indexOf("stdio: first answer sent");
    const starting = log.indexOf("starting 2 upstream servers");
    expect(answered).toBeGreaterThanOrEqual(0);
    expect(starting).toBeGreaterThan(answered);
    const { tools } = await running.client.listTools();
    expect(tools.find((t) => t.name === "describe")?.description).toContain("everything");
  });

  it("starts the upstreams of a client that sends nothing", async () => {
    const child = spawn(process.execPath, [MCPX, config()], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", ...cacheEnv(), TMPDIR: tempDir() },
    });
    cleanups.push(() => stop(child));
    await eventually(() => descendants(child.pid!).length >= 2, 20_000, "two upstream processes");
  });
});
