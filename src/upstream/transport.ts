/**
 * Transport factory: the one place that spawns upstream processes or opens HTTP connections.
 * Imports the SDK (see eslint.config.js).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import {
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type AuthProvider,
  type JSONRPCMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import type { UpstreamSpec } from "../config/load.js";
import { basicAuthorization } from "../config/secrets.js";
import { LineReader, serializeLine } from "./lines.js";
import type { FetchLike } from "./public-fetch.js";
import { Watchdog } from "./watchdog.js";

type StdioSpec = Extract<UpstreamSpec, { transport: "stdio" }>;
export type RemoteSpec = Extract<UpstreamSpec, { transport: "http" | "sse" }>;

/**
 * Every child process a proxy spawned and has not yet seen exit: for a last-resort kill, and
 * registered with the watchdog so they end with mcpx even when mcpx is SIGKILLed.
 */
export class ChildTracker {
  private readonly children = new Set<ChildProcess>();
  /** Ends every tracked group if this process dies before it could (src/upstream/watchdog.ts). */
  private readonly watchdog = new Watchdog();

  add(child: ChildProcess): void {
    const pid = child.pid;
    // Never spawned (ENOENT and the like): nothing to track.
    if (pid === undefined) return;
    this.children.add(child);
    // Spawned detached, so its pid is its process group's id.
    this.watchdog.watch(pid);
    child.once("exit", () => {
      this.children.delete(child);
      this.watchdog.unwatch(pid);
    });
  }

  get size(): number {
    return this.children.size;
  }

  /** Signal every tracked process group now, synchronously (an exit that cannot wait). */
  killAll(signal: NodeJS.Signals = "SIGKILL"): void {
    for (const child of this.children) signalGroup(child, signal);
  }

  /** Stop the watchdog once every child is closed; resolves when it has exited. */
  async close(): Promise<void> {
    await this.watchdog.close();
  }
}

export interface StdioTransportOptions {
  /** Told about the child as soon as it is spawned. */
  tracker?: ChildTracker;
  /** Called with each complete line the child writes to stderr. */
  onStderrLine?: (line: string) => void;
  /** How long a child has between SIGTERM and SIGKILL. */
  killGraceMs?: number;
}

/** How a child ended: its exit code or signal, and whether close() had asked it to. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when close() had started: the exit was ours, not the server's own doing. */
  requested: boolean;
}

/** Cap on one stderr line kept in memory; a flood without newlines must not grow memory. */
const MAX_STDERR_LINE = 8 * 1024;
/** Past this many unanswered requests the count starts again (a server that drops requests). */
const MAX_UNANSWERED = 10_000;

