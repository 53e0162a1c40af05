/**
 * Raw JSON-RPC clients of the built mcpx, below any SDK: they send exactly the bytes they are
 * given and keep every answer, so a test or benchmark can check what an SDK client would hide —
 * an answer lost, answered twice, carrying another request's id, or a stdout line that is not
 * JSON-RPC. Used by the fuzz tests (test/fuzz/) and the load and soak runs (bench/).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { MODERN_VERSION } from "./clients.js";
import { cacheEnv, MCPX } from "./proxy.js";

export type Id = string | number;

/** One JSON-RPC response as received. */
export interface RpcAnswer {
  id: Id | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** What came back that should not have: counted, never thrown, so a run can report them. */
export interface Anomalies {
  /** Answers to an id already answered. */
  duplicates: number;
  /** Answers to an id never sent (or sent on another stream). */
  strays: number;
  /** stdout lines that are not JSON-RPC (stdio only: stdout is the protocol). */
  garbage: number;
}

const CLIENT_INFO = { name: "mcpx-raw", version: "1.0.0" };

/** The first request of a 2025-era client. */
export function initializeParams(name = CLIENT_INFO.name): Record<string, unknown> {
  return {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { ...CLIENT_INFO, name },
  };
}

/** The `_meta` envelope of a 2026-07-28 request. */
export function envelope(name = CLIENT_INFO.name): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": { ...CLIENT_INFO, name },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
}

interface Pending {
  resolve(answer: RpcAnswer): void;
  timer: NodeJS.Timeout;
}

/**
 * `mcpx <config> [args]` over stdio, spoken to line by line. Several requests may be in flight;
 * each answer settles the request with its id.
 */
export class StdioRpc {
  readonly anomalies: Anomalies = { duplicates: 0, strays: 0, garbage: 0 };
  private readonly pending = new Map<Id, Pending>();
  private readonly answered = new Set<Id>();
  private buffer = "";
  private err = "";
  private nextId = 1;

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => this.onData(chunk));
    child.stderr!.on("data", (chunk: Buffer) => {
      // Keep the tail only: a long run logs a line per call.
      this.err = (this.err + chunk.toString()).slice(-64 * 1024);
    });
  }

  /** Spawn mcpx on `config` and initialize a 2025-era session (`initialize: false` skips it). */
  static async start(
    config: string,
    options: { args?: string[]; initialize?: boolean; env?: NodeJS.ProcessEnv } = {},
  ): Promise<StdioRpc> {
    const child = spawn(process.execPath, [MCPX, config, ...(options.args ?? [])], {
      stdio: ["pipe", "pipe", "pipe"],
      env: options.env ?? { ...process.env, ...cacheEnv() },
    });
    const rpc = new StdioRpc(child);
    if (options.initialize ?? true) {
      const answer = await rpc.request("initialize", initializeParams(), 30_000);
      if (!answer.result) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
      rpc.notify("notifications/initialized");
    }
    return rpc;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The tail of what mcpx wrote to stderr. */
  stderr(): string {
    return this.err;
  }

  /** A fresh id, never used on this connection before. */
  id(): number {
    return this.nextId++;
  }

  /**
   * Send a request and wait for its answer; rejects after `timeoutMs` without one (a lost
   * answer, or a hang). `id` defaults to a fresh one.
   */
  request(
    method: string,
    params?: unknown,
    timeoutMs = 30_000,
    id: Id = this.id(),
  ): Promise<RpcAnswer> {
    const answer = this.expect(id, timeoutMs, method);
    this.send({ jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) });
    return answer;
  }

  /** Wait for the answer to `id`, sent by other means (a raw line). */
  expect(id: Id, timeoutMs: number, what = String(id)): Promise<RpcAnswer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${what} (id ${JSON.stringify(id)}) in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, timer });
    });
  }

  notify(method: string, params?: unknown): void {
    this.send({ jsonrpc: "2.0", method, ...(params !== undefined && { params }) });
  }

  /** One message as a line. */
  send(message: unknown): void {
    this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  /** Raw bytes, exactly as given (a line of garbage, invalid UTF-8, half a message). */
  sendRaw(bytes: string | Buffer): void {
    this.child.stdin!.write(bytes);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Close stdin (the client leaving), then SIGTERM if mcpx has not exited in `graceMs`. */
  async close(graceMs = 15_000): Promise<number | null> {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    if (!this.alive) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) =>
      this.child.once("exit", (code) => resolve(code)),
    );
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGTERM"), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() !== "") this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.anomalies.garbage++;
      return;
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.anomalies.garbage++;
      return;
    }
    const m = message as Record<string, unknown>;
    if (m.jsonrpc !== "2.0") {
      this.anomalies.garbage++;
      return;
    }
    if (typeof m.method === "string") {
      // A request of mcpx's own (roots, sampling...): this client offers none of them.
      if (m.id !== undefined) {
        this.send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not offered" } });
      }
      return;
    }
    this.settle(m as unknown as RpcAnswer);
  }

  private settle(answer: RpcAnswer): void {
    const id = answer.id;
    if (id === null) {
      // An error to a message mcpx could not read an id from: nobody to give it to.
      this.anomalies.strays++;
      return;
    }
    const pending = this.pending.get(id);
    if (pending) {
      clearTimeout(pending.timer);
      this.pending.delete(id);
      this.answered.add(id);
      pending.resolve(answer);
    } else if (this.answered.has(id)) this.anomalies.duplicates++;
    else this.anomalies.strays++;
  }
}

