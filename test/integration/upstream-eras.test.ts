/**
 * Upstream era matrix: the built mcpx (over HTTP, for /healthz) with upstreams of both protocol
 * eras — the SDK v2 fixture (test/fixtures/upstreams/modern.mjs) over stdio and HTTP, and the
 * legacy npm servers (server-everything over stdio and streamable HTTP, filesystem, memory) —
 * each through a downstream client of each era.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import getPort from "get-port";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  legacyDownstream,
  modernDownstream,
  type ClientEra,
  type Downstream,
} from "../helpers/eras.js";
import {
  fixtureServer,
  npmServer,
  ROOT,
  startHttp,
  startHttpFixture,
  stop,
  tempDir,
  text,
  within,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

interface Row {
  name: string;
  era: "legacy" | "modern";
  protocolVersion: string;
  /** What describe("name") says the server is (its title, name or first instruction sentence). */
  summary: string;
  tool: string;
  args: Record<string, unknown>;
  answer: string | RegExp;
}

const UPSTREAMS: Row[] = [
  {
    name: "modern_stdio",
    era: "modern",
    protocolVersion: "2026-07-28",
    // No title: the catalog describes it by its instructions.
    summary: "Modern fixture: echo answers with the era; slow reports progress.",
    tool: "echo",
    args: { message: "hi" },
    answer: "hi (modern)",
  },
  {
    name: "modern_http",
    era: "modern",
    protocolVersion: "2026-07-28",
    summary: "Modern Fixture",
    tool: "echo",
    args: { message: "hi" },
    answer: "hi (modern)",
  },
  {
    name: "everything",
    era: "legacy",
    protocolVersion: "2025-11-25",
    summary: "Everything Reference Server",
    tool: "echo",
    args: { message: "hi" },
    answer: "Echo: hi",
  },
  {
    name: "everything_http",
    era: "legacy",
    protocolVersion: "2025-11-25",
    summary: "Everything Reference Server",
    tool: "echo",
    args: { message: "hi" },
    answer: "Echo: hi",
  },
  {
    name: "filesystem",
    era: "legacy",
    protocolVersion: "2025-11-25",
    summary: "secure-filesystem-server",
    tool: "list_allowed_directories",
    args: {},
    answer: /Allowed directories/,
  },
  {
    name: "memory",
    era: "legacy",
    protocolVersion: "2025-11-25",
    summary: "memory-server",
    tool: "read_graph",
    args: {},
    answer: /entities/,
  },
];

interface Recorded {
  method: string;
  rpc: string | null;
}

const dir = tempDir();
let modernHttp: { url: string; base: string; child: ChildProcess };
let everythingHttp: ChildProcess;
let configFile: string;

beforeAll(async () => {
  const files = path.join(dir, "files");
  mkdirSync(files, { recursive: true });
  writeFileSync(path.join(files, "hello.txt"), "hello\n");
  modernHttp = await startHttpFixture({ MODERN_HTTP: "1" }, "modern.mjs");
  const port = await getPort();
  everythingHttp = spawn(
    process.execPath,
    [
      path.join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
      "streamableHttp",
    ],
    { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let err = "";
    everythingHttp.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      if (err.includes("listening on port")) resolve();
    });
    everythingHttp.once("exit", (code) => reject(new Error(`server-everything exited ${code}`)));
  });
  configFile = writeConfig(
    {
      mcpServers: {
        // shared: add_tool runs in the process whose listen stream announces the change.
        modern_stdio: { ...fixtureServer("modern.mjs", { MODERN_TITLE: "0" }), session: "shared" },
        // prewarm asked for, yet a stateless upstream gets no spares: they would buy nothing.
        // isolated (named: the default is client): a call is exactly one POST.
        modern_http: { url: modernHttp.url, prewarm: 1, session: "isolated" },
        everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
        everything_http: {
          url: `http://127.0.0.1:${port}/mcp`,
          prewarm: 1,
          session: "isolated",
        },
        filesystem: npmServer("@modelcontextprotocol/server-filesystem", files),
        memory: {
          ...npmServer("@modelcontextprotocol/server-memory"),
          env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") },
        },
      },
      // No health checks during the tests: the request counts at the fixture are the calls'.
      health: { interval: 3_600_000 },
    },
    dir,
  );
}, 60_000);

afterAll(async () => {
  await stop(modernHttp.child);
  await stop(everythingHttp);
});

const requests = async () =>
  (await (await fetch(`${modernHttp.base}/control/requests`)).json()) as Recorded[];
const abortedAtFixture = async () =>
  ((await (await fetch(`${modernHttp.base}/control/stats`)).json()) as { aborted: number }).aborted;

const CLIENTS: { era: ClientEra; connect: (proxy: RunningHttp) => Promise<Downstream> }[] = [
  { era: "legacy", connect: (proxy) => Promise.resolve(legacyDownstream(proxy.client)) },
  { era: "modern", connect: (proxy) => modernDownstream(proxy.url) },
];

