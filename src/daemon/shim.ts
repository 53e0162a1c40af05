/**
 * `mcpx <config> --daemon`: what a client launches. It serves nothing itself: it attaches to the
 * daemon of that config file (starting one, detached, when none answers) and relays the client's
 * stdio MCP to it line by line. When the daemon goes away, the calls it was answering get an
 * error, and the shim attaches to a new daemon, replaying the client's `initialize` (and logging
 * level) so the client carries on. Node built-ins only: no SDK, express, sandbox or dashboard.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { isRecord, JSON_RPC_SHAPES, looksLikeJsonRpc } from "../json.js";
import { installedVersion, VERSION } from "../version.js";
import { droppedRequestId, droppedResponseId, isId, parseJson, parseObject } from "./line-ids.js";
import { daemonPaths, ensureDaemonDir, type DaemonPaths } from "./paths.js";
import { LineReader, MAX_LINE_BYTES, type ControlAnswer, type ControlRequest } from "./wire.js";

/** How long a shim waits for a daemon to answer on its socket after starting it. */
const START_TIMEOUT_MS = 30_000;
const POLL_MS = 25;
/** Ids of the requests the shim itself sends when it replays a client's state. */
const OWN_ID = "mcpx-shim:";

/** What the shim takes from the command line (src/cli.ts `ShimOptions` has it). */
export interface ShimOptions {
  config: string;
  caller?: string;
  daemonIdleMs: number;
  logLevel: string;
  format?: string;
  project?: string;
  untrusted: boolean;
}

interface Attached {
  socket: net.Socket;
  answer: Extract<ControlAnswer, { mcpx: "attached" }>;
  /** Bytes after the daemon's control line (JSON-RPC already sent). */
  rest: string;
}

export async function runShim(options: ShimOptions): Promise<number> {
  let paths: DaemonPaths;
  try {
    paths = daemonPaths(options.config);
    ensureDaemonDir(paths.dir);
  } catch (err) {
    process.stderr.write(`mcpx: ${(err as Error).message}\n`);
    return 2;
  }
  const relay = new Relay(paths, options);
  return relay.run();
}

class Relay {
  private socket: net.Socket | undefined;
  /**
   * The client's lines; one past the bound is dropped as it comes: a request is answered
   * (refuseLong), an answer to the daemon's request turned into an error for it (refuseAnswer).
   */
  private readonly fromClient = new LineReader(MAX_LINE_BYTES, (d) => {
    const answered = droppedResponseId(d);
    if (answered !== undefined) this.refuseAnswer(undefined, answered);
    else this.refuseLong(undefined, droppedRequestId(d));
  });
  /** Lines of the client waiting for a daemon (while attaching). */
  private queued: string[] = [];
  /** Requests of the client the daemon has not answered yet: id → method. */
  private readonly pending = new Map<string | number, string>();
  /** Requests of the daemon (a relayed sampling, elicitation, roots) the client has not answered. */
  private readonly asked = new Set<string | number>();
  private initialize: Record<string, unknown> | undefined;
  private initialized: string | undefined;
  private setLevel: Record<string, unknown> | undefined;
  private clientGone = false;
  private told = false;
  private replays = 0;
  private malformed = 0;

  constructor(
    private readonly paths: DaemonPaths,
    private readonly options: ShimOptions,
  ) {}

  async run(): Promise<number> {
    const done = new Promise<void>((resolve) => {
      process.stdin.on("data", (chunk: Buffer) => {
        for (const line of this.fromClient.push(chunk)) this.fromClientLine(line);
      });
      process.stdin.once("end", () => {
        this.clientGone = true;
        if (this.socket) this.socket.end();
        else resolve();
      });
      this.onGone = resolve;
    });
    try {
      await this.attach();
    } catch (err) {
      process.stderr.write(`mcpx: ${(err as Error).message}\n`);
      return 1;
    }
    await done;
    return 0;
  }

  private onGone: () => void = () => {};

  private fromClientLine(line: string): void {
    if (line.trim() === "") return;
    const parsed = parseJson(line);
    const message = isRecord(parsed?.json) ? parsed.json : undefined;
    const id = isId(message?.id) ? message.id : undefined;
    const answer =
      message !== undefined &&
      message.method === undefined &&
      ("result" in message || "error" in message);
    // The daemon would end the connection over it: refused here, the request answered.
    const bytes = Buffer.byteLength(line);
    if (bytes + 1 > MAX_LINE_BYTES) {
      if (answer && id !== undefined) return this.refuseAnswer(bytes, id);
      return this.refuseLong(bytes, typeof message?.method === "string" ? id : undefined);
    }
    // What the daemon would skip, warning in its own log: skipped here, the client told once.
    // (A line that is no JSON at all the daemon skips without a word: it goes on as it is.)
    if (parsed && !(message && looksLikeJsonRpc(message))) return this.skipMalformed();
    if (message && typeof message.method === "string") {
      if (id !== undefined) this.pending.set(id, message.method);
      if (message.method === "initialize") this.initialize = message;
      else if (message.method === "notifications/initialized") this.initialized = line;
      else if (message.method === "logging/setLevel") this.setLevel = message;
    } else if (answer && id !== undefined) {
      this.asked.delete(id);
    }
    this.send(line);
  }

