/**
 * Upstreams of both protocol eras through the client factory (src/upstream/factory.ts): the
 * era probe runs once per upstream and its verdict is reused, servers that mishandle the probe
 * are served as legacy, a modern HTTP upstream costs one request per call, and requests pass
 * results, progress, log messages and cancellation through. Real processes and real HTTP.
 */
import type { ChildProcess } from "node:child_process";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { connectTransport, createClientFactory } from "../../src/upstream/factory.js";
import { classifyFailure } from "../../src/upstream/sdk-errors.js";
import type { ClientFactory, LogMessage, UpstreamSession } from "../../src/upstream/types.js";
import { ChildTracker } from "../../src/upstream/transport.js";
import { quietLogger } from "../helpers/inmemory.js";
import { fixtureServer, npmServer, startHttpFixture, stop, text } from "../helpers/proxy.js";

/**
 * The client factory of one config entry, as the registry builds it; `lines` gets its log. The
 * default probe timeout unless given: a loaded machine may start a server slowly.
 */
function factoryFor(
  entry: Record<string, unknown>,
  lines: string[] = [],
  stdioProbeTimeoutMs?: number,
): ClientFactory {
  const config = parseConfig({ mcpServers: { s: entry } }, "/test/mcpx.json", {});
  return createClientFactory(config.servers[0]!, {
    logger: quietLogger(lines),
    connectTimeoutMs: 15_000,
    ...(stdioProbeTimeoutMs !== undefined && { stdioProbeTimeoutMs }),
  });
}

const opts = { timeoutMs: 10_000 };
const count = (lines: string[], needle: string) => lines.filter((l) => l.includes(needle)).length;

const sessions: UpstreamSession[] = [];
async function open(factory: ClientFactory): Promise<UpstreamSession> {
  const session = await factory();
  sessions.push(session);
  return session;
}
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});

describe("stdio upstreams: the era probe runs once per upstream", () => {
  it("a modern server is probed by its first session only; later ones start with the verdict", async () => {
    const lines: string[] = [];
    const factory = factoryFor(fixtureServer("modern.mjs"), lines);
    const first = await open(factory);
    expect(first.era).toBe("modern");
    expect(first.protocolVersion).toBe("2026-07-28");
    expect(first.stateless).toBe(false);
    expect(first.identity).toMatchObject({
      name: "modern-fixture",
      title: "Modern Fixture",
      version: "2.0.0",
      era: "modern",
      protocolVersion: "2026-07-28",
    });
    expect(first.identity.instructions).toContain("Modern fixture");
    expect(count(lines, "rpc server/discover")).toBe(1);

    const second = await open(factory);
    expect(second.era).toBe("modern");
    expect(second.pid).not.toBe(first.pid);
    expect(text(await second.callTool("echo", { message: "hi" }, opts))).toBe("hi (modern)");
    await expect.poll(() => count(lines, "rpc tools/call")).toBe(1);
    // The second process got the call and nothing before it.
    expect(count(lines, "rpc server/discover")).toBe(1);
    expect(count(lines, "rpc initialize")).toBe(0);
  });

  it("a legacy npm server answers the probe with an error and is served as legacy", async () => {
    const session = await open(factoryFor(npmServer("@modelcontextprotocol/server-everything")));
    expect(session.era).toBe("legacy");
    expect(session.protocolVersion).toBe("2025-11-25");
    expect(session.stateless).toBe(false);
    expect((await session.listTools(opts)).map((t) => t.name)).toContain("echo");
  });

  it("a legacy server that exits on the probe is started again as legacy, and never probed again", async () => {
    const lines: string[] = [];
    const factory = factoryFor(fixtureServer("faulty.mjs", { FAULT_PREINIT: "exit" }), lines);
    const first = await open(factory);
    expect(first.era).toBe("legacy");
    expect(count(lines, "pre-init server/discover")).toBe(1);
    const second = await open(factory);
    expect(text(await second.callTool("echo", { message: "again" }, opts))).toBe("again");
    expect(count(lines, "pre-init")).toBe(1);
  });

  it("a legacy server that ignores the probe is served as legacy after the probe timeout, once", async () => {
    const lines: string[] = [];
    const factory = factoryFor(
      fixtureServer("faulty.mjs", { FAULT_PREINIT: "silent" }),
      lines,
      500,
    );
    const first = await open(factory);
    expect(first.era).toBe("legacy");
    expect(count(lines, "pre-init server/discover")).toBe(1);
    const second = await open(factory);
    expect(text(await second.callTool("echo", { message: "quiet" }, opts))).toBe("quiet");
    expect(count(lines, "pre-init")).toBe(1);
  });

  it("aborting a session while its era is probed ends it at once (the SDK's probe ignores the signal)", async () => {
    const lines: string[] = [];
    const tracker = new ChildTracker();
    const config = parseConfig(
      { mcpServers: { s: fixtureServer("faulty.mjs", { FAULT_PREINIT: "silent" }) } },
      "/test/mcpx.json",
      {},
    );
    const factory = createClientFactory(config.servers[0]!, {
      logger: quietLogger(lines),
      tracker,
      connectTimeoutMs: 60_000,
      stdioProbeTimeoutMs: 60_000,
    });
    const controller = new AbortController();
    const opening = factory(controller.signal).then(
      () => "opened",
      () => "rejected",
    );
    await expect.poll(() => count(lines, "pre-init server/discover"), { timeout: 10_000 }).toBe(1);
    controller.abort(new Error("pool closed"));
    expect(await opening).toBe("rejected");
    await expect.poll(() => tracker.size).toBe(0);
    await tracker.close();
  }, 20_000);

  it("forgetEra makes the next session probe again", async () => {
    const lines: string[] = [];
    const factory = factoryFor(fixtureServer("faulty.mjs", { FAULT_PREINIT: "exit" }), lines);
    await open(factory);
    await open(factory);
    expect(count(lines, "pre-init")).toBe(1);
    factory.forgetEra?.();
    expect((await open(factory)).era).toBe("legacy");
    expect(count(lines, "pre-init")).toBe(2);
  });
});