/**
 * A stdio client transport that owns its child's whole process group. The SDK's own transport
 * signals only the direct child, so a server started through `npx` or a shell leaves its real
 * process behind; we spawn detached (a new group) and signal the group.
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly readBuffer = new LineReader();
  private exited: Promise<void> | undefined;
  private exitStatus: ExitStatus | undefined;
  private closing = false;
  /** stdin is corked until the end of this turn of the event loop (send). */
  private corked = false;
  /**
   * Ids of the SDK's requests (numbers; its era probe's string id is not one, and a silent server
   * never answers it) the server has not answered, nor been told to drop: see send.
   */
  private readonly unanswered = new Set<number>();

  constructor(
    private readonly spec: StdioSpec,
    private readonly options: StdioTransportOptions = {},
  ) {}

  /** The child's pid once started (tests and health checks use it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the child ended, once it has. */
  get exit(): ExitStatus | undefined {
    return this.exitStatus;
  }

  /**
   * The child's stderr. Also what makes the SDK's era probe treat this transport as stdio (it
   * looks for `stderr` and `pid`): a silent legacy server then falls back to initialize after the
   * probe timeout instead of failing the connect.
   */
  get stderr(): NodeJS.ReadableStream | null {
    return this.child?.stderr ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("ProcessTransport already started");
    const env = this.spec.inheritEnv
      ? { ...process.env, ...this.spec.env }
      : { ...getDefaultEnvironment(), ...this.spec.env };
    return new Promise((resolve, reject) => {
      const child = spawn(this.spec.command, this.spec.args, {
        env,
        cwd: this.spec.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        // A group of its own, so close() can signal every process the server started.
        detached: process.platform !== "win32",
        windowsHide: true,
      });
      this.child = child;
      this.options.tracker?.add(child);
      this.exited = new Promise((done) => child.once("close", () => done()));
      child.once("exit", (code, signal) => {
        this.exitStatus = { code, signal, requested: this.closing };
      });
      child.once("error", (err) => {
        const failure = spawnFailure(err, this.spec);
        reject(failure);
        this.onerror?.(failure);
      });
      child.once("spawn", () => resolve());
      child.once("close", () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("error", (err) => this.onerror?.(err));
      // Lines that are not JSON are skipped; one that is not JSON-RPC (a noisy server) is
      // reported, and reading goes on.
      const deliver = (message: JSONRPCMessage) => {
        // The SDK matches an answer's id as a number: so does this.
        if ("id" in message && !("method" in message)) this.unanswered.delete(Number(message.id));
        this.onmessage?.(message);
      };
      const report = (err: Error) => this.onerror?.(err);
      child.stdout?.on(
        "data",
        (chunk: Buffer) => void this.readBuffer.feed(chunk, deliver, report),
      );
      this.pipeStderr(child);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error("upstream process is not running"));
        return;
      }
      // Messages sent in one turn of the event loop (many clients' calls, under load) leave in
      // one write: a write to a pipe is a system call that wakes the server, the largest single
      // cost of a relayed call in mcpx's profile. A message to a server with nothing to answer
      // leaves at once: one client's call waits for nothing else (~10 µs sooner).
      const idle = this.unanswered.size === 0;
      this.track(message);
      if (!idle && !this.corked) {
        this.corked = true;
        stdin.cork();
        setImmediate(() => {
          this.corked = false;
          stdin.uncork();
        });
      }
      if (stdin.write(serializeLine(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Our requests wait for an answer until one comes, or until we cancel them. */
  private track(message: JSONRPCMessage): void {
    if (!("method" in message)) return;
    if ("id" in message) {
      // A server that never answers only costs the first write of a turn its head start.
      if (this.unanswered.size >= MAX_UNANSWERED) this.unanswered.clear();
      if (typeof message.id === "number") this.unanswered.add(message.id);
    } else if (message.method === "notifications/cancelled") {
      this.unanswered.delete(Number(message.params?.requestId));
    }
  }

  /** End stdin, SIGTERM the group, SIGKILL it after the grace period; resolves once it exited. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closing) {
      await this.exited;
      return;
    }
    this.closing = true;
    try {
      child.stdin?.end();
    } catch {
      // Already closed: the signals below still apply.
    }
    signalGroup(child, "SIGTERM");
    const grace = this.options.killGraceMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        signalGroup(child, "SIGKILL");
        resolve();
      }, grace);
      timer.unref();
    });
    try {
      await Promise.race([this.exited, killed]);
      await this.exited;
    } finally {
      clearTimeout(timer);
      // Children of the server that ignored SIGTERM outlive the leader's exit: make sure.
      signalGroup(child, "SIGKILL");
      this.readBuffer.clear();
      this.unanswered.clear();
    }
  }

  private pipeStderr(child: ChildProcess): void {
    const onLine = this.options.onStderrLine;
    if (!child.stderr) return;
    if (!onLine) {
      child.stderr.resume(); // drain, never block the child on a full pipe
      return;
    }
    let partial = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      if (partial.length > MAX_STDERR_LINE) {
        lines.push(partial.slice(0, MAX_STDERR_LINE) + "…");
        partial = "";
      }
      for (const line of lines) if (line.trim()) onLine(line.trimEnd());
    });
    child.stderr.on("end", () => {
      if (partial.trim()) onLine(partial.trimEnd());
    });
  }
}

/**
 * A spawn error that says what to fix. Node reports a missing command, a missing working
 * directory and a missing #! interpreter all as `spawn x ENOENT`.
 */
function spawnFailure(err: Error, spec: StdioSpec): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const command = JSON.stringify(spec.command);
  const isPath = /[/\\]/.test(spec.command);
  let why: string | undefined;
  if (code === "ENOENT") {
    if (spec.cwd !== undefined && !existsSync(spec.cwd))
      why = `working directory ${JSON.stringify(spec.cwd)} does not exist`;
    else if (isPath && existsSync(spec.command))
      why = `command ${command} could not be started: the interpreter on its #! line was not found`;
    else why = isPath ? `command ${command} not found` : `command ${command} not found on PATH`;
  } else if (code === "EACCES") {
    why = `command ${command} is not executable`;
  }
  return why === undefined ? err : new Error(`${why} (${err.message})`, { cause: err });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (process.platform === "win32") child.kill(signal);
    else process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we want.
  }
}

/**
 * A transport for an http (streamable) or sse upstream. The SDK sends `requestInit.headers` on
 * every request, the SSE GET included (with its own Accept and, once negotiated,
 * mcp-protocol-version), so the entry's headers need nothing more. `fetchImpl` replaces the
 * global fetch for every request (an untrusted config's public-only fetch).
 */
export function createRemoteTransport(
  spec: RemoteSpec,
  kind: "http" | "sse",
  fetchImpl?: FetchLike,
  authProvider?: AuthProvider,
): Transport {
  const url = new URL(spec.url);
  const headers = { ...spec.headers };
  // fetch refuses a URL with credentials: send them as HTTP Basic auth, as a browser would,
  // unless the entry sets Authorization itself.
  // The header comes from config/secrets.ts, which registers the same value for redaction.
  const basic = basicAuthorization(url);
  if (basic) {
    if (!hasAuthorization(headers)) {
      headers.Authorization = basic;
    }
    url.username = "";
    url.password = "";
  }
  // A request sent inside `traceScope.run(traceparent, …)` carries it as a header too (W3C
  // Trace Context over HTTP); the session sets it per request (session.ts, `traced`).
  const traceScope = new AsyncLocalStorage<string>();
  const inner: FetchLike = fetchImpl ?? ((u, init) => fetch(u, init));
  const traced: FetchLike = (u, init) => {
    const traceparent = traceScope.getStore();
    if (traceparent === undefined) return inner(u, init);
    const withTrace = new Headers(init?.headers);
    withTrace.set("traceparent", traceparent);
    return inner(u, { ...init, headers: withTrace });
  };
  const options = {
    requestInit: { headers },
    fetch: traced,
    // An OAuth-protected server: the stored sign-in's token (src/upstream/oauth/bearer.ts).
    ...(authProvider && !hasAuthorization(headers) && { authProvider }),
  };
  const transport =
    kind === "sse"
      ? new SSEClientTransport(url, options)
      : new StreamableHTTPClientTransport(url, options);
  return Object.assign(transport, { traceScope });
}

/** A remote transport: requests run in its `traceScope` send that traceparent as a header. */
export interface TraceScoped {
  readonly traceScope: AsyncLocalStorage<string>;
}

function hasAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((h) => h.toLowerCase() === "authorization");
}
