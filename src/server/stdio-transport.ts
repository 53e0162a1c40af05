/**
 * The server side of a newline-delimited JSON-RPC stream (stdin/stdout, or a daemon's socket):
 * the SDK's `StdioServerTransport`, reading through `LineReader` (src/upstream/lines.ts), which
 * skips the SDK's schema parse for messages it certainly accepts unchanged. Same contract: lines
 * that are not JSON are skipped, JSON that is not JSON-RPC is reported through `onerror`, an
 * overlong line closes the transport, and the input ending closes it.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { LineReader, serializeLine } from "../upstream/lines.js";

/** A reader that had the input before this transport (src/server/early.ts). */
export interface Predecessor {
  /** Stops it reading; the chunks it read, to be read first. Called when the transport starts. */
  takeover(): Buffer[];
  /** True for a message it already answered: not sent again. */
  isAnswered(message: Record<string, unknown>): boolean;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly reader = new LineReader();
  private started = false;
  private closed = false;
  private markEnded!: () => void;
  /** Resolves once the transport closed, for whatever reason (the input ended, an error, close()). */
  readonly ended = new Promise<void>((resolve) => (this.markEnded = resolve));

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    private readonly before?: Predecessor,
  ) {}

  private readonly deliver = (message: JSONRPCMessage): void => {
    try {
      this.onmessage?.(message);
    } catch (err) {
      // Our bug, not the client's: a request still gets its answer (-32603, as the SDK's entry
      // gives), and the error is reported (feed).
      if ("method" in message && "id" in message) {
        const answer = { code: -32603, message: "Internal server error" };
        void this.send({ jsonrpc: "2.0", id: message.id, error: answer }).catch(() => {});
      }
      throw err;
    }
  };
  private readonly report = (err: Error): void => this.onerror?.(err);

  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    // A handler that throws does not end the reading (nor the process): it is reported.
    if (!this.reader.feed(bytes, this.deliver, this.report)) void this.close();
  };

  private readonly onInputError = (err: Error): void => this.onerror?.(err);

  private readonly onOutputError = (err: Error): void => {
    if (this.closed) return;
    this.onerror?.(err);
    void this.close();
  };

  private readonly onInputEnd = (): void => void this.close();

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error("LineTransport already started"));
    this.started = true;
    const input = this.input as NodeJS.ReadableStream & {
      readableEnded?: boolean;
      destroyed?: boolean;
    };
    // In the same turn as the takeover: no chunk can fall between the two readers.
    const read = this.before?.takeover() ?? [];
    input.on("data", this.onData);
    input.on("error", this.onInputError);
    input.on("end", this.onInputEnd);
    input.on("close", this.onInputEnd);
    this.output.on("error", this.onOutputError);
    // Chunk by chunk, as they came: the size bound holds per line still being read, not per load.
    for (const chunk of read) if (!this.closed) this.onData(chunk);
    if (input.readableEnded || input.destroyed) setImmediate(this.onInputEnd);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    const input = this.input;
    input.off("data", this.onData);
    input.off("error", this.onInputError);
    input.off("end", this.onInputEnd);
    input.off("close", this.onInputEnd);
    // Stay subscribed until the end: an error after close must not go unhandled.
    this.output.off("error", this.onOutputError);
    this.output.on("error", ignore);
    if (input.listenerCount("data") === 0) input.pause();
    this.reader.clear();
    this.markEnded();
    this.onclose?.();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("LineTransport is closed"));
    if (this.before?.isAnswered(message)) return Promise.resolve();
    const output = this.output;
    if (output.write(serializeLine(message))) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        output.off("drain", done);
        output.off("error", done);
        if (err) reject(err);
        else resolve();
      };
      output.once("drain", done);
      output.once("error", done);
    });
  }
}

function ignore(): void {}
