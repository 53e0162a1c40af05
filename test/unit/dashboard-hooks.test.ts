/**
 * The narrow hooks the dashboard listens to: call events (never arguments; a failing listener
 * never breaks a call), the logger's tap (redacted, no re-entry), compression savings counted
 * where the encoding is chosen, and the bounded rings.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { encodeValue, type CompressionTally } from "../../src/compression/result.js";
import { percentile } from "../../src/percentile.js";
import { Ring } from "../../src/ring.js";
import type { CallEnded, CallStarted } from "../../src/executor/events.js";
import { createLogger, type LogLine } from "../../src/logger.js";
import type { Proxy } from "../../src/proxy.js";
import { memoryProxy } from "../helpers/inmemory.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

function upstream(): McpServer {
  const server = new McpServer({ name: "up", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: "text", text: message }],
  }));
  return server;
}

describe("call events", () => {
  it("announce each call's start and end with caller, tool, outcome and parent, never arguments", async () => {
    proxy = memoryProxy({ up: upstream });
    await proxy.start();
    const seen: (CallStarted | CallEnded)[] = [];
    const stop = proxy.context.executor.events.on({
      started: (e) => seen.push(e),
      ended: (e) => seen.push(e),
    });
    await proxy.context.executor.call(
      "up.echo",
      { message: "secret-argument" },
      { caller: "cc", parentId: 7 },
    );
    await proxy.context.executor.call("up.nope", {}, { caller: "cc" });
    stop();
    await proxy.context.executor.call("up.echo", { message: "unseen" });
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatchObject({ caller: "cc", server: "up", tool: "echo", parentId: 7 });
    expect(seen[1]).toMatchObject({ id: seen[0]!.id, outcome: "ok", parentId: 7 });
    expect((seen[1] as CallEnded).durationMs).toBeGreaterThan(0);
    expect(seen[3]).toMatchObject({ tool: "nope", outcome: "refused" });
    expect(JSON.stringify(seen)).not.toContain("secret-argument");
  });

  it("a script is announced as one call, its inner calls under it", async () => {
    proxy = memoryProxy({ up: upstream });
    await proxy.start();
    const seen: CallEnded[] = [];
    proxy.context.executor.events.on({ ended: (e) => seen.push(e) });
    const result = await proxy.context.executor.script(
      'await servers.up.echo({ message: "a" }); return (await servers.up.echo({ message: "b" })).text;',
      { caller: "cc" },
      { limitSetting: "profiles.default.codeMode" },
    );
    expect(result.isError).toBeFalsy();
    const script = seen.find((e) => e.tool === "script");
    expect(script).toMatchObject({ caller: "cc", outcome: "ok" });
    expect(script?.parentId).toBeUndefined();
    const inner = seen.filter((e) => e.tool === "echo");
    expect(inner).toHaveLength(2);
    for (const e of inner) expect(e).toMatchObject({ parentId: script!.id, caller: "cc" });
  });

  it("a listener that throws never breaks the call", async () => {
    proxy = memoryProxy({ up: upstream });
    await proxy.start();
    proxy.context.executor.events.on({
      started: () => {
        throw new Error("page bug");
      },
      ended: () => {
        throw new Error("page bug");
      },
    });
    const result = await proxy.context.executor.call("up.echo", { message: "fine" });
    expect(result).toMatchObject({ content: [{ type: "text", text: "fine" }] });
  });
});

describe("logger tap", () => {
  it("hands over each written line, redacted, with the call's caller", () => {
    const written: string[] = [];
    const logger = createLogger({ level: "info", write: (l) => written.push(l) });
    logger.addSecrets(["hunter2-secret"]);
    const tapped: LogLine[] = [];
    const stop = logger.tap((l) => tapped.push(l));
    logger.child("memory").info("token hunter2-secret in a line", { caller: "cc" });
    logger.debug("below the level: neither written nor tapped");
    stop();
    logger.info("after stop");
    expect(tapped).toMatchObject([
      { level: "info", tag: "memory", text: 'token *** in a line {"caller":"cc"}', caller: "cc" },
    ]);
    expect(written).toHaveLength(2);
  });

  it("does not tap what a tap itself logs, and survives a tap that throws", () => {
    const logger = createLogger({ level: "info", write: () => {} });
    let calls = 0;
    logger.tap(() => {
      calls += 1;
      logger.warn("logged from inside the tap");
      throw new Error("tap bug");
    });
    logger.info("one");
    logger.info("two");
    expect(calls).toBe(2);
  });
});

describe("compression savings", () => {
  const rows = Array.from({ length: 30 }, (_, i) => ({ id: i, name: `item ${i}`, done: false }));

  it("counts a table sent as TOON with its JSON and sent estimates", () => {
    const tally: CompressionTally = { blocks: 0, jsonTokens: 0, sentTokens: 0 };
    const text = encodeValue(rows, "auto", tally);
    expect(text).not.toBe(JSON.stringify(rows));
    expect(tally.blocks).toBe(1);
    expect(tally.sentTokens).toBeLessThan(tally.jsonTokens);
  });

  it("counts nothing when JSON is kept", () => {
    const tally: CompressionTally = { blocks: 0, jsonTokens: 0, sentTokens: 0 };
    const nested = { a: { b: { c: { d: [{ x: 1 }, { y: "z" }] } } } };
    expect(encodeValue(nested, "auto", tally)).toBe(JSON.stringify(nested));
    expect(encodeValue(rows, "json", tally)).toBe(JSON.stringify(rows));
    expect(tally).toEqual({ blocks: 0, jsonTokens: 0, sentTokens: 0 });
  });
});

describe("rings", () => {
  it("keep the newest items, oldest first", () => {
    const ring = new Ring<number>(3);
    for (let i = 1; i <= 5; i++) ring.push(i);
    expect(ring.toArray()).toEqual([3, 4, 5]);
    expect(ring.size).toBe(3);
  });

  it("percentiles by nearest rank", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(95);
    expect(percentile([], 50)).toBeUndefined();
    expect(percentile([7], 95)).toBe(7);
  });
});
