/**
 * A real nginx in front of mcpx replicas, run from examples/nginx/mcpx.conf: its own master
 * process (`-p <temp prefix> -c <temp conf>`, no daemon, one worker) on a free loopback port,
 * never the system service. And a fetch that sends one request at a time, so nginx sees the
 * requests in the order they are recorded.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import getPort from "get-port";
import { descendants, isAlive, ROOT, stop } from "./proxy.js";
import { tempDir } from "./temp.js";
import { eventually } from "./eventually.js";

export const EXAMPLE_CONF = path.join(ROOT, "examples/nginx/mcpx.conf");

/**
 * The nginx binary (MCPX_NGINX, else PATH or /usr/sbin, where Debian puts it), or undefined when
 * it is not installed.
 */
export function findNginx(): string | undefined {
  const candidates = process.env.MCPX_NGINX
    ? [process.env.MCPX_NGINX]
    : ["nginx", "/usr/sbin/nginx", "/usr/local/sbin/nginx"];
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ["-v"], { stdio: "ignore" });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

export interface RunningNginx {
  /** http://127.0.0.1:<port> */
  base: string;
  pid: number;
  /** nginx's error log so far. */
  errors(): string;
  /** Fast shutdown (SIGTERM); resolves once the master and its workers are gone. */
  close(): Promise<void>;
}

/**
 * examples/nginx/mcpx.conf with its example ports replaced: the listen port by `listen`, the
 * two replica ports by `replicas`. Throws when the example no longer has those ports (the test
 * must run the shipped file, not a copy that drifted).
 */
export function exampleConf(listen: number, replicas: [number, number]): string {
  let conf = readFileSync(EXAMPLE_CONF, "utf8");
  const swaps: [string, number][] = [
    ["listen 127.0.0.1:3000;", listen],
    ["server 127.0.0.1:3001;", replicas[0]],
    ["server 127.0.0.1:3002;", replicas[1]],
  ];
  for (const [from, port] of swaps) {
    if (!conf.includes(from)) throw new Error(`${EXAMPLE_CONF} no longer has "${from}"`);
    conf = conf.replace(from, from.replace(/:\d+;/, `:${port};`));
  }
  return conf;
}

/**
 * Start nginx with the example config in front of the replicas on `replicaPorts`; `connections`
 * per worker (each client takes two: its own and one to a replica).
 */
export async function startNginx(
  binary: string,
  replicaPorts: [number, number],
  connections = 64,
): Promise<RunningNginx> {
  const prefix = tempDir("mcpx-nginx-");
  const port = await getPort({ host: "127.0.0.1" });
  writeFileSync(path.join(prefix, "mcpx.conf"), exampleConf(port, replicaPorts));
  const errorLog = path.join(prefix, "error.log");
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${path.join(prefix, t)};`)
    .join("\n");
  writeFileSync(
    path.join(prefix, "nginx.conf"),
    [
      "daemon off;",
      "worker_processes 1;",
      // As root, workers would switch to an unprivileged user that cannot enter the temp folder.
      process.getuid?.() === 0 ? "user root root;" : "",
      `pid ${path.join(prefix, "nginx.pid")};`,
      `error_log ${errorLog} notice;`,
      `events { worker_connections ${connections}; }`,
      "http {",
      `  access_log ${path.join(prefix, "access.log")};`,
      temp,
      `  include ${path.join(prefix, "mcpx.conf")};`,
      "}",
    ].join("\n"),
  );
  const child = spawn(
    binary,
    ["-p", `${prefix}/`, "-c", path.join(prefix, "nginx.conf"), "-e", errorLog],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const errors = () => {
    try {
      return stderr + readFileSync(errorLog, "utf8");
    } catch {
      return stderr;
    }
  };
  const base = `http://127.0.0.1:${port}`;
  await untilServing(base, child, errors);
  return { base, pid: child.pid!, errors, close: () => stopNginx(child) };
}

/** Poll /healthz through nginx until a replica answers; fail at once if nginx exits. */
async function untilServing(base: string, child: ChildProcess, errors: () => string) {
  const serving = async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${errors()}`);
    return fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  };
  await eventually(serving, 15_000, `nginx to serve ${base}`).catch((err: unknown) => {
    // The timeout says what nginx logged by then; an exit already did.
    if (child.exitCode !== null) throw err;
    throw new Error(`nginx did not serve ${base}: ${errors()}`, { cause: err });
  });
}

async function stopNginx(child: ChildProcess): Promise<void> {
  const workers = child.pid === undefined ? [] : descendants(child.pid);
  await stop(child);
  const left = workers.filter(isAlive);
  if (left.length) throw new Error(`nginx workers outlived their master: ${left.join(", ")}`);
}

/** One request as the load balancer answered it. */
export interface Served {
  /** The replica's address, from nginx's X-Replica header. */
  replica: string;
  /** HTTP method, and the JSON-RPC method of a POST ("response", "batch" otherwise). */
  http: string;
  rpc: string;
  status: number;
  path: string;
}

/**
 * A fetch for SDK client transports that sends one request at a time: the next goes out only
 * once the previous one has its response headers (a stream's headers come at once). nginx then
 * picks a replica for each request in the order `served` records.
 */
export function serialFetch() {
  const served: Served[] = [];
  let previous: Promise<unknown> = Promise.resolve();
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const turn = previous;
    let done!: () => void;
    previous = new Promise<void>((resolve) => (done = resolve));
    await turn;
    try {
      const url = new URL(input instanceof Request ? input.url : input);
      const res = await fetch(input, init);
      served.push({
        replica: res.headers.get("x-replica") ?? "(none)",
        http: init?.method ?? "GET",
        rpc: rpcOf(init?.body),
        status: res.status,
        path: url.pathname,
      });
      return res;
    } finally {
      done();
    }
  };
  return { fetch: fetchImpl, served };
}

function rpcOf(body: unknown): string {
  if (typeof body !== "string") return "";
  try {
    const parsed = JSON.parse(body) as { method?: string } | unknown[];
    if (Array.isArray(parsed)) return "batch";
    return parsed.method ?? "response";
  } catch {
    return "";
  }
}
