/**
 * mcpx replicas for the tests of issue 31 (replicas sharing state through Redis, behind nginx):
 * one `mcpx <config> --port 0` process each, ready once /healthz says ok (Redis reached too).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { eventually } from "./eventually.js";
import { startNginx, type RunningNginx } from "./nginx.js";
import { cacheEnv, MCPX, stop } from "./proxy.js";
import { startRedis, type RunningRedis } from "./redis.js";

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

/** A real redis-server, two replicas sharing it, and nginx round-robin in front of them. */
export interface ReplicaSet {
  redis: RunningRedis;
  /** The config file both replicas run. */
  file: string;
  replicas: [Replica, Replica];
  nginx: RunningNginx;
  /** Stop nginx, the replicas and Redis. */
  close(): Promise<void>;
}

/**
 * Start a {@link ReplicaSet}: `configFile` writes the replicas' config given Redis's URL and
 * returns its path. `nginx` and `redis` are the binaries (findNginx, findRedis).
 */
export async function startReplicaSet(
  binaries: { nginx: string; redis: string },
  configFile: (redisUrl: string) => string,
): Promise<ReplicaSet> {
  const redis = await startRedis(binaries.redis);
  const file = configFile(redis.url);
  const replicas = await Promise.all([startReplica(file), startReplica(file)]);
  const nginx = await startNginx(binaries.nginx, [replicas[0].port, replicas[1].port]);
  return {
    redis,
    file,
    replicas: [replicas[0], replicas[1]],
    nginx,
    close: async () => {
      await nginx.close();
      await Promise.all(replicas.map((r) => stop(r.child)));
      await redis.stop();
    },
  };
}