for (const { era: clientEra, connect } of CLIENTS) {
  describe(`upstreams of both eras through a ${clientEra} client`, () => {
    let proxy: RunningHttp;
    let client: Downstream;
    const healthz = async () =>
      (await (await fetch(proxy.url.replace(/\/mcp$/, "/healthz"))).json()) as {
        servers: Record<
          string,
          {
            status: string;
            era?: string;
            protocolVersion?: string;
            sessions?: { open: number; leased: number; spares: number };
          }
        >;
      };

    beforeAll(async () => {
      proxy = await startHttp(configFile, [], {}, { era: "legacy" });
      client = await connect(proxy);
    }, 60_000);
    afterAll(async () => {
      await client?.close();
      await proxy?.close();
    });

    it.each(UPSTREAMS)(
      "$name: era in /healthz and describe, identity, tools, a call",
      async (row) => {
        const health = (await healthz()).servers[row.name];
        expect(health).toMatchObject({
          status: "ready",
          era: row.era,
          protocolVersion: row.protocolVersion,
        });
        const described = await client.describe(row.name);
        expect(described.split("\n")[0]).toBe(
          `## ${row.name} (MCP ${row.protocolVersion}, ${row.era}) — ${row.summary}`,
        );
        expect(described).toContain(`${row.name}.${row.tool}(`);
        const result = await client.call(`${row.name}.${row.tool}`, row.args);
        expect(result.isError, text(result)).toBeFalsy();
        expect(text(result)).toMatch(row.answer);
      },
    );

    const MODERN = ["modern_stdio", "modern_http"];

    it.each(MODERN)("%s: progress reaches the client", async (name) => {
      const progress: number[] = [];
      // 200 ms between notifications: a busy CI machine delayed two of four by over 50 ms.
      const result = await client.call(
        `${name}.slow`,
        { ms: 800 },
        { onProgress: (p) => progress.push(p.progress) },
      );
      expect(text(result)).toBe("done");
      // The last one may trail the result on its way down, and is then dropped by the client.
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress).toEqual([1, 2, 3, 4].slice(0, progress.length));
    });

    it.each(MODERN)("%s: log messages arrive at the level the client asked for", async (name) => {
      const before = client.logs.length;
      const quiet = await client.call(
        `${name}.log`,
        { level: "debug", message: `${name} debug line` },
        { logLevel: "info" },
      );
      expect(text(quiet)).toMatch(/^logged debug; request log level (info|debug)$/);
      const loud = await client.call(
        `${name}.log`,
        { level: "warning", message: `${name} warning line` },
        { logLevel: "info" },
      );
      expect(loud.isError, text(loud)).toBeFalsy();
      await expect
        .poll(() => client.logs.slice(before).map((l) => `${l.level} ${String(l.data)}`))
        .toEqual([`warning ${name} warning line`]);
    });

    it.each(MODERN)("%s: cancelling a call cancels it upstream", async (name) => {
      const abortedBefore = await abortedAtFixture();
      const controller = new AbortController();
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const call = client
        .call(
          `${name}.slow`,
          { ms: 2_000 },
          { signal: controller.signal, onProgress: () => started() },
        )
        .then(
          () => "answered",
          () => "rejected",
        );
      await within(
        Promise.race([running, call.then((how) => Promise.reject(new Error(`call ${how} first`)))]),
        15_000,
        "the call's first progress",
      );
      controller.abort();
      expect(await call).toBe("rejected");
      if (name === "modern_http") {
        await expect.poll(abortedAtFixture, { timeout: 10_000 }).toBe(abortedBefore + 1);
      } else {
        await expect
          .poll(() => proxy.stderr().split("modern: slow aborted").length - 1, {
            timeout: 10_000,
          })
          .toBeGreaterThan(0);
      }
    });

    it.each(MODERN)("%s: list_changed from the upstream reaches the client", async (name) => {
      const tool = `added_${name}_${clientEra}`;
      const changed = client.nextToolsChanged();
      const added = await client.call(`${name}.add_tool`, { name: tool });
      expect(text(added)).toBe(`added ${tool}`);
      await within(changed, 15_000, "tools/list_changed");
      expect(await client.describe(name)).toContain(`${name}.${tool}(`);
    });

    it("modern_http: list_changed still arrives after the upstream drops the stream", async () => {
      await fetch(`${modernHttp.base}/control/reset`, { method: "POST" });
      await fetch(`${modernHttp.base}/control/drop-listens`, { method: "POST" });
      // mcpx listens again (after 100 ms); a change announced before that would be missed.
      await expect
        .poll(async () => (await requests()).some((r) => r.rpc === "subscriptions/listen"))
        .toBe(true);
      const tool = `after_drop_${clientEra}`;
      const changed = client.nextToolsChanged();
      await client.call("modern_http.add_tool", { name: tool });
      await within(changed, 15_000, "tools/list_changed");
      expect(await client.describe("modern_http")).toContain(`modern_http.${tool}(`);
    });

    it("an isolated call to a modern HTTP upstream is one POST: no session, no spares", async () => {
      await expect
        .poll(async () => (await healthz()).servers.everything_http?.sessions?.spares)
        .toBe(1);
      expect((await healthz()).servers.modern_http?.sessions?.spares).toBe(0);
      await fetch(`${modernHttp.base}/control/reset`, { method: "POST" });
      const result = await client.call("modern_http.echo", { message: "once" });
      expect(text(result)).toBe("once (modern)");
      // The call's session closes after the answer went out: wait until only the list_changed
      // stream's session is left, then count.
      await expect
        .poll(async () => (await healthz()).servers.modern_http?.sessions)
        .toMatchObject({ open: 1, leased: 0 });
      expect((await requests()).map((r) => `${r.method} ${r.rpc}`)).toEqual(["POST tools/call"]);
    });
  });
}