interface Recorded {
  method: string;
  rpc: string | null;
}

describe("a modern HTTP upstream", () => {
  let fixture: { url: string; base: string; child: ChildProcess };
  let factory: ClientFactory;
  const requests = async () =>
    (await (await fetch(`${fixture.base}/control/requests`)).json()) as Recorded[];
  const reset = () => fetch(`${fixture.base}/control/reset`, { method: "POST" });

  beforeAll(async () => {
    fixture = await startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs");
    factory = factoryFor({ url: fixture.url });
    // The first session probes: one server/discover.
    const first = await open(factory);
    expect(first.era).toBe("modern");
    expect(first.stateless).toBe(true);
    expect(first.identity.instructions).toContain("Modern fixture");
    expect(await requests()).toEqual([{ method: "POST", rpc: "server/discover", status: 200 }]);
    await first.close();
  });
  afterAll(async () => {
    await stop(fixture.child);
  });

  it("a session costs nothing to open and close: a call is one POST", async () => {
    await reset();
    const session = await open(factory);
    expect(session.stateless).toBe(true);
    expect(session.identity.name).toBe("modern-fixture");
    expect(await requests()).toEqual([]);
    expect(text(await session.callTool("echo", { message: "one" }, opts))).toBe("one (modern)");
    await session.close();
    expect((await requests()).map((r) => `${r.method} ${r.rpc}`)).toEqual(["POST tools/call"]);
  });

  it("health checks use server/discover (the modern era has no ping)", async () => {
    const session = await open(factory);
    await reset();
    await session.ping({ timeoutMs: 5_000 });
    expect((await requests()).map((r) => r.rpc)).toEqual(["server/discover"]);
  });

  it("results pass through with every key, without the upstream's protocol envelope", async () => {
    const session = await open(factory);
    const result = await session.callTool("rich", {}, opts);
    expect(result).toEqual({
      content: [{ type: "text", text: "rich" }],
      structuredContent: { answer: 42 },
      _meta: { "fixture/trace": "t-1" },
      extra: { kept: true },
    });
  });

  it("lists and reads resources, templates and prompts", async () => {
    const session = await open(factory);
    expect((await session.listResources(opts)).map((r) => r.uri)).toEqual(["modern://readme"]);
    expect((await session.listResourceTemplates(opts)).map((t) => t.uriTemplate)).toEqual([
      "modern://item/{id}",
    ]);
    expect((await session.listPrompts(opts)).map((p) => p.name)).toEqual(["greet"]);
    expect(await session.readResource("modern://item/7", opts)).toEqual({
      contents: [{ uri: "modern://item/7", text: "item 7" }],
    });
  });

  it("log messages come only when the request names a level, at that level", async () => {
    const session = await open(factory);
    const got: LogMessage[] = [];
    const stop = session.onLog((m) => got.push(m));
    const asked = await session.callTool(
      "log",
      { level: "warning", message: "careful" },
      { ...opts, logLevel: "info" },
    );
    expect(text(asked)).toBe("logged warning; request log level info");
    expect(got).toEqual([{ level: "warning", logger: "modern-fixture", data: "careful" }]);
    const filtered = await session.callTool(
      "log",
      { level: "debug", message: "noise" },
      { ...opts, logLevel: "info" },
    );
    expect(text(filtered)).toBe("logged debug; request log level info");
    const unasked = await session.callTool("log", { level: "error", message: "x" }, opts);
    expect(text(unasked)).toBe("logged error; request log level none");
    expect(got).toHaveLength(1);
    stop();
  });

  it("progress and cancellation", async () => {
    const session = await open(factory);
    const progress: number[] = [];
    const done = await session.callTool(
      "slow",
      { ms: 200 },
      { ...opts, onProgress: (p) => progress.push(p.progress) },
    );
    expect(text(done)).toBe("done");
    expect(progress).toEqual([1, 2, 3, 4]);

    const before = (
      (await (await fetch(`${fixture.base}/control/stats`)).json()) as {
        aborted: number;
      }
    ).aborted;
    // Cancelled once it runs upstream: at its first progress report.
    const controller = new AbortController();
    const call = session.callTool(
      "slow",
      { ms: 2_000 },
      {
        ...opts,
        signal: controller.signal,
        onProgress: () => controller.abort(new Error("client gave up")),
      },
    );
    await expect(call).rejects.toThrow("client gave up");
    await expect
      .poll(
        async () =>
          ((await (await fetch(`${fixture.base}/control/stats`)).json()) as { aborted: number })
            .aborted,
      )
      .toBe(before + 1);
  });

  it("list changes arrive on a listen stream, which ends when the upstream drops it", async () => {
    const watcher = await open(factory);
    const changed: string[] = [];
    watcher.onListChanged((kind) => changed.push(kind));
    const sub = await watcher.listen(opts);
    expect(sub).toBeDefined();
    const caller = await open(factory);
    await caller.callTool("add_tool", { name: "added_by_test" }, opts);
    await expect.poll(() => changed).toEqual(["tools"]);
    expect((await watcher.listTools(opts)).map((t) => t.name)).toContain("added_by_test");
    await fetch(`${fixture.base}/control/drop-listens`, { method: "POST" });
    expect(await sub!.ended).not.toBe("local");
  });

  it("a legacy session never listens: its upstream announces changes unasked", async () => {
    const session = await open(factoryFor(npmServer("@modelcontextprotocol/server-everything")));
    expect(await session.listen(opts)).toBeUndefined();
  });
});

