/**
 * A real redis-server for the replicas' shared state (issue 31): its own process on a free
 * loopback port, no persistence, in a temp folder; never the system service. It can be stopped
 * and started again on the same port (an outage the replicas must ride out).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import getPort from "get-port";
import { stop } from "./proxy.js";
import { tempDir } from "./temp.js";

/** The redis-server binary (MCPX_REDIS_SERVER, else PATH), or undefined when not installed. */
export function findRedis(): string | undefined {
  const binary = process.env.MCPX_REDIS_SERVER ?? "redis-server";
  return spawnSync(binary, ["--version"], { stdio: "ignore" }).status === 0 ? binary : undefined;
}

export interface RunningRedis {
  port: number;
  /** redis://127.0.0.1:<port>/0 */
  url: string;
  /** Stop the server (SIGTERM) and wait for its exit. */
  stop(): Promise<void>;
  /** Start it again on the same port, empty (no persistence). */
  start(): Promise<void>;
}

export async function startRedis(binary = "redis-server"): Promise<RunningRedis> {
  const dir = tempDir("mcpx-redis-");
  const port = await getPort({ host: "127.0.0.1" });
  let child: ChildProcess | undefined;
  const start = async () => {
    child = await launch(binary, port, dir);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    stop: async () => {
      if (child) await stop(child);
      child = undefined;
    },
    start,
  };
}

/** Resolves once the server says it accepts connections; rejects when it exits first. */
function launch(binary: string, port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    binary,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      if (out.includes("Ready to accept connections")) resolve(child);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
}
