/** The `mcpx` command as a user runs it: help, bad configs, ports, and a clean stdout. */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import {
  cacheEnv,
  fixtureServer,
  INITIALIZE,
  MCPX,
  npmServer,
  rawInitialize,
  runMcpx,
  startHttp,
  startHttpFixture,
  stop,
  text,
  writeConfig,
} from "../helpers/proxy.js";

describe("mcpx command line", () => {
  it("prints help and version on stdout and exits 0", async () => {
    const help = await runMcpx(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: mcpx <config> [options] | <command> [options]");
    const version = await runMcpx(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("exits 2 naming the file when the config is missing", async () => {
    const r = await runMcpx(["/nonexistent/mcpx.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("/nonexistent/mcpx.json");
    expect(r.stderr).toContain("file not found");
    expect(r.stdout).toBe("");
  });

  it("says what is wrong in one line and how to fix it in the next, exit 2", async () => {
    const r = await runMcpx(["instal", "cursor"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      'mcpx: unknown command "instal". Did you mean "install"?\n  Run mcpx install --help, or pass a config file\'s path.\n',
    );
  });

  it("exits 2 without a config argument", async () => {
    const r = await runMcpx([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no config file given");
  });

  it("exits 2 naming the key path and the fix for an invalid config", async () => {
    const file = writeConfig({ mcpServers: { memory: { comand: "node" } } });
    const r = await runMcpx([file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain('mcpServers.memory.comand: unknown key. Did you mean "command"?');
  });

  it("refuses a config with no servers", async () => {
    const r = await runMcpx([writeConfig({ mcpServers: {} })]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("mcpServers: is empty");
  });

  it("names an unset variable but never prints secret values", async () => {
    const file = writeConfig({
      mcpServers: {
        s: { command: "node", env: { TOKEN: "${MCPX_TEST_UNSET_VAR}", OTHER: "hunter2-secret" } },
      },
    });
    const r = await runMcpx([file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("MCPX_TEST_UNSET_VAR is not set");
    expect(r.stderr).not.toContain("hunter2-secret");
  });

  it("serves on another port, loudly, when the requested one is taken", async () => {
    const blocker: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, "127.0.0.1", () => resolve((blocker.address() as { port: number }).port)),
    );
    try {
      const file = writeConfig({
        mcpServers: { everything: npmServer("@modelcontextprotocol/server-everything", "stdio") },
      });
      const proxy = await startHttp(file, ["--port", String(port)]);
      try {
        expect(proxy.stderr()).toContain(`PORT ${port} IS IN USE`);
        expect(proxy.url).not.toContain(`:${port}/`);
        const { tools } = await proxy.client.listTools();
        expect(tools).toHaveLength(3);
      } finally {
        await proxy.close();
      }
    } finally {
      blocker.close();
    }
  });

  it("keeps the GET stream open over HTTP (Claude Code opens it; 405 breaks it)", async () => {
    const file = writeConfig({
      mcpServers: { everything: npmServer("@modelcontextprotocol/server-everything", "stdio") },
    });
    const proxy = await startHttp(file);
    try {
      // A raw client: the SDK client already holds its own GET stream, and one is allowed per session.
      const init = await rawInitialize(proxy.url, {});
      expect(init.status).toBe(200);
      const sessionId = init.headers["mcp-session-id"] as string | undefined;
      expect(sessionId).toBeTruthy();
      const res = await fetch(proxy.url, {
        method: "GET",
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": sessionId!,
          "mcp-protocol-version": "2025-06-18",
        },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      await res.body?.cancel();
    } finally {
      await proxy.close();
    }
  });

  it("writes only JSON-RPC to stdout in stdio mode, even with a noisy upstream and debug logs", async () => {
    const file = writeConfig({
      mcpServers: {
        noisy: fixtureServer("faulty.mjs", { FAULT_NOISY_STDOUT: "1", FAULT_STDERR_FLOOD: "20" }),
      },
    });
    const child = spawn(process.execPath, [MCPX, file, "--log-level", "debug"], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...cacheEnv() },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const send = (msg: unknown) => child.stdin.write(JSON.stringify(msg) + "\n");
    const waitFor = (id: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${id}: ${stderr}`)), 20_000);
        const check = () => {
          if (stdout.split("\n").some((l) => l.includes(`"id":${id}`))) {
            clearTimeout(timer);
            child.stdout.off("data", check);
            resolve();
          }
        };
        child.stdout.on("data", check);
        check();
      });
    send(INITIALIZE);
    await waitFor(1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "call",
        arguments: { method: "noisy.echo", arguments: { message: "through the noise" } },
      },
    });
    await waitFor(2);
    child.stdin.end();
    await new Promise((r) => child.once("exit", r));
    const lines = stdout.split("\n").filter((l) => l !== "");
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect((JSON.parse(line) as { jsonrpc: string }).jsonrpc).toBe("2.0");
    expect(stdout).toContain("through the noise");
    expect(stderr).toContain("[noisy]");
  });
});

describe("remote upstreams", () => {
  it("reaches a streamable HTTP upstream, forwarding expanded headers", async () => {
    const upstream = await startHttpFixture({
      HTTP_REQUIRE_HEADER: "Authorization:Bearer s3cret-token",
    });
    process.env.MCPX_TEST_TOKEN = "s3cret-token";
    try {
      const file = writeConfig({
        mcpServers: {
          remote: { url: upstream.url, headers: { Authorization: "Bearer ${MCPX_TEST_TOKEN}" } },
        },
      });
      const proxy = await startHttp(file, ["--log-level", "debug"]);
      try {
        const r = await proxy.client.callTool({
          name: "call",
          arguments: { method: "remote.echo", arguments: { message: "over http" } },
        });
        expect(text(r)).toContain("over http");
        expect(proxy.stderr()).not.toContain("s3cret-token");
      } finally {
        await proxy.close();
      }
    } finally {
      delete process.env.MCPX_TEST_TOKEN;
      await stop(upstream.child);
    }
  });

  it("falls back to SSE when the streamable POST answers 4xx", async () => {
    const upstream = await startHttpFixture({ HTTP_SSE: "1" });
    try {
      // Claude Code users write the SSE server's base URL with type http; the fixture serves SSE at /sse.
      const file = writeConfig({
        mcpServers: { legacy: { type: "http", url: `${upstream.base}/sse` } },
      });
      const proxy = await startHttp(file, ["--log-level", "debug"]);
      try {
        const r = await proxy.client.callTool({
          name: "call",
          arguments: { method: "legacy.echo", arguments: { message: "over sse" } },
        });
        expect(text(r)).toContain("over sse");
        expect(proxy.stderr()).toContain("falling back to SSE");
      } finally {
        await proxy.close();
      }
    } finally {
      await stop(upstream.child);
    }
  });

  it("speaks SSE when the entry says type sse", async () => {
    const upstream = await startHttpFixture({ HTTP_SSE: "1" });
    try {
      const file = writeConfig({
        mcpServers: { legacy: { type: "sse", url: `${upstream.base}/sse` } },
      });
      const proxy = await startHttp(file);
      try {
        const r = await proxy.client.callTool({
          name: "call",
          arguments: { method: "legacy.echo", arguments: { message: "sse direct" } },
        });
        expect(text(r)).toContain("sse direct");
      } finally {
        await proxy.close();
      }
    } finally {
      await stop(upstream.child);
    }
  });
});

describe("upstream environment", () => {
  it("gives stdio upstreams the safe default environment plus env; inheritEnv passes everything", async () => {
    process.env.MCPX_TEST_PARENT_ONLY = "parent-value";
    try {
      const everything = npmServer("@modelcontextprotocol/server-everything", "stdio");
      const file = writeConfig({
        mcpServers: {
          safe: { ...everything, env: { GIVEN: "given-value" } },
          inherit: { ...everything, inheritEnv: true },
        },
      });
      const proxy = await startHttp(file);
      try {
        const env = async (server: string) =>
          text(
            await proxy.client.callTool({
              name: "call",
              arguments: { method: `${server}.get-env` },
            }),
          );
        const safe = await env("safe");
        expect(safe).toContain("given-value");
        expect(safe).toContain("PATH");
        expect(safe).not.toContain("parent-value");
        expect(await env("inherit")).toContain("parent-value");
      } finally {
        await proxy.close();
      }
    } finally {
      delete process.env.MCPX_TEST_PARENT_ONLY;
    }
  });
});

describe("HTTP robustness", () => {
  it("answers a body that is not JSON with a JSON-RPC parse error, not an HTML page", async () => {
    const file = writeConfig({ mcpServers: { f: fixtureServer("faulty.mjs") } });
    const proxy = await startHttp(file);
    try {
      const res = await fetch(proxy.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: '{"jsonrpc": "2.0", "params": {"password": hunter2-secret}}',
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: number } };
      expect(body.error.code).toBe(-32700);
      expect(proxy.stderr()).not.toContain("hunter2-secret");
      // A refused initialize leaves no session behind: the next client still works.
      const refused = await rawInitialize(proxy.url, { accept: "text/plain" });
      expect(refused.status).toBe(406);
      const { tools } = await proxy.client.listTools();
      expect(tools).toHaveLength(3);
    } finally {
      await proxy.close();
    }
  });
});
