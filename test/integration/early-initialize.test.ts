/**
 * A stdio client's `initialize` is answered while mcpx still loads (src/server/early.ts): the
 * answer must be the one the real server gives, given once, and everything after it must reach
 * the real server in order.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { InMemoryTransport, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { earlyInitializeResult } from "../../src/server/early.js";
import { serveConnection } from "../../src/server/stdio.js";
import { memoryProxy } from "../helpers/inmemory.js";
import {
  cacheEnv,
  eventually,
  INITIALIZE,
  npmServer,
  ROOT,
  stop,
  tempDir,
  writeConfig,
} from "../helpers/proxy.js";

const BIN = path.join(ROOT, "dist/mcpx.cjs");

/** The real server's answer to one raw initialize, in memory. */
async function realAnswer(params: unknown): Promise<JSONRPCMessage> {
  const proxy = memoryProxy({ memo: () => new McpServer({ name: "memo", version: "1" }) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = serveConnection(proxy.context, serverSide);
  const answer = new Promise<JSONRPCMessage>((resolve) => (clientSide.onmessage = resolve));
  await clientSide.start();
  await clientSide.send({ jsonrpc: "2.0", id: 1, method: "initialize", params } as JSONRPCMessage);
  const message = await answer;
  await served.close();
  await proxy.close();
  return message;
}

describe("the early answer to initialize", () => {
  it.each([...SUPPORTED_PROTOCOL_VERSIONS, "2099-01-01", "2024-01-01"])(
    "is the real server's answer for protocol version %s",
    async (protocolVersion) => {
      const params = {
        protocolVersion,
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "c", version: "1" },
      };
      const real = await realAnswer(params);
      expect(real).toHaveProperty("result");
      expect(earlyInitializeResult(params)).toEqual((real as { result: unknown }).result);
    },
  );

  it.each([
    ["no clientInfo", { protocolVersion: "2025-06-18", capabilities: {} }],
    ["a number as version", { protocolVersion: 20250618, capabilities: {}, clientInfo: {} }],
    [
      "the 2026-07-28 envelope",
      {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
      },
    ],
  ])("leaves a request with %s to the real server", (_why, params) => {
    expect(earlyInitializeResult(params)).toBeUndefined();
  });
});

describe("mcpx over stdio with the early answer", () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => stop(c)));
  });

  function spawnMcpx(extra: Record<string, unknown> = {}) {
    const dir = tempDir();
    const config = writeConfig(
      { mcpServers: { memory: npmServer("@modelcontextprotocol/server-memory") }, ...extra },
      dir,
    );
    const child = spawn(process.execPath, [BIN, config, "--log-level", "debug"], {
      env: {
        PATH: process.env.PATH ?? "",
        MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"),
        ...cacheEnv(path.join(dir, "cache")),
      },
    });
    children.push(child);
    const lines: Record<string, unknown>[] = [];
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      for (const line of parts) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    return { child, lines, send, stderr: () => stderr };
  }

  it("answers once, and the real server serves what follows", async () => {
    const m = spawnMcpx();
    m.send(INITIALIZE);
    m.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    m.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    m.send({ jsonrpc: "2.0", id: 3, method: "ping" });
    // tools/list may wait for the first catalog (startupWait); ping does not.
    await eventually(
      () => [2, 3].every((id) => m.lines.some((l) => l.id === id)),
      30_000,
      "the answers to tools/list and ping",
    );
    const byId = (id: number) => m.lines.filter((l) => l.id === id);
    expect(byId(1)).toHaveLength(1);
    expect(byId(1)[0]).toMatchObject({ result: { serverInfo: { name: "mcpx" } } });
    expect(JSON.stringify(byId(2))).toContain('"describe"');
    expect(m.stderr()).toContain("stdio: initialize answered early");
    // The real server saw the initialize: the client's name is its caller.
    m.send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "describe", arguments: {} },
    });
    await eventually(() => byId(4).length === 1, 30_000, "describe's answer");
    expect(JSON.stringify(byId(4))).toContain("memory");
    // Nothing but JSON-RPC on stdout, each answer once.
    const ids = m.lines.map((l) => l.id).filter((id) => id !== undefined);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("an initialize it cannot vouch for gets the real server's one answer", async () => {
    const m = spawnMcpx();
    m.send({ ...INITIALIZE, params: { protocolVersion: "2025-06-18", capabilities: {} } });
    await eventually(() => m.lines.some((l) => l.id === 1), 30_000, "the answer");
    m.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await eventually(() => m.lines.some((l) => l.id === 2), 30_000, "the ping's answer");
    expect(m.lines.filter((l) => l.id === 1)).toHaveLength(1);
    expect(m.lines.find((l) => l.id === 1)).toHaveProperty("error");
    expect(m.stderr()).not.toContain("answered early");
  });

  it("a config that may ask for MCP Apps waits for the real server, which declares the extension", async () => {
    const m = spawnMcpx({ profiles: { default: { servers: ["memory"], apps: "direct" } } });
    m.send(INITIALIZE);
    await eventually(() => m.lines.some((l) => l.id === 1), 30_000, "the answer");
    expect(m.lines.filter((l) => l.id === 1)).toHaveLength(1);
    expect(JSON.stringify(m.lines[0])).toContain("io.modelcontextprotocol/ui");
    expect(m.stderr()).not.toContain("answered early");
  });

  it("a bad config still exits 2 while the client holds stdin open", async () => {
    const child = spawn(process.execPath, [BIN, path.join(tempDir(), "missing.json")]);
    children.push(child);
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
  });
});
