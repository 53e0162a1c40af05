/**
 * Newline-delimited JSON-RPC, as MCP's stdio binding carries it: read exactly as the SDK's
 * `ReadBuffer` reads it, without its cost on the hot path. The SDK checks every message against
 * its zod schema (`JSONRPCMessageSchema`), about a tenth of a relayed call's CPU; here a message
 * whose shape the schema certainly accepts, unchanged, passes on a few property checks, and
 * everything else (an error response, a result whose `_meta` names its server, anything unusual)
 * goes through the SDK's own parse, which returns what it returns or throws what it throws.
 */
import {
  parseJSONRPCMessage,
  RELATED_TASK_META_KEY,
  SERVER_INFO_META_KEY,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type JSONRPCMessage,
} from "@modelcontextprotocol/client";

/** The errors thrown for lines that are JSON but not JSON-RPC messages (the SDK's own errors). */
const invalidMessages = new WeakSet<object>();

/** Whether `err` was thrown for a line that is not a JSON-RPC message: the peer's mistake. */
export function isInvalidMessage(err: unknown): boolean {
  return typeof err === "object" && err !== null && invalidMessages.has(err);
}

/** A parsed JSON value as a JSON-RPC message: what `JSONRPCMessageSchema.parse` would return. */
export function toJsonRpcMessage(value: unknown): JSONRPCMessage {
  return isPlainMessage(value) ? value : parseJSONRPCMessage(value);
}

/** Splits a byte stream into JSON-RPC messages, one per line (the SDK's `ReadBuffer`'s rules). */
export class LineReader {
  private buffer: Buffer | undefined;

  constructor(private readonly maxBufferSize = STDIO_DEFAULT_MAX_BUFFER_SIZE) {}

  /** Adds a chunk; throws (and forgets what it held) past the size bound. */
  append(chunk: Buffer): void {
    if ((this.buffer?.length ?? 0) + chunk.length > this.maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBufferSize} bytes`);
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
  }

  /**
   * The next complete message, or null when no whole line is left. A line that is not JSON is
   * skipped; JSON that is not a JSON-RPC message throws (the line is consumed: read on).
   */
  readMessage(): JSONRPCMessage | null {
    while (this.buffer) {
      const end = this.buffer.indexOf(10);
      if (end === -1) return null;
      const stop = end > 0 && this.buffer[end - 1] === 13 ? end - 1 : end;
      const line = this.buffer.toString("utf8", 0, stop);
      this.buffer = end + 1 === this.buffer.length ? undefined : this.buffer.subarray(end + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      try {
        return toJsonRpcMessage(value);
      } catch (err) {
        if (typeof err === "object" && err !== null) invalidMessages.add(err);
        throw err;
      }
    }
    return null;
  }

  /**
   * Add `chunk` and hand every complete message to `deliver`. What goes wrong (a line that is not
   * JSON-RPC, a `deliver` that throws, the size bound) goes to `report`, and reading goes on.
   * False when the chunk overflowed the bound (then nothing was read).
   */
  feed(
    chunk: Buffer,
    deliver: (message: JSONRPCMessage) => void,
    report: (err: Error) => void,
  ): boolean {
    try {
      this.append(chunk);
    } catch (err) {
      report(asError(err));
      return false;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readMessage();
      } catch (err) {
        report(asError(err));
        continue;
      }
      if (message === null) return true;
      try {
        deliver(message);
      } catch (err) {
        report(asError(err));
      }
    }
  }

  clear(): void {
    this.buffer = undefined;
  }
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** The line a message is written as. */
export function serializeLine(message: JSONRPCMessage): string {
  return `${JSON.stringify(message)}\n`;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An object the schema copies key by key as it is: a plain one without an own `__proto__` key
 * (JSON.parse makes one from `"__proto__": …`; the SDK's copy drops it).
 */
const isCopied = (v: unknown): v is Json => isObject(v) && !Object.hasOwn(v, "__proto__");

const isId = (v: unknown): boolean =>
  typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v));

/** Whether every own key of `o` is one of `allowed`. */
function onlyKeys(o: Json, allowed: readonly string[]): boolean {
  for (const key in o) if (!allowed.includes(key)) return false;
  return true;
}

/** Request or notification params the schema takes as they are (`_meta` loose, no task link). */
function plainParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (!isCopied(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isCopied(meta) || RELATED_TASK_META_KEY in meta) return false;
  return !("progressToken" in meta) || isId(meta.progressToken);
}

const REQUEST_KEYS = ["jsonrpc", "id", "method", "params"] as const;
const NOTIFICATION_KEYS = ["jsonrpc", "method", "params"] as const;
const RESULT_KEYS = ["jsonrpc", "id", "result"] as const;

/** What a plain message is: the one of the SDK's message schemas that accepts it. */
export type PlainKind = "request" | "notification" | "result";

/**
 * Set only when `JSONRPCMessageSchema` accepts `value` and returns it unchanged: a request, a
 * notification, or a result response whose `_meta` (if any) has no server info to check. The
 * schemas are strict, so exactly one of them accepts such a message (the SDK's type guards,
 * `isJSONRPCRequest` and its siblings, agree); undefined says nothing either way.
 */
export function plainKind(value: unknown): PlainKind | undefined {
  if (!isObject(value) || value.jsonrpc !== "2.0") return undefined;
  if (typeof value.method === "string") {
    if (!plainParams(value.params)) return undefined;
    if ("id" in value)
      return isId(value.id) && onlyKeys(value, REQUEST_KEYS) ? "request" : undefined;
    return onlyKeys(value, NOTIFICATION_KEYS) ? "notification" : undefined;
  }
  if (!isId(value.id) || !isCopied(value.result) || !onlyKeys(value, RESULT_KEYS)) return undefined;
  const meta = value.result._meta;
  return meta === undefined || (isCopied(meta) && !(SERVER_INFO_META_KEY in meta))
    ? "result"
    : undefined;
}

function isPlainMessage(value: unknown): value is JSONRPCMessage {
  return plainKind(value) !== undefined;
}
