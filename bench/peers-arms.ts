/**
 * The arms of the peers bench: server-everything served over HTTP by itself and behind each
 * proxy a user could pick instead of mcpx (mcp-hub, mcp-proxy, supergateway: devDependencies,
 * started offline from node_modules), behind mcpx, and the minimal SDK echo server alone and
 * behind mcpx. Each arm is one process group, stopped as a whole (supergateway's stateful mode
 * spawns one server per session).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import getPort from "get-port";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ECHO_SERVER, MCPX } from "./speed-arms.js";
import { resultText, ROOT } from "./upstreams.js";

const HOST = "127.0.0.1";
export const EVERYTHING = path.join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const bin = (rel: string) => path.join(ROOT, "node_modules", rel);

/** A started arm: where its clients connect and how they call echo. */
export interface Peer {
  name: string;
  /** The process serving HTTP (its RSS is the arm's memory). */
  pid: number;
  url: string;
  /** mcp-hub serves only the deprecated HTTP+SSE transport. */
  sse: boolean;
  /** The tool call that echoes `message`, and the text the answer must be. */
  request(message: string): { name: string; arguments: Record<string, unknown> };
  expect(message: string): string;
  stop(): Promise<void>;
}

interface Started {
  pid: number;
  match: RegExpExecArray;
  stop(): Promise<void>;
}

/**
 * `node <args>` in a process group of its own, resolved once its output matches `ready`. Output
 * keeps being read afterwards (a full pipe would stall the server). `stop` ends the group:
 * SIGTERM, then SIGKILL after 5 s.
 */
async function start(args: string[], ready: RegExp, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "";
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    let found = false;
    const onData = (c: Buffer) => {
      if (found) return;
      out += c.toString();
      const m = ready.exec(out);
      if (m) {
        found = true;
        out = "";
        resolve(m);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited with ${code}: ${out}`)),
    );
  });
  const group = (signal: NodeJS.Signals | 0) => {
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false; // no process left in the group
    }
  };
  return {
    pid,
    match,
    stop: async () => {
      group("SIGTERM");
      await exited;
      const deadline = Date.now() + 5_000;
      while (group(0) && Date.now() < deadline) await sleep(50);
      group("SIGKILL");
    },
  } satisfies Started;
}

const direct = {
  request: (message: string) => ({ name: "echo", arguments: { message } }),
  expect: (message: string) => `Echo: ${message}`,
};
const viaMcpx = (server: string, expect: (m: string) => string) => ({
  request: (message: string) => ({
    name: "call",
    arguments: { method: `${server}.echo`, arguments: { message } },
  }),
  expect,
});

/** server-everything's own streamable HTTP (express, stateful). */
async function everythingDirect(): Promise<Peer> {
  const port = await getPort({ host: HOST });
  const p = await start([EVERYTHING, "streamableHttp"], /listening on port/, {
    PORT: String(port),
  });
  return {
    name: "server-everything direct",
    sse: false,
    url: `http://${HOST}:${port}/mcp`,
    ...p,
    ...direct,
  };
}

async function mcpProxy(): Promise<Peer> {
  const port = await getPort({ host: HOST });
  const p = await start(
    [
      bin("mcp-proxy/dist/bin/mcp-proxy.mjs"),
      "--port",
      String(port),
      "--host",
      HOST,
      "--",
      process.execPath,
      EVERYTHING,
      "stdio",
    ],
    /starting server on port/,
  );
  return {
    name: "mcp-proxy 6.7.19",
    sse: false,
    url: `http://${HOST}:${port}/mcp`,
    ...p,
    ...direct,
  };
}

async function supergateway(): Promise<Peer> {
  const port = await getPort({ host: HOST });
  const p = await start(
    [
      bin("supergateway/dist/index.js"),
      "--stdio",
      `"${process.execPath}" "${EVERYTHING}" stdio`,
      "--outputTransport",
      "streamableHttp",
      "--stateful",
      "--port",
      String(port),
      "--logLevel",
      "info",
    ],
    /Listening on port/,
  );
  return {
    name: "supergateway 4.0.0 (stateful)",
    sse: false,
    url: `http://${HOST}:${port}/mcp`,
    ...p,
    ...direct,
  };
}

/**
 * mcp-hub fetches its marketplace registry at startup unless a fresh copy is cached: the cache
 * (`$XDG_DATA_HOME/mcp-hub/cache/registry.json`, fresh for an hour and when it lists a server)
 * is seeded in `dir`, and HOME and the XDG folders point there, so it never reaches the network
 * and writes nothing of the user's.
 */
async function mcpHub(dir: string): Promise<Peer> {
  const home = path.join(dir, "mcp-hub-home");
  const cache = path.join(home, "data/mcp-hub/cache");
  mkdirSync(cache, { recursive: true });
  writeFileSync(
    path.join(cache, "registry.json"),
    JSON.stringify({
      registry: { servers: [{ id: "seed", name: "seed" }] },
      lastFetchedAt: Date.now(),
      serverDocumentation: {},
    }),
  );
  const config = path.join(home, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
    }),
  );
  const port = await getPort({ host: HOST });
  const p = await start(
    [bin("mcp-hub/dist/cli.js"), "--port", String(port), "--config", config],
    /servers started successfully/,
    {
      HOME: home,
      XDG_DATA_HOME: path.join(home, "data"),
      XDG_STATE_HOME: path.join(home, "state"),
      XDG_CONFIG_HOME: path.join(home, "config"),
    },
  );
  const peer = {
    name: "mcp-hub 4.2.1 (HTTP+SSE)",
    sse: true,
    url: `http://${HOST}:${port}/mcp`,
    ...p,
  };
  // The hub names each tool after its server; ask which name echo has.
  const probe = await connect(peer);
  const { tools } = await probe.listTools();
  await probe.close();
  const name = tools.find((t) => t.name.endsWith("echo"))?.name;
  if (name === undefined)
    throw new Error(`mcp-hub lists no echo tool: ${tools.map((t) => t.name).join(", ")}`);
  return {
    ...peer,
    request: (message) => ({ name, arguments: { message } }),
    expect: direct.expect,
  };
}

