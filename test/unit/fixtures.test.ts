/**
 * Checks the fixture upstreams in test/fixtures/upstreams with the real SDK client, so tests that
 * rely on them fail here first when a fixture breaks rather than somewhere deep in the proxy.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";

const UPSTREAMS = fileURLToPath(new URL("../fixtures/upstreams/", import.meta.url));
const CORPUS = fileURLToPath(new URL("../fixtures/corpus/github-mcp-server/", import.meta.url));

/** Everything opened by a test, closed after it whatever the outcome. */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function text(result: unknown): string {
  const block = (result as CallToolResult).content[0];
  if (block?.type !== "text") throw new Error("expected a text block");
  return block.text;
}

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: "fixtures-test", version: "0.0.0" });
  cleanups.push(() => client.close());
  await client.connect(transport);
  return client;
}

/** Spawns a stdio fixture through the SDK transport; stderr is collected, not inherited. */
function stdio(file: string, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(UPSTREAMS, file)],
    env: { ...getDefaultEnvironment(), ...env },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  return { transport, stderr };
}

/** Spawns a fixture directly; the child is SIGKILLed after the test if still running. */
function spawnFixture(file: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [join(UPSTREAMS, file)], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  // Drain both pipes so a chatty child never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  });
  return child;
}

/** Resolves with the first match of `pattern` in the stream's output; rejects if the child exits first. */
function waitFor(
  child: ChildProcess,
  stream: Readable,
  pattern: RegExp,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onExit = (code: number | null) =>
      reject(new Error(`child exited (${code}) before ${pattern}; output: ${seen}`));
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (!match) return;
      stream.off("data", onData);
      child.off("exit", onExit);
      resolve(match);
    };
    stream.on("data", onData);
    child.once("exit", onExit);
  });
}

function exitOf(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.signalCode ?? child.exitCode);
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(signal ?? code)));
}

describe("replay", () => {
  const recorded = readdirSync(CORPUS)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(CORPUS, f), "utf8")) as Tool);

  it("serves the 117 recorded tools with their input schemas untouched", async () => {
    const client = await connect(stdio("replay.mjs").transport);
    expect(client.getServerVersion()?.name).toBe("replay");

    const { tools, nextCursor } = await client.listTools();
    expect(tools).toHaveLength(117);
    expect(nextCursor).toBeUndefined();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const tool of recorded)
      expect(byName.get(tool.name)?.inputSchema).toEqual(tool.inputSchema);

    const result = await client.callTool({ name: "get_me", arguments: { a: 1 } });
    expect(JSON.parse(text(result))).toEqual({ tool: "get_me", arguments: { a: 1 } });
  });

  it("pages tools/list when PAGE_SIZE is set and serves uniform_rows with REPLAY_EXTRA", async () => {
    const client = await connect(
      stdio("replay.mjs", { PAGE_SIZE: "25", REPLAY_EXTRA: "1" }).transport,
    );

    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 20);
    expect(pages).toBe(5);
    expect(new Set(names).size).toBe(118);
    expect(names).toContain("uniform_rows");

    const result = await client.callTool({ name: "uniform_rows", arguments: { count: 3 } });
    const rows = (result.structuredContent as { rows: Record<string, unknown>[] }).rows;
    expect(rows).toHaveLength(3);
    expect(Object.keys(rows[0] ?? {})).toEqual(["id", "name", "state", "created_at", "score"]);
    expect(JSON.parse(text(result))).toEqual(rows);
  });

  it("answers list_issues and issue_read get from REPLAY_ISSUES issues; other tools still echo", async () => {
    const client = await connect(stdio("replay.mjs", { REPLAY_ISSUES: "60" }).transport);
    const all = JSON.parse(
      text(await client.callTool({ name: "list_issues", arguments: { perPage: 60 } })),
    ) as { issues: { number: number; state: string; labels: string[]; user: { login: string } }[] };
    expect(all.issues).toHaveLength(60);
    const bugs = JSON.parse(
      text(
        await client.callTool({
          name: "list_issues",
          arguments: { state: "open", labels: ["bug"], perPage: 100, fields: ["number", "user"] },
        }),
      ),
    ) as { issues: { number: number }[]; totalCount: number };
    const expected = all.issues.filter((i) => i.state === "OPEN" && i.labels.includes("bug"));
    expect(bugs.issues.map((i) => i.number)).toEqual(expected.map((i) => i.number));
    expect(Object.keys(bugs.issues[0] ?? {})).toEqual(["number", "user"]);
    const issue = JSON.parse(
      text(
        await client.callTool({
          name: "issue_read",
          arguments: { method: "get", owner: "o", repo: "r", issue_number: expected[0]!.number },
        }),
      ),
    ) as { number: number; user: { login: string }; html_url: string };
    expect(issue.user.login).toBe(expected[0]!.user.login);
    expect(issue.html_url).toBe(`https://github.com/o/r/issues/${expected[0]!.number}`);
    const missing = await client.callTool({
      name: "issue_read",
      arguments: { method: "get", owner: "o", repo: "r", issue_number: 1 },
    });
    expect(missing.isError).toBe(true);
    const echoed = await client.callTool({ name: "get_me", arguments: {} });
    expect(JSON.parse(text(echoed))).toEqual({ tool: "get_me", arguments: {} });
  });
});

