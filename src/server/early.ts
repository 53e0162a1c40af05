/**
 * The early answer to a stdio client's `initialize`: written within milliseconds of spawn, while
 * the SDK, the config and the proxy still load (~0.4 s of module loading on a quiet machine).
 * Node built-ins only (test/integration/lazy-modules.test.ts). Every line still reaches the real
 * server in order, the `initialize` included, so its state is exactly as if it had answered; its
 * own answer to that request is dropped. The answer is the one the SDK server gives
 * (test/integration/early-initialize.test.ts compares them for every protocol version); anything
 * that is not a plain 2025-era `initialize` as the first message is left to the real server.
 */
import { readFileSync } from "node:fs";
import { VERSION } from "../version.js";

/** What mcpx declares to every client (src/server/mcp-server.ts builds its server with it). */
export const DOWNSTREAM_CAPABILITIES = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  completions: {},
  logging: {},
  // 2025-11-25 MCP Tasks (server/tasks.ts); the SDK drops it for 2026-07-28 clients, who get the
  // tasks extension instead.
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
};

/**
 * The 2025-era revisions the SDK server negotiates through `initialize`, newest first (its
 * `legacyProtocolVersions(SUPPORTED_PROTOCOL_VERSIONS)`; the test fails when the SDK's differ).
 */
export const EARLY_PROTOCOL_VERSIONS: readonly string[] = [
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

export interface EarlyStdio {
  /**
   * Stop reading: every chunk read so far (the first line included), for the transport that
   * reads on from stdin in the same turn of the event loop.
   */
  takeover(): Buffer[];
  /** True once, for the real server's answer to the early-answered request: it is not sent. */
  isAnswered(message: Record<string, unknown>): boolean;
  /** Resolves once an early answer was written (never, when the first message did not allow one). */
  readonly answered: Promise<void>;
  /** Stop reading stdin (mcpx exits without serving: a bad config). */
  stop(): void;
}

/**
 * Whether the answer may come before the config is read. A config that may ask for MCP Apps
 * (`apps: "direct"`: the real server then declares the UI extension) waits for the real server;
 * the file is only searched for the word, so a false alarm merely costs the head start.
 */
export function earlyAllowed(configFile: string): boolean {
  try {
    return !/\bapps\b/.test(readFileSync(configFile, "utf8"));
  } catch {
    // Unreadable: the real start says why.
    return true;
  }
}

/** The result of `initialize` for a request's params; undefined when the SDK must judge them. */
export function earlyInitializeResult(params: unknown): Record<string, unknown> | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const p = params as Record<string, unknown>;
  const info = p.clientInfo as Record<string, unknown> | undefined;
  if (
    typeof p.protocolVersion !== "string" ||
    typeof p.capabilities !== "object" ||
    p.capabilities === null ||
    Array.isArray(p.capabilities) ||
    typeof info !== "object" ||
    info === null ||
    typeof info.name !== "string" ||
    typeof info.version !== "string"
  ) {
    return undefined;
  }
  // A request in the 2026-07-28 envelope is the modern era's: the SDK entry decides.
  if (p._meta !== undefined) return undefined;
  const requested = p.protocolVersion;
  return {
    protocolVersion: EARLY_PROTOCOL_VERSIONS.includes(requested)
      ? requested
      : EARLY_PROTOCOL_VERSIONS[0],
    capabilities: DOWNSTREAM_CAPABILITIES,
    serverInfo: { name: "mcpx", version: VERSION },
  };
}

/**
 * Start reading `stdin` now: answer a first plain `initialize` at once, and keep every byte read
 * for the transport that takes over (`takeover`).
 */
export function earlyStdio(
  stdin: NodeJS.ReadableStream & { destroy(): void } = process.stdin,
  stdout: NodeJS.WritableStream = process.stdout,
): EarlyStdio {
  /** Every chunk read so far, until the transport takes over. */
  const read: Buffer[] = [];
  let answeredId: string | number | undefined;
  let dropped = false;
  let first = true;
  let markAnswered!: () => void;
  const answered = new Promise<void>((resolve) => (markAnswered = resolve));

  const onData = (chunk: Buffer | string) => {
    read.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    if (!first) return;
    const head = read.length === 1 ? read[0]! : Buffer.concat(read);
    const end = head.indexOf(10);
    if (end < 0) return;
    first = false;
    const id = answerFirst(head.toString("utf8", 0, end));
    if (id !== undefined) {
      answeredId = id;
      markAnswered();
    }
  };
  // An error before the takeover: the transport sees the stream end.
  const onError = () => {};

  const answerFirst = (line: string): string | number | undefined => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const id = message?.id;
    if (message?.method !== "initialize" || (typeof id !== "string" && typeof id !== "number"))
      return undefined;
    const result = earlyInitializeResult(message.params);
    if (!result) return undefined;
    stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
    return id;
  };

  stdin.on("data", onData);
  stdin.on("error", onError);

  const takeover = (): Buffer[] => {
    stdin.off("data", onData);
    stdin.off("error", onError);
    return read.splice(0);
  };

  const isAnswered = (message: Record<string, unknown>): boolean => {
    if (answeredId === undefined || dropped) return false;
    if (message.id !== answeredId || "method" in message) return false;
    dropped = true;
    return true;
  };

  const stop = () => {
    stdin.off("data", onData);
    stdin.destroy();
  };
  return { takeover, isAnswered, answered, stop };
}