  /** A line that is JSON but no JSON-RPC message: said on stderr the first time, never sent. */
  private skipMalformed(): void {
    if (this.malformed++ > 0) return;
    process.stderr.write(
      `mcpx: the client sent a line that is not a JSON-RPC message; it was skipped (later ones are skipped without a word). ${JSON_RPC_SHAPES}\n`,
    );
  }

  /**
   * A message too long to send (`bytes` long, or dropped as it came): its request (with `id`)
   * answered, else said on stderr.
   */
  private refuseLong(bytes: number | undefined, id: unknown): void {
    const text = `mcpx: this message is${tooLong(bytes)}; it was not sent. Send less at once (a large input can go in a file the server reads).`;
    if (typeof id === "string" || typeof id === "number") {
      const error = { code: -32600, message: text };
      process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, error })}\n`);
    } else {
      process.stderr.write(`${text}\n`);
    }
  }

  /**
   * The client's answer (`bytes` long, or dropped as it came) to the daemon's request `id` (a
   * sampling or elicitation an upstream asked for): not sent; the request gets an error instead of
   * waiting for its timeout, and the client's stderr says so.
   */
  private refuseAnswer(bytes: number | undefined, id: string | number): void {
    // Only a request this daemon asked and still awaits gets the error (not one of the same id
    // a new daemon asked after the client's answer began).
    const awaited = this.asked.delete(id);
    const then = awaited ? "the request got this error instead" : "no request awaits it";
    const text = `mcpx: the client's answer to request ${JSON.stringify(id)} was${tooLong(bytes)}; it was not passed on, and ${then}. Ask for less at once.`;
    process.stderr.write(`${text}\n`);
    if (awaited) {
      this.send(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: text } }));
    }
  }

  private send(line: string): void {
    if (this.socket) this.socket.write(`${line}\n`);
    else this.queued.push(line);
  }

  private fromDaemonLine(line: string): void {
    if (line.trim() === "") return;
    const message = parseObject(line);
    if (message && message.method === undefined && message.id !== undefined) {
      if (typeof message.id === "string" && message.id.startsWith(OWN_ID)) return;
      this.pending.delete(message.id as string | number);
    } else if (message && typeof message.method === "string" && isId(message.id)) {
      this.asked.add(message.id);
    }
    process.stdout.write(`${line}\n`);
  }

  /** Attach to the daemon (starting one if none answers), then replay and flush. */
  private async attach(): Promise<void> {
    const attached = await attachOrStart(this.paths, this.options);
    const { socket, answer, rest } = attached;
    // The installed mcpx decides which daemon is stale, not this shim's own version: after an
    // upgrade, a shim of the old version attaches to the new daemon its bin started (once the
    // old daemon ended, src/install.ts), and must not retire it.
    const installed = installedVersion();
    if (answer.version !== installed && !this.told) {
      this.told = true;
      process.stderr.write(
        `mcpx: the daemon of ${this.paths.config} runs mcpx ${answer.version}, the installed mcpx is ${installed}: this client uses it; new clients start a ${installed} daemon, and the old one exits when its last client leaves.\n`,
      );
      await control(this.paths.socket, { mcpx: "retire" }).catch(() => undefined);
    }
    const fromDaemon = new LineReader();
    const onData = (chunk: Buffer | string) => {
      for (const line of fromDaemon.push(chunk)) this.fromDaemonLine(line);
    };
    socket.on("data", onData);
    socket.once("close", () => void this.detached());
    socket.on("error", () => undefined);
    if (rest !== "") onData(rest);
    this.socket = socket;
    // A client that had initialized with the daemon before: the new daemon hears it again.
    if (this.replays++ > 0) this.replay(socket);
    const queued = this.queued;
    this.queued = [];
    for (const line of queued) socket.write(`${line}\n`);
  }

  private replay(socket: net.Socket): void {
    const again = (message: Record<string, unknown> | undefined, n: string) => {
      if (message) socket.write(`${JSON.stringify({ ...message, id: `${OWN_ID}${n}` })}\n`);
    };
    again(this.initialize, "initialize");
    if (this.initialized) socket.write(`${this.initialized}\n`);
    again(this.setLevel, "setLevel");
  }

  /** The daemon went away: answer what it left unanswered, then attach to a new one. */
  private async detached(): Promise<void> {
    this.socket = undefined;
    // What the daemon gone asked is answered to no one.
    this.asked.clear();
    if (this.clientGone) return this.onGone();
    for (const [id, method] of this.pending) {
      process.stdout.write(
        `${JSON.stringify({
          jsonrpc: "2.0",
          id,
          error: {
            code: -32000,
            message: `mcpx: the shared daemon ended the connection before it answered ${method} (the daemon's log: ${this.paths.log}); mcpx attaches again, starting a new daemon if it is gone: send it again.`,
          },
        })}\n`,
      );
    }
    this.pending.clear();
    try {
      await this.attach();
    } catch (err) {
      process.stderr.write(`mcpx: ${(err as Error).message}\n`);
      process.exit(1);
    }
  }
}

/** " N MiB, more than the 10 MiB one message may be" (the size when known). */
function tooLong(bytes: number | undefined): string {
  const size = bytes === undefined ? "" : ` ${(bytes / 1024 / 1024).toFixed(1)} MiB,`;
  return `${size} more than the ${MAX_LINE_BYTES / 1024 / 1024} MiB one message may be`;
}

/** Attach to the running daemon, or start one (one shim at a time: the lock) and attach. */
async function attachOrStart(paths: DaemonPaths, options: ShimOptions): Promise<Attached> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let started: ReturnType<typeof startDaemon> | undefined;
  for (;;) {
    const attached = await tryAttach(paths.socket, options.caller);
    if (attached) {
      if (started) release(paths.lock);
      return attached;
    }
    if (!started && takeLock(paths.lock)) started = startDaemon(paths, options);
    if (started?.exited !== undefined) {
      release(paths.lock);
      throw new Error(
        `the mcpx daemon of ${paths.config} exited (${started.exited}) before it served: ${tail(paths.log)}`,
      );
    }
    if (Date.now() > deadline) {
      if (started) release(paths.lock);
      throw new Error(
        `no mcpx daemon answered on ${paths.socket} within ${START_TIMEOUT_MS / 1000} s; its log: ${paths.log}`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Connect and send the attach line; undefined when no daemon answers there. */
function tryAttach(socketPath: string, caller: string | undefined): Promise<Attached | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    const reader = new LineReader();
    const fail = () => {
      socket.destroy();
      resolve(undefined);
    };
    socket.once("error", fail);
    socket.once("close", fail);
    socket.once("connect", () => {
      const attach: ControlRequest = {
        mcpx: "attach",
        version: VERSION,
        ...(caller && { caller }),
      };
      socket.write(`${JSON.stringify(attach)}\n`);
    });
    const onData = (chunk: Buffer) => {
      const [first] = reader.push(chunk);
      if (first === undefined) return;
      socket.off("data", onData);
      socket.off("error", fail);
      socket.off("close", fail);
      const answer = parseObject(first) as ControlAnswer | undefined;
      if (answer?.mcpx !== "attached") return fail();
      resolve({ socket, answer, rest: reader.rest() });
    };
    socket.on("data", onData);
  });
}

/** Send one control line and read the answer (status, stop, retire). */
export function control(socketPath: string, request: ControlRequest): Promise<ControlAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    const reader = new LineReader();
    socket.once("error", reject);
    socket.once("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: Buffer) => {
      const [first] = reader.push(chunk);
      if (first === undefined) return;
      socket.destroy();
      const answer = parseObject(first) as ControlAnswer | undefined;
      if (answer) resolve(answer);
      else reject(new Error("the daemon's answer was not a control line"));
    });
    socket.once("close", () => reject(new Error("the daemon closed the connection")));
  });
}

/** Take the start lock; a lock whose holder died is broken. */
function takeLock(lock: string): boolean {
  for (let i = 0; i < 2; i++) {
    try {
      const fd = openSync(lock, "wx", 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readQuietly(lock));
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) return false;
      release(lock);
    }
  }
  return false;
}

function release(lock: string): void {
  try {
    if (Number(readQuietly(lock)) === process.pid) unlinkSync(lock);
  } catch {
    // Gone already.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readQuietly(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** The last lines of the daemon's log, for an error. */
function tail(log: string): string {
  return readQuietly(log).trim().split("\n").slice(-5).join(" | ") || "(its log is empty)";
}

/** Start `mcpx daemon run <config>` detached, its stderr to the log (0600). */
function startDaemon(paths: DaemonPaths, options: ShimOptions): { exited?: string } {
  const log = openSync(paths.log, "a", 0o600);
  const args = [
    process.argv[1] ?? "",
    "daemon",
    "run",
    paths.config,
    "--daemon-idle",
    String(options.daemonIdleMs),
    "--log-level",
    options.logLevel,
    ...(options.format ? ["--format", options.format] : []),
    ...(options.project ? ["--project", options.project] : []),
    ...(options.untrusted ? ["--untrusted"] : []),
  ];
  const child = spawn(process.execPath, [...process.execArgv, ...args], {
    detached: true,
    stdio: ["ignore", log, log],
    env: process.env,
  });
  closeSync(log);
  const state: { exited?: string } = {};
  child.once("exit", (code, signal) => (state.exited = signal ?? `exit code ${code}`));
  child.once("error", (err) => (state.exited = err.message));
  child.unref();
  return state;
}