describe("faulty (stdio)", () => {
  it("answers echo, fail, pid, state, log, progress, resources and prompts", async () => {
    const { transport } = stdio("faulty.mjs");
    const client = await connect(transport);

    expect(text(await client.callTool({ name: "echo", arguments: { message: "hi" } }))).toBe("hi");
    expect((await client.callTool({ name: "fail", arguments: {} })).isError).toBe(true);
    expect(text(await client.callTool({ name: "pid", arguments: {} }))).toBe(String(transport.pid));

    await client.callTool({ name: "stateful_set", arguments: { value: "v1" } });
    expect(text(await client.callTool({ name: "stateful_get", arguments: {} }))).toBe("v1");

    const logged = new Promise((resolve) =>
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => resolve(n.params)),
    );
    await client.callTool({ name: "log", arguments: { level: "warning", message: "careful" } });
    expect(await logged).toMatchObject({ level: "warning", data: "careful" });

    const progress: number[] = [];
    const slow = await client.callTool({ name: "slow", arguments: { ms: 250 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(text(slow)).toBe("slept 250 ms");
    expect(progress.length).toBeGreaterThanOrEqual(2);

    const info = await client.readResource({ uri: "fixture://info" });
    expect(info.contents[0]).toMatchObject({ text: "faulty fixture" });
    const item = await client.readResource({ uri: "fixture://item/42" });
    expect(item.contents[0]).toMatchObject({ text: "item 42" });
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: "Say hello to Ada." });
  });

  it("rejects hang on request timeout and slow on cancellation, then keeps serving", async () => {
    const client = await connect(stdio("faulty.mjs").transport);

    await expect(
      client.callTool({ name: "hang", arguments: {} }, undefined, { timeout: 200 }),
    ).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });

    const controller = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { ms: 10_000 } }, undefined, {
      signal: controller.signal,
    });
    controller.abort("test cancels");
    await expect(call).rejects.toThrow();

    expect(text(await client.callTool({ name: "echo", arguments: { message: "still" } }))).toBe(
      "still",
    );
  });

  it("rejects the pending call when crash kills the process", async () => {
    const client = await connect(stdio("faulty.mjs").transport);
    await expect(client.callTool({ name: "crash", arguments: {} })).rejects.toMatchObject({
      code: ErrorCode.ConnectionClosed,
    });
  });

  it("works through stdout noise, a stderr flood and a slow start", async () => {
    const { transport, stderr } = stdio("faulty.mjs", {
      FAULT_NOISY_STDOUT: "1",
      FAULT_STDERR_FLOOD: "50",
      FAULT_START_DELAY_MS: "200",
    });
    const errors: Error[] = [];
    transport.onerror = (error) => errors.push(error);
    const client = await connect(transport);
    for (const message of ["a", "b"]) {
      expect(text(await client.callTool({ name: "echo", arguments: { message } }))).toBe(message);
    }
    // The client saw and skipped the garbage lines.
    expect(errors.length).toBeGreaterThan(0);
    expect(stderr.join("")).toContain("flood 49");
  });

  it("fails the first FAULT_FAIL_STARTS starts, then starts normally", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcpx-faulty-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env = { FAULT_FAIL_STARTS: "1", FAULT_STATE_FILE: join(dir, "starts") };

    await expect(connect(stdio("faulty.mjs", env).transport)).rejects.toThrow();
    const client = await connect(stdio("faulty.mjs", env).transport);
    expect(text(await client.callTool({ name: "echo", arguments: { message: "up" } }))).toBe("up");
    expect(readFileSync(env.FAULT_STATE_FILE, "utf8")).toBe("2");
  });

  it("with FAULT_IGNORE_SIGTERM survives SIGTERM and stdin closing, dies on SIGKILL", async () => {
    const child = spawnFixture("faulty.mjs", { FAULT_IGNORE_SIGTERM: "1" });
    const stderr = child.stderr as Readable;
    const pid = Number((await waitFor(child, stderr, /fixture pid (\d+)/))[1]);
    expect(pid).toBe(child.pid);

    const ignored = waitFor(child, stderr, /SIGTERM ignored/);
    child.kill("SIGTERM");
    await ignored;
    // Still serving after the signal was handled.
    const pong = waitFor(child, child.stdout as Readable, /"id":1/);
    child.stdin?.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await pong;

    const closed = waitFor(child, stderr, /fixture stdin closed/);
    child.stdin?.end();
    await closed;
    expect(() => process.kill(pid, 0)).not.toThrow();

    const exit = exitOf(child);
    child.kill("SIGKILL");
    expect(await exit).toBe("SIGKILL");
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });
});

