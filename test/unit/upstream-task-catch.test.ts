/**
 * catchTaskResults (src/upstream/wire.ts): a 2026-07-28 `resultType: "task"` answer reaches the
 * SDK client as a `complete` result holding the task, through handlers chained the way the
 * SDK's Protocol chains them (reading `onmessage` back and wrapping it); other messages pass
 * unchanged. The real SDK client over real transports: test/integration/mcp-tasks-relay-modern.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { caughtTask } from "../../src/upstream/tasks.js";
import { catchTaskResults } from "../../src/upstream/wire.js";

function transport(): Transport & { deliver(m: JSONRPCMessage): void } {
  const t = {
    start: () => Promise.resolve(),
    send: () => Promise.resolve(),
    close: () => Promise.resolve(),
    onmessage: undefined as Transport["onmessage"],
    deliver(m: JSONRPCMessage) {
      t.onmessage?.(m);
    },
  };
  return t;
}

describe("catchTaskResults", () => {
  it("turns a task answer into a complete result holding the task, through chained handlers", () => {
    const t = transport();
    catchTaskResults(t);
    const first: JSONRPCMessage[] = [];
    const second: JSONRPCMessage[] = [];
    t.onmessage = (m) => void first.push(m);
    // As the SDK's Protocol.connect does: keep the handler it found, and call it from its own.
    const found = t.onmessage;
    t.onmessage = (m, extra) => {
      found?.(m, extra);
      second.push(m);
    };
    const task = { taskId: "t-1", status: "working", ttlMs: 1_000, pollIntervalMs: 100 };
    t.deliver({ jsonrpc: "2.0", id: 7, result: { resultType: "task", ...task } });
    for (const seen of [first, second]) {
      expect(seen).toHaveLength(1);
      const result = (seen[0] as { result: Record<string, unknown> }).result;
      expect(result.resultType).toBe("complete");
      expect(result.content).toEqual([]);
      expect(caughtTask(result)).toEqual(task);
    }
  });

  it("passes every other message as it is", () => {
    const t = transport();
    catchTaskResults(t);
    const seen: JSONRPCMessage[] = [];
    t.onmessage = (m) => void seen.push(m);
    const messages: JSONRPCMessage[] = [
      { jsonrpc: "2.0", id: 1, result: { resultType: "complete", content: [] } },
      { jsonrpc: "2.0", id: 2, result: { resultType: "input_required", inputRequests: {} } },
      { jsonrpc: "2.0", id: 3, error: { code: -32603, message: "no" } },
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } },
    ];
    for (const m of messages) t.deliver(m);
    expect(seen).toEqual(messages);
    for (const m of seen) expect(messages).toContain(m);
  });
});
