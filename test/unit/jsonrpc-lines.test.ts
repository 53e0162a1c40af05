/**
 * src/upstream/lines.ts reads stdio lines without the SDK's schema parse on the hot path: for
 * every value, it must return exactly what the SDK's `parseJSONRPCMessage` returns, or throw
 * where it throws. fast-check draws messages near the schema's edges (ids, keys, `_meta`).
 */
import { PassThrough } from "node:stream";
import { isDeepStrictEqual } from "node:util";
import { parseJSONRPCMessage, ReadBuffer } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineTransport } from "../../src/server/stdio-transport.js";
import { LineReader, toJsonRpcMessage } from "../../src/upstream/lines.js";
import { message } from "../helpers/jsonrpc-arbitrary.js";

const outcome = (f: () => unknown): { value: unknown } | { threw: string } => {
  try {
    return { value: f() };
  } catch (err) {
    return { threw: String(err) };
  }
};

describe("JSON-RPC lines", () => {
  it("accepts, returns and refuses exactly what the SDK's parse does", () => {
    let fast = 0;
    fc.assert(
      fc.property(message, (value) => {
        const sdk = outcome(() => parseJSONRPCMessage(value));
        const ours = outcome(() => toJsonRpcMessage(value));
        if ("value" in ours && ours.value === value) fast++;
        expect(isDeepStrictEqual(ours, sdk)).toBe(true);
      }),
      { numRuns: 4000 },
    );
    // The fast path is taken (else this test proves nothing about it).
    expect(fast).toBeGreaterThan(300);
  });

  it("reads a stream the way the SDK's ReadBuffer does", () => {
    const text = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}',
      "not json",
      '{"jsonrpc":"2.0","id":2,"result":{"content":[]}}\r',
      '{"jsonrpc":"2.0","id":3,"result":{}}',
      '{"jsonrpc":"2.0","method":"notifications/x"}',
      '{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"m","extra":1}}',
      '{"jsonrpc":"2.0","id":5,"unexpected":true}',
      '{"jsonrpc":"2.0","id":6,"result":{"v":"é"}}',
      '{"jsonrpc":"2.0","id":7,"res',
    ].join("\n");
    const bytes = Buffer.from(text);
    const drain = (reader: { readMessage(): unknown }) => {
      const out: unknown[] = [];
      for (;;) {
        const got = outcome(() => reader.readMessage());
        if ("value" in got && got.value === null) return out;
        out.push(got);
      }
    };
    // Chunks split anywhere, a multi-byte character included.
    for (const cut of [1, 7, 70, 150, bytes.length - 3]) {
      const ours = new LineReader();
      const sdk = new ReadBuffer();
      const seen: unknown[][] = [[], []];
      for (const chunk of [bytes.subarray(0, cut), bytes.subarray(cut)]) {
        ours.append(chunk);
        sdk.append(chunk);
        seen[0]!.push(...drain(ours));
        seen[1]!.push(...drain(sdk));
      }
      expect(seen[0]).toEqual(seen[1]);
      expect(seen[0]).toHaveLength(7);
    }
  });

  it("refuses to buffer past its bound, then reads on", () => {
    const reader = new LineReader(16);
    expect(() => reader.append(Buffer.from("x".repeat(17)))).toThrow(/maximum size of 16/);
    reader.append(Buffer.from('{"jsonrpc":"2.0","method":"a"}\n'.slice(0, 16)));
    expect(reader.readMessage()).toBeNull();
  });
});

describe("LineTransport", () => {
  it("delivers messages, reports what is not JSON-RPC, reads on, and closes when input ends", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = new LineTransport(input, output);
    const got: unknown[] = [];
    const errors: string[] = [];
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    transport.onmessage = (m) => got.push(m);
    transport.onerror = (e) => errors.push(e.message);
    await transport.start();
    input.write(
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"oops":1}\nnoise\n',
    );
    input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    await transport.send({ jsonrpc: "2.0", id: 1, result: {} });
    expect(String(output.read())).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    input.end();
    await closed;
    expect(got).toEqual([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ]);
    expect(errors).toHaveLength(1);
    await expect(transport.send({ jsonrpc: "2.0", method: "x" })).rejects.toThrow(/closed/);
  });

  it("reads what an earlier reader took, chunk by chunk: more than the size bound in all", async () => {
    const line = (id: number) =>
      `${JSON.stringify({ jsonrpc: "2.0", id, method: "x", params: { pad: "p".repeat(1 << 20) } })}\n`;
    const chunks = Array.from({ length: 11 }, (_, i) => Buffer.from(line(i)));
    const input = new PassThrough();
    const transport = new LineTransport(input, new PassThrough(), {
      takeover: () => chunks,
      isAnswered: () => false,
    });
    const ids: unknown[] = [];
    transport.onmessage = (m) => ids.push((m as { id: number }).id);
    await transport.start();
    expect(ids).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await transport.close();
  });

  it("reports a handler that throws, answers its request -32603, and reads on", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = new LineTransport(input, output);
    const errors: string[] = [];
    const ids: unknown[] = [];
    transport.onerror = (e) => errors.push(e.message);
    transport.onmessage = (m) => {
      ids.push((m as { id: number }).id);
      if (ids.length === 1) throw new Error("handler failed");
    };
    await transport.start();
    input.write('{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n');
    expect(ids).toEqual([1, 2]);
    expect(errors).toEqual(["handler failed"]);
    // The request it failed on is answered as an internal error, not left waiting.
    expect(JSON.parse(String(output.read()))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32603, message: "Internal server error" },
    });
    await transport.close();
  });

  it("ends when its output breaks, not only when its input ends", async () => {
    const output = new PassThrough();
    const transport = new LineTransport(new PassThrough(), output);
    await transport.start();
    output.emit("error", new Error("EPIPE"));
    await transport.ended;
    await expect(transport.send({ jsonrpc: "2.0", method: "x" })).rejects.toThrow(/closed/);
  });

  it("waits for a full output to drain", async () => {
    const output = new PassThrough({ highWaterMark: 8 });
    const transport = new LineTransport(new PassThrough(), output);
    await transport.start();
    let sent = false;
    const sending = transport.send({ jsonrpc: "2.0", method: "notifications/x" }).then(() => {
      sent = true;
    });
    await Promise.resolve();
    expect(sent).toBe(false);
    output.read();
    await sending;
    expect(sent).toBe(true);
    await transport.close();
  });
});