describe("http-faulty", () => {
  async function startHttp(env: Record<string, string> = {}) {
    const child = spawnFixture("http-faulty.mjs", { PORT: "0", ...env });
    const [, port] = await waitFor(child, child.stdout as Readable, /^listening (\d+)\n/);
    const base = `http://127.0.0.1:${port}`;
    const control = async (path: string) => {
      const response = await fetch(`${base}/control/${path}`, { method: "POST" });
      expect(response.ok).toBe(true);
    };
    return { child, base, mcp: new URL(`${base}/mcp`), control };
  }

  it("serves echo and pid, and answers the injected status until recovered", async () => {
    const { child, mcp, control } = await startHttp();
    const client = await connect(new StreamableHTTPClientTransport(mcp));
    expect(client.getServerVersion()?.name).toBe("http-faulty");
    expect(text(await client.callTool({ name: "echo", arguments: { message: "hi" } }))).toBe("hi");
    expect(text(await client.callTool({ name: "pid", arguments: {} }))).toBe(String(child.pid));

    await control("fail?status=500");
    await expect(client.callTool({ name: "pid", arguments: {} })).rejects.toMatchObject({
      code: 500,
    });
    await expect(connect(new StreamableHTTPClientTransport(mcp))).rejects.toMatchObject({
      code: 500,
    });

    await control("recover");
    expect(text(await client.callTool({ name: "echo", arguments: { message: "ok" } }))).toBe("ok");
  });

  it("requires the HTTP_REQUIRE_HEADER header", async () => {
    const { mcp } = await startHttp({ HTTP_REQUIRE_HEADER: "X-Token: s3cret" });
    await expect(connect(new StreamableHTTPClientTransport(mcp))).rejects.toMatchObject({
      code: 401,
    });
    const transport = new StreamableHTTPClientTransport(mcp, {
      requestInit: { headers: { "X-Token": "s3cret" } },
    });
    const client = await connect(transport);
    expect(text(await client.callTool({ name: "echo", arguments: { message: "in" } }))).toBe("in");
  });

  it("speaks legacy SSE with HTTP_SSE=1 and refuses streamable HTTP", async () => {
    const { base, mcp } = await startHttp({ HTTP_SSE: "1" });
    await expect(connect(new StreamableHTTPClientTransport(mcp))).rejects.toMatchObject({
      code: 404,
    });
    const client = await connect(new SSEClientTransport(new URL(`${base}/sse`)));
    expect(text(await client.callTool({ name: "echo", arguments: { message: "old" } }))).toBe(
      "old",
    );
  });
});