/** What one HTTP POST brought back. */
export interface HttpExchange {
  status: number;
  contentType: string;
  /** The raw body. */
  body: string;
  /** The JSON-RPC messages in it (one JSON body, or each SSE `data:` line). */
  messages: Record<string, unknown>[];
  sessionId?: string;
}

/** Parse a POST's answer: a JSON body, or an SSE stream of `data:` lines. */
export function parseMessages(contentType: string, body: string): Record<string, unknown>[] {
  const parse = (text: string): Record<string, unknown>[] => {
    try {
      const v = JSON.parse(text) as unknown;
      const list = Array.isArray(v) ? v : [v];
      return list.filter((m): m is Record<string, unknown> => typeof m === "object" && m !== null);
    } catch {
      return [];
    }
  };
  if (contentType.includes("text/event-stream")) {
    return [...body.matchAll(/^data: ?(.*)$/gm)].flatMap((m) => parse(m[1] ?? ""));
  }
  return body.trim() === "" ? [] : parse(body);
}

/**
 * One client of mcpx's streamable HTTP endpoint, of either era: 2025 (a session opened with
 * initialize) or 2026-07-28 (stateless requests carrying the `_meta` envelope and headers).
 */
export class HttpRpc {
  private sessionId: string | undefined;
  private nextId = 1;

  constructor(
    readonly url: string,
    readonly era: "legacy" | "modern",
    readonly name = CLIENT_INFO.name,
  ) {}

  /** Open the session (2025) or discover the server (2026-07-28). */
  async open(): Promise<void> {
    if (this.era === "legacy") {
      const x = await this.post({
        jsonrpc: "2.0",
        id: this.nextId++,
        method: "initialize",
        params: initializeParams(this.name),
      });
      if (x.status !== 200 || !x.sessionId) throw new Error(`initialize: ${x.status} ${x.body}`);
      this.sessionId = x.sessionId;
      await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    } else {
      const answer = await this.request("server/discover", {});
      if (!answer.result) throw new Error(`server/discover: ${JSON.stringify(answer)}`);
    }
  }

  /**
   * Send a request; resolves with the one answer carrying its id. Rejects when the POST
   * brought none, or more than one, or one with another id: each would be a lost, duplicated or
   * crossed answer.
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    id: Id = `${this.name}-${this.nextId++}`,
    signal?: AbortSignal,
  ): Promise<RpcAnswer> {
    const body =
      this.era === "modern"
        ? { jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope(this.name) } }
        : { jsonrpc: "2.0", id, method, params };
    const x = await this.post(body, method, params.name, signal);
    const answers = x.messages.filter((m) => "result" in m || "error" in m);
    const mine = answers.filter((m) => m.id === id);
    if (answers.length !== 1 || mine.length !== 1) {
      throw new Error(
        `${method} ${JSON.stringify(id)}: ${answers.length} answers, ${mine.length} with its id (HTTP ${x.status}): ${x.body.slice(0, 300)}`,
      );
    }
    return mine[0] as unknown as RpcAnswer;
  }

  /** End the 2025 session (DELETE); nothing for 2026-07-28. */
  async close(): Promise<void> {
    if (!this.sessionId) return;
    await fetch(this.url, {
      method: "DELETE",
      headers: { "mcp-session-id": this.sessionId, "mcp-protocol-version": "2025-06-18" },
    })
      .then((r) => r.arrayBuffer())
      .catch(() => {
        /* mcpx may be gone: the session goes with it */
      });
    this.sessionId = undefined;
  }

  /** POST one message with the headers its era needs. */
  async post(
    message: unknown,
    method?: string,
    name?: unknown,
    signal?: AbortSignal,
  ): Promise<HttpExchange> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (this.sessionId) {
      headers["mcp-session-id"] = this.sessionId;
      headers["mcp-protocol-version"] = "2025-06-18";
    }
    if (this.era === "modern" && method) {
      headers["mcp-protocol-version"] = MODERN_VERSION;
      headers["mcp-method"] = method;
      if (typeof name === "string") headers["mcp-name"] = name;
    }
    const res = await fetch(this.url, {
      method: "POST",
      headers,
      body: JSON.stringify(message),
      ...(signal && { signal }),
    });
    const body = await res.text();
    const contentType = res.headers.get("content-type") ?? "";
    const sessionId = res.headers.get("mcp-session-id") ?? undefined;
    return {
      status: res.status,
      contentType,
      body,
      messages: parseMessages(contentType, body),
      ...(sessionId && { sessionId }),
    };
  }
}

/** The text of a tools/call result's text blocks, joined. */
export function resultText(answer: RpcAnswer): string {
  const content = (answer.result?.content ?? []) as { type?: string; text?: string }[];
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}
