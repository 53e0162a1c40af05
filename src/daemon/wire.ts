/**
 * The daemon's socket speaks MCP's stdio framing (one JSON-RPC message per line) after one
 * control line from the connecting side, answered by one line from the daemon:
 *
 * - `{"mcpx":"attach","version":V,"caller"?:C}` → `{"mcpx":"attached","version":V,"pid":P}`,
 *   then the connection is one MCP client of the daemon;
 * - `{"mcpx":"status"}` → `{"mcpx":"status",...DaemonStatus}`, then the daemon closes it;
 * - `{"mcpx":"stop"}` → `{"mcpx":"stopping"}`, then the daemon shuts down;
 * - `{"mcpx":"retire"}` (a shim of another version) → `{"mcpx":"retiring"}`: the daemon
 *   leaves its socket to a new daemon and exits when its last client leaves.
 *
 * Node built-ins only: the stdio shim loads this.
 */
import { StringDecoder } from "node:string_decoder";

export type ControlRequest =
  | { mcpx: "attach"; version: string; caller?: string }
  | { mcpx: "status" }
  | { mcpx: "stop" }
  | { mcpx: "retire" };

export interface DaemonStatus {
  pid: number;
  version: string;
  config: string;
  /** ISO time the daemon started. */
  started: string;
  clients: number;
  upstreams: { name: string; status: string; running: boolean; tools: number }[];
}

export type ControlAnswer =
  | { mcpx: "attached"; version: string; pid: number }
  | ({ mcpx: "status" } & DaemonStatus)
  | { mcpx: "stopping" }
  | { mcpx: "retiring" }
  | { mcpx: "refused"; reason: string };

const ACTIONS = new Set(["attach", "status", "stop", "retire"]);

/**
 * The longest line a connection carries (bytes, its newline included): the MCP SDK's stdio bound
 * (`STDIO_DEFAULT_MAX_BUFFER_SIZE`, which the daemon's reader holds each connection to). Written
 * out here because the shim loads no SDK; a test holds the two equal.
 */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** The control line `line` carries, or undefined when it is none. */
export function parseControl(line: string): ControlRequest | undefined {
  try {
    const value = JSON.parse(line) as { mcpx?: unknown; version?: unknown; caller?: unknown };
    if (typeof value !== "object" || value === null || typeof value.mcpx !== "string")
      return undefined;
    if (!ACTIONS.has(value.mcpx)) return undefined;
    if (value.mcpx === "attach") {
      if (typeof value.version !== "string") return undefined;
      return {
        mcpx: "attach",
        version: value.version,
        ...(typeof value.caller === "string" && { caller: value.caller }),
      };
    }
    return { mcpx: value.mcpx } as ControlRequest;
  } catch {
    return undefined;
  }
}

/** A line past the reader's bound, dropped as it came: how it began and how it ended. */
export interface DroppedLine {
  head: string;
  tail: string;
}

/** The ends of a dropped line kept to find its id. */
const ENDS = 256;

/**
 * Splits a byte stream into lines (without "\n"); `rest()` is what follows the last one. With
 * `maxLine`, a line still unfinished past that many characters is dropped as it comes, up to its
 * newline, and reported to `onDropped`: memory stays bounded whatever the peer sends.
 */
export class LineReader {
  private buffer = "";
  private readonly decoder = new StringDecoder("utf8");
  private dropped: DroppedLine | undefined;

  constructor(
    private readonly maxLine = Infinity,
    private readonly onDropped: (line: DroppedLine) => void = () => {},
  ) {}

  push(chunk: Buffer | string): string[] {
    let text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    if (this.dropped) {
      const end = text.indexOf("\n");
      this.drop(end === -1 ? text : text.slice(0, end));
      if (end === -1) return [];
      this.finishDrop();
      text = text.slice(end + 1);
    }
    // Only the new text can hold a newline: a long line is not searched again chunk after chunk.
    const lines = text.includes("\n") ? (this.buffer + text).split("\n") : undefined;
    this.buffer = lines ? (lines.pop() ?? "") : this.buffer + text;
    if (this.buffer.length > this.maxLine) {
      const partial = this.buffer;
      this.buffer = "";
      this.dropped = { head: partial.slice(0, ENDS), tail: "" };
      this.drop(partial);
    }
    return lines ?? [];
  }

  private drop(part: string): void {
    const d = this.dropped!;
    d.tail = (d.tail + part.slice(-ENDS)).slice(-ENDS);
  }

  private finishDrop(): void {
    const dropped = this.dropped!;
    this.dropped = undefined;
    this.onDropped(dropped);
  }

  /** True while a line past the bound is being dropped. */
  get dropping(): boolean {
    return this.dropped !== undefined;
  }

  rest(): string {
    return this.buffer;
  }
}
