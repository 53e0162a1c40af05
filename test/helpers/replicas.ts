/** mcpx replicas for the tests of replicas sharing state (Redis behind nginx). */
import { spawn, type ChildProcess } from "node:child_process";
import { eventually } from "./eventually.js";
import { cacheEnv, MCPX } from "./proxy.js";

export interface Replica {
  port: number;
  child: ChildProcess;
  stderr(): string;
}

/** `mcpx <file> --port 0`, resolved once it listens and /healthz says ok (Redis reached too). */
export async function startReplica(file: string): Promise<Replica> {
  const child = spawn(process.execPath, [MCPX, file, "--port", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...cacheEnv() },
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      const m = /mcpx listening on (\S+)/.exec(stderr);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}: ${stderr}`)));
  });
  let health: unknown;
  await eventually(
    async () => {
      health = await fetch(new URL("/healthz", url)).then((r) => r.json());
      return (health as { status: string }).status === "ok";
    },
    30_000,
    "the replica to be ready",
  ).catch(() => {
    throw new Error(`replica never ready: ${JSON.stringify(health)}`);
  });
  return { port: Number(new URL(url).port), child, stderr: () => stderr };
}
