/**
 * The SDK boundary in src/upstream/: URI template matching (uri-template.ts, the SDK's UriTemplate),
 * failure classification from real SDK errors, and the startup errors of real processes.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { connectTransport, createClientFactory } from "../../src/upstream/factory.js";
import { classifyFailure } from "../../src/upstream/sdk-errors.js";
import type { UpstreamSession } from "../../src/upstream/types.js";
import { matchesUriTemplate } from "../../src/upstream/uri-template.js";
import { connectClient, memoryProxy, quietLogger } from "../helpers/inmemory.js";
import { npmServer, text } from "../helpers/proxy.js";

/** A client factory for one stdio entry, as the registry builds it. */
function factoryFor(entry: Record<string, unknown>) {
  const config = parseConfig({ mcpServers: { s: entry } }, "/test/mcpx.json", {});
  const server = config.servers[0]!;
  return createClientFactory(server, { logger: quietLogger(), connectTimeoutMs: 10_000 });
}

describe("matchesUriTemplate", () => {
  let templates: string[] = [];
  let staticUris: string[] = [];

  beforeAll(async () => {
    const session = await factoryFor(
      npmServer("@modelcontextprotocol/server-everything", "stdio"),
    )();
    try {
      const opts = { timeoutMs: 10_000 };
      templates = (await session.listResourceTemplates(opts)).map((t) => t.uriTemplate);
      staticUris = (await session.listResources(opts)).map((r) => r.uri);
    } finally {
      await session.close();
    }
  }, 30_000);

  it("matches server-everything's own templates as its reads expect", () => {
    const text = templates.find((t) => t.includes("/text/"));
    const blob = templates.find((t) => t.includes("/blob/"));
    expect(text).toBe("demo://resource/dynamic/text/{resourceId}");
    expect(blob).toBe("demo://resource/dynamic/blob/{resourceId}");
    expect(matchesUriTemplate(text!, "demo://resource/dynamic/text/42")).toBe(true);
    expect(matchesUriTemplate(blob!, "demo://resource/dynamic/text/42")).toBe(false);
    expect(matchesUriTemplate(blob!, "demo://resource/dynamic/blob/7")).toBe(true);
    // A simple variable is one non-empty segment, anchored at both ends.
    expect(matchesUriTemplate(text!, "demo://resource/dynamic/text/")).toBe(false);
    expect(matchesUriTemplate(text!, "demo://resource/dynamic/text/4/2")).toBe(false);
    expect(matchesUriTemplate(text!, "xdemo://resource/dynamic/text/42")).toBe(false);
    // Its static resources are not taken for template instances.
    expect(staticUris.length).toBeGreaterThan(0);
    for (const uri of staticUris) {
      for (const t of templates) expect(matchesUriTemplate(t, uri)).toBe(false);
    }
  });

  it.each([
    ["file:///{+path}", "file:///a/b/c.txt", true],
    ["file:///{path}", "file:///a/b/c.txt", false],
    ["users/{id}{?page}", "users/7?page=2", true],
    ["users/{id}", "users/7?page=2", true],
    ["a.b/{x}", "aXb/1", false],
    ["a.b/{x}", "a.b/1", true],
    ["repo://{owner}/{repo}", "repo://octo/hello", true],
    ["repo://{owner}/{repo}", "repo://octo", false],
    ["demo://{unclosed", "demo://x", false],
    ["no-variables", "no-variables", true],
  ])("%s vs %s → %s", (template, uri, expected) => {
    expect(matchesUriTemplate(template, uri)).toBe(expected);
  });
});

describe("reading a templated resource through the proxy", () => {
  it("finds the server whose template matches, and no server for a URI that matches none", async () => {
    const items = () => {
      const server = new McpServer({ name: "items", version: "1" });
      server.registerResource(
        "item",
        new ResourceTemplate("item://{id}", { list: undefined }),
        {},
        (uri, { id }) => ({ contents: [{ uri: uri.href, text: `item ${String(id)}` }] }),
      );
      return server;
    };
    const proxy = memoryProxy({ items });
    await proxy.start();
    const { client, close } = await connectClient(proxy);
    try {
      const read = (uri: string) => client.callTool({ name: "resources", arguments: { uri } });
      const hit = await read("item://5");
      expect(hit.isError).toBeFalsy();
      expect(JSON.stringify(hit.content)).toContain("item 5");
      const miss = await read("item://5/6");
      expect(miss.isError).toBe(true);
      expect(text(miss)).toContain("No server lists the resource item://5/6");
    } finally {
      await close();
      await proxy.close();
    }
  });
});

describe("classifyFailure (real SDK errors)", () => {
  let session: UpstreamSession;
  let server: McpServer;

  beforeAll(async () => {
    server = new McpServer({ name: "t", version: "1" });
    server.registerTool("hang", { description: "never answers" }, () => new Promise(() => {}));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    session = await connectTransport(clientSide, { timeoutMs: 5_000 });
  });

  afterAll(async () => {
    await session.close();
    await server.close();
  });

  const failure = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    return classifyFailure(err);
  };

  it("a request that outlives its timeout is a timeout", async () => {
    const f = await failure(session.callTool("hang", {}, { timeoutMs: 50 }));
    expect(f.kind).toBe("timeout");
  });

  it("an error answered by the upstream is other", async () => {
    const f = await failure(session.readResource("nothing://here", { timeoutMs: 5_000 }));
    expect(f.kind).toBe("other");
    expect(f.message).toContain("Method not found");
  });

  it("a connection that ends under a request is closed", async () => {
    const pending = session.callTool("hang", {}, { timeoutMs: 5_000 });
    await server.close();
    const f = await failure(pending);
    expect(f.kind).toBe("closed");
  });

  it("anything that is not an SDK error is other", () => {
    expect(classifyFailure(new Error("x")).kind).toBe("other");
    expect(classifyFailure("text").kind).toBe("other");
  });
});

describe("startup errors of stdio upstreams", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "mcpx-connection-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const startError = async (entry: Record<string, unknown>) => {
    const err = await factoryFor(entry)().then(
      (s) => s.close().then(() => undefined),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    return err!.message;
  };

  it("a command missing from PATH", async () => {
    expect(await startError({ command: "mcpx-no-such-command" })).toBe(
      'command "mcpx-no-such-command" not found on PATH (spawn mcpx-no-such-command ENOENT)',
    );
  });

  it("a path that does not exist", async () => {
    const missing = path.join(dir, "nope");
    expect(await startError({ command: missing })).toContain(`command "${missing}" not found (`);
  });

  it("a file that is not executable", async () => {
    const file = path.join(dir, "plain.txt");
    writeFileSync(file, "not a program\n");
    expect(await startError({ command: file })).toContain(`command "${file}" is not executable`);
  });

  it("a script whose #! interpreter is missing", async () => {
    const file = path.join(dir, "script");
    writeFileSync(file, "#!/nonexistent/interpreter\n");
    chmodSync(file, 0o755);
    expect(await startError({ command: file })).toContain("interpreter on its #! line");
  });

  it("a working directory that does not exist", async () => {
    const cwd = path.join(dir, "no-such-dir");
    expect(await startError({ command: "node", cwd })).toContain(
      `working directory "${cwd}" does not exist`,
    );
  });

  it("a process killed by a signal at startup, with its last stderr lines", async () => {
    const message = await startError({
      command: "/bin/sh",
      args: ["-c", "echo one >&2; echo two >&2; echo three >&2; echo four >&2; kill -9 $$"],
    });
    expect(message).toBe("process was killed by SIGKILL at startup; stderr: two | three | four");
  });
});