describe("failures from the v2 client", () => {
  it("a request on a closed session is closed; an HTTP upstream gone away is closed", async () => {
    const fixture = await startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs");
    const session = await factoryFor({ url: fixture.url })();
    const pending = session.callTool("slow", { ms: 10_000 }, opts).then(
      () => undefined,
      (e: unknown) => e,
    );
    await stop(fixture.child);
    const gone = await pending;
    expect(classifyFailure(gone).kind).toBe("closed");
    await session.close();
    const after = await session.callTool("echo", { message: "x" }, opts).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyFailure(after).kind).toBe("closed");
  });
});

describe("legacy results pass through", () => {
  it("tool definitions keep keys the SDK's typed verbs would strip", async () => {
    const server = new Server({ name: "raw", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: "t",
          inputSchema: { type: "object" },
          annotations: { title: "T", vendorHint: "kept" },
          "x-vendor": { kept: true },
        },
      ],
    }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const session = await connectTransport(clientSide, { timeoutMs: 5_000 });
    try {
      expect(session.era).toBe("legacy");
      expect(await session.listTools(opts)).toEqual([
        {
          name: "t",
          inputSchema: { type: "object" },
          annotations: { title: "T", vendorHint: "kept" },
          "x-vendor": { kept: true },
        },
      ]);
    } finally {
      await session.close();
      await server.close();
    }
  });
});
