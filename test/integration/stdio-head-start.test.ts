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
  INITIALIZE,
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

  it("a call sent with initialize, before any upstream started, waits for its server", async () => {
    const child = spawn(process.execPath, [MCPX, config()], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", ...cacheEnv(), TMPDIR: tempDir() },
    });
    cleanups.push(() => stop(child));
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    // One write: mcpx reads the call before it starts the upstreams (once initialize is answered).
    child.stdin.write(
      [
        INITIALIZE,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "call", arguments: { method: "memory.read_graph", arguments: {} } },
        },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(""),
    );
    const answer = () =>
      out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { id?: number; result?: { content: { text: string }[] } })
        .find((m) => m.id === 2);
    await eventually(() => answer() !== undefined, 20_000, "the answer to the call");
    expect(answer()?.result?.content[0]?.text).toContain("entities");
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
