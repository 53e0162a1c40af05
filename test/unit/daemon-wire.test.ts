/**
 * The daemon's line framing (src/daemon/wire.ts), which the shim reads its client with: a line
 * past the bound is dropped as it comes, and reported with its two ends (where a request's id is).
 */
import { describe, expect, it } from "vitest";
import { droppedRequestId, droppedResponseId } from "../../src/daemon/line-ids.js";
import { LineReader, type DroppedLine } from "../../src/daemon/wire.js";

describe("LineReader with a bound", () => {
  it("drops a line still unfinished past the bound, up to its newline, and reads on", () => {
    const dropped: DroppedLine[] = [];
    const reader = new LineReader(10, (d) => dropped.push(d));
    expect(reader.push('a\n{"id":7,' + "x".repeat(30))).toEqual(["a"]);
    expect(reader.rest()).toBe(""); // nothing held past the bound
    expect(reader.push("y".repeat(1000))).toEqual([]);
    expect(reader.dropping).toBe(true);
    expect(dropped).toEqual([]); // reported once its newline comes
    expect(reader.push('yy"}\nb\nc')).toEqual(["b"]);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.head.startsWith('{"id":7,xxx')).toBe(true);
    expect(dropped[0]!.tail.endsWith('yyy"}')).toBe(true);
    expect(dropped[0]!.tail.length).toBeLessThanOrEqual(256);
    expect(reader.rest()).toBe("c");
    expect(reader.dropping).toBe(false);
  });

  it("hands over a whole line past the bound that came in one piece (the caller refuses it)", () => {
    const dropped: DroppedLine[] = [];
    const reader = new LineReader(10, (d) => dropped.push(d));
    expect(reader.push(`${"z".repeat(20)}\nok\n`)).toEqual(["z".repeat(20), "ok"]);
    expect(dropped).toEqual([]);
  });

  it("without a bound, holds any partial line", () => {
    const reader = new LineReader();
    reader.push("q".repeat(100_000));
    expect(reader.rest()).toHaveLength(100_000);
  });
});

describe("the id of a request the shim dropped", () => {
  const line = (head: string, tail: string): DroppedLine => ({ head, tail });
  it.each([
    ['{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"xx', 'xx"}}', 2],
    ['{"method":"tools/call","params":{"a":"xx', 'xx"}},"jsonrpc":"2.0","id":4}', 4],
    ['{"jsonrpc":"2.0","id":"a\\"b","method":"x","params":{"p":"', '"}}', 'a"b'],
    ['{ "jsonrpc": "2.0", "method": "x", "params": {"p":"', '"}, "id": -3 }', -3],
  ])("%s … %s → %j", (head, tail, id) => {
    expect(droppedRequestId(line(head, tail))).toBe(id);
  });

  it.each([
    // A response (its id is one of mcpx's requests, and may equal one of the client's).
    ['{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"', '"}]}}'],
    ['{"result":{"content":[{"type":"text","text":"method', '"}]},"jsonrpc":"2.0","id":5}'],
    // A notification, and a request whose last key is a nested id.
    ['{"method":"notifications/progress","params":{"a":"', '"},"jsonrpc":"2.0"}'],
    ['{"method":"tools/call","params":{"a":"', '","id":9}}'],
  ])("%s … %s → none", (head, tail) => {
    expect(droppedRequestId(line(head, tail))).toBeUndefined();
  });

  it("reads a request whose id comes before its jsonrpc", () => {
    expect(droppedRequestId(line('{"id":7,"jsonrpc":"2.0","method":"x","params":{"', '"}}'))).toBe(
      7,
    );
  });
});

describe("the id of a client's answer the shim dropped", () => {
  const line = (head: string, tail: string): DroppedLine => ({ head, tail });
  it.each([
    // The SDK's order (result first, the id last), and jsonrpc/id first in either order.
    ['{"result":{"content":{"type":"text","text":"', '"}},"jsonrpc":"2.0","id":0}', 0],
    ['{"jsonrpc":"2.0","id":"s-1","result":{"action":"accept","content":{"a":"', '"}}}', "s-1"],
    ['{"id":12,"jsonrpc":"2.0","error":{"code":-1,"message":"', '"}}', 12],
  ])("%s … %s → %j", (head, tail, id) => {
    expect(droppedResponseId(line(head, tail))).toBe(id);
  });

  it.each([
    // A request, a notification, and an answer whose only id at the end is a nested one.
    ['{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"xx', 'xx"}}'],
    ['{"method":"notifications/progress","params":{"a":"', '"},"jsonrpc":"2.0"}'],
    ['{"result":{"content":{"text":"', '","id":9}}}'],
  ])("%s … %s → none", (head, tail) => {
    expect(droppedResponseId(line(head, tail))).toBeUndefined();
  });
});