/** The built mcpx over HTTP with `server` as its one `"session": "shared"` stdio upstream. */
async function mcpx(dir: string, name: string, server: string, args: string[]): Promise<Peer> {
  const home = path.join(dir, `mcpx-${server}`);
  mkdirSync(home, { recursive: true });
  const config = path.join(home, "mcpx.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { [server]: { command: process.execPath, args, session: "shared" } },
    }),
  );
  const p = await start(
    [MCPX, config, "--port", "0", "--log-level", "warn"],
    /mcpx listening on (\S+)/,
    {
      XDG_CACHE_HOME: path.join(home, "cache"),
      XDG_STATE_HOME: path.join(home, "state"),
    },
  );
  const expect = server === "everything" ? direct.expect : (m: string) => m;
  const peer: Peer = { name, sse: false, url: p.match[1]!, ...p, ...viaMcpx(server, expect) };
  const probe = await connect(peer);
  try {
    await untilStarted(probe);
  } finally {
    await probe.close();
  }
  return peer;
}

/** bench/echo-server.mjs on node:http: the floor any SDK-based HTTP server can reach. */
async function echoServer(): Promise<Peer> {
  const p = await start([ECHO_SERVER], /listening (\d+)/, { PORT: "0" });
  return {
    name: "SDK echo server",
    sse: false,
    url: `http://${HOST}:${p.match[1]}/mcp`,
    ...p,
    request: (message) => ({ name: "echo", arguments: { message } }),
    expect: (m) => m,
  };
}

/** The arms, in report order; `key` names them in the tables. */
export const ARMS = {
  direct: () => everythingDirect(),
  hub: (dir: string) => mcpHub(dir),
  proxy: () => mcpProxy(),
  gateway: () => supergateway(),
  mcpx: (dir: string) => mcpx(dir, "mcpx (shared)", "everything", [EVERYTHING, "stdio"]),
  echo: () => echoServer(),
  mcpxEcho: (dir: string) => mcpx(dir, "mcpx (shared) → echo server", "echo", [ECHO_SERVER]),
} satisfies Record<string, (dir: string) => Promise<Peer>>;

export type ArmKey = keyof typeof ARMS;

/** An SDK 1.x client of `peer`, over its transport. */
export async function connect(peer: Pick<Peer, "url" | "sse">): Promise<Client> {
  const client = new Client({ name: "mcpx-bench-peers", version: "1.0.0" });
  const url = new URL(peer.url);
  await client.connect(
    peer.sse ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url),
  );
  return client;
}

/** `connect`, retried for up to 30 s while the server is not listening yet. */
export async function connectRetrying(peer: Peer): Promise<Client> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await connect(peer);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

/** One checked call: a wrong or failed answer throws. */
export async function checkedCall(client: Client, peer: Peer, message: string): Promise<void> {
  const result = await client.callTool(peer.request(message));
  const text = resultText(result);
  if (result.isError || text !== peer.expect(message))
    throw new Error(`${peer.name} answered ${JSON.stringify(result).slice(0, 300)}`);
}

/** mcpx's upstreams are ready when its catalog marks none as starting. */
async function untilStarted(client: Client): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { tools } = await client.listTools();
    if (!(tools.find((t) => t.name === "describe")?.description ?? "").includes("[starting]"))
      return;
    if (Date.now() > deadline) throw new Error("mcpx's upstream did not start in 30 s");
    await sleep(20);
  }
}
