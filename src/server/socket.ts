/**
 * The daemon's side of `mcpx <config> --daemon`: a Unix socket where each connection is one MCP
 * client of this process (after one control line, src/daemon/wire.ts), served exactly as a stdio
 * client is: its own caller, its own `client`-policy upstream sessions, logging level, roots and
 * mid-call answers. The socket is 0600 in a 0700 folder of the user: nobody else gets in.
 */
import { chmodSync, unlinkSync } from "node:fs";
import net from "node:net";
import type { DaemonPaths } from "../daemon/paths.js";
import { ensureDaemonDir } from "../daemon/paths.js";
import {
  LineReader,
  MAX_LINE_BYTES,
  parseControl,
  type ControlAnswer,
  type DaemonStatus,
} from "../daemon/wire.js";
import { errorMessage } from "../errors.js";
import { VERSION } from "../version.js";
import type { ProxyContext } from "./context.js";
import { serveConnection } from "./stdio.js";
import { LineTransport } from "./stdio-transport.js";

/** How long a connection whose transport ended may take to close before it is destroyed. */
const ENDED_GRACE_MS = 10_000;

export interface SocketOptions {
  paths: DaemonPaths;
  /** Exit after this long with no client (ms). */
  idleMs: number;
  /** Shut the daemon down (idle, `mcpx daemon stop`, retired and empty). */
  shutdown: (why: string) => void;
}

export interface SocketHandle {
  close(): Promise<void>;
}

/** Listen on the config's socket; rejects when another live daemon holds it. */
export async function serveSocket(
  ctx: ProxyContext,
  options: SocketOptions,
): Promise<SocketHandle> {
  const { paths, idleMs, shutdown } = options;
  ensureDaemonDir(paths.dir);
  const started = new Date().toISOString();
  const clients = new Set<net.Socket>();
  let retired = false;
  let idle: NodeJS.Timeout | undefined;
  const armIdle = () => {
    clearTimeout(idle);
    if (clients.size > 0) return;
    if (retired) return shutdown("retired, and its last client left");
    idle = setTimeout(() => shutdown(`no client for ${idleMs} ms`), idleMs);
  };

  const status = (): DaemonStatus => ({
    pid: process.pid,
    version: VERSION,
    config: paths.config,
    started,
    clients: clients.size,
    upstreams: ctx.registry.servers().map((s) => ({
      name: s.name,
      status: s.status,
      running: s.running !== false,
      tools: s.tools.length,
    })),
  });

  const server = net.createServer((socket) => {
    const reader = new LineReader(MAX_LINE_BYTES);
    const answer = (a: ControlAnswer) => socket.write(`${JSON.stringify(a)}\n`);
    const onData = (chunk: Buffer) => {
      const [first] = reader.push(chunk);
      // A control line past the bound is no control line: the connection ends.
      if (first === undefined && reader.dropping) return void socket.destroy();
      if (first === undefined) return;
      socket.off("data", onData);
      socket.pause();
      const control = parseControl(first);
      switch (control?.mcpx) {
        case "attach":
          return attach(socket, control.caller, reader.rest());
        case "status":
          answer({ mcpx: "status", ...status() });
          return socket.end();
        case "stop":
          answer({ mcpx: "stopping" });
          socket.end();
          return shutdown("mcpx daemon stop");
        case "retire":
          // New shims start a new daemon at this path; this one ends with its last client.
          retired = true;
          unlinkQuietly(paths.socket);
          server.close();
          answer({ mcpx: "retiring" });
          socket.end();
          return armIdle();
        default:
          answer({ mcpx: "refused", reason: "the first line must be an mcpx control line" });
          return socket.end();
      }
    };
    socket.on("data", onData);
    socket.on("error", (err) => ctx.logger.debug(`daemon socket: ${errorMessage(err)}`));
  });

  const attach = (socket: net.Socket, caller: string | undefined, rest: string) => {
    clients.add(socket);
    clearTimeout(idle);
    socket.write(
      `${JSON.stringify({ mcpx: "attached", version: VERSION, pid: process.pid } satisfies ControlAnswer)}\n`,
    );
    if (rest !== "") socket.unshift(Buffer.from(rest));
    const transport = new LineTransport(socket, socket);
    const served = serveConnection(ctx, transport, {
      ...(caller !== undefined && { caller }),
    });
    // A connection that broke (an overlong line, a failed start) ends: the shim sees it close and
    // attaches again. What it still sends is read and dropped: a socket left unread would never
    // see the shim's end (its unsent bytes wait for us), and neither side would close.
    void transport.ended.then(() => {
      socket.end();
      socket.resume();
      // A peer that never closes its side is not kept for ever.
      setTimeout(() => socket.destroy(), ENDED_GRACE_MS).unref();
    });
    socket.resume();
    ctx.logger.info(`client attached (${clients.size} attached)`);
    socket.once("close", () => {
      clients.delete(socket);
      void served.close();
      ctx.logger.info(`client detached (${clients.size} attached)`);
      armIdle();
    });
  };

  await listen(server, paths.socket);
  chmodSync(paths.socket, 0o600);
  ctx.logger.info(`daemon listening on ${paths.socket}`);
  armIdle();
  return {
    close: async () => {
      clearTimeout(idle);
      for (const socket of clients) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!retired) unlinkQuietly(paths.socket);
    },
  };
}

/**
 * Listen on `socket`. A socket file left by a dead daemon (nothing answers on it) is replaced;
 * one a live daemon holds is not: this daemon lost the race and rejects.
 */
async function listen(server: net.Server, socket: string): Promise<void> {
  const attempt = () =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => {
        server.off("error", reject);
        resolve();
      });
    });
  try {
    await attempt();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    if (await answers(socket)) throw new Error(`another mcpx daemon serves ${socket}`);
    unlinkQuietly(socket);
    await attempt();
  }
}

/** True when something accepts a connection on `socket`. */
export function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socket);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone.
  }
}
