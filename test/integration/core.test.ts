/**
 * The built `mcpx` against real upstream servers (server-everything, -filesystem, -memory) and one
 * that cannot start, driven by the real SDK client over stdio and over streamable HTTP.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  descendants,
  ERAS,
  eventually,
  isAlive,
  npmServer,
  startHttp,
  startStdio,
  tempDir,
  text,
  writeConfig,
  type Era,
  type Running,
} from "../helpers/proxy.js";

const dir = tempDir();
const files = path.join(dir, "files");
const config = writeConfig(
  {
    mcpServers: {
      everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
      filesystem: npmServer("@modelcontextprotocol/server-filesystem", files),
      memory: {
        ...npmServer("@modelcontextprotocol/server-memory"),
        env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") },
      },
      // Exits at once: the proxy must record it as failed and serve the others.
      broken: { command: process.execPath, args: ["-e", "process.exit(3)"] },
    },
  },
  dir,
);

// The filesystem server refuses to start on a missing root.
import { mkdirSync } from "node:fs";
mkdirSync(files, { recursive: true });
writeFileSync(path.join(files, "hello.txt"), "hello from a file\n");

const starts = {
  stdio: (era: Era) => startStdio(config, [], { era }),
  http: (era: Era) => startHttp(config, [], {}, { era }),
};
const matrix = (["stdio", "http"] as const).flatMap((t) => ERAS.map((era) => [t, era] as const));

describe.each(matrix)("mcpx over %s, %s client", (transport, era) => {
  const _transport = `${transport}-${era}`;
  let proxy: Running;
  let upstreamPids: number[] = [];

  beforeAll(async () => {
    proxy = await starts[transport](era);
    expect(proxy.client.getProtocolEra()).toBe(era);
    upstreamPids = descendants(proxy.pid);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  const call = (method: string, args?: unknown) =>
    proxy.client.callTool({
      name: "call",
      arguments: { method, ...(args !== undefined && { arguments: args }) },
    });
  const describeTool = (method?: unknown) =>
    proxy.client.callTool({ name: "describe", arguments: method === undefined ? {} : { method } });

  it("lists exactly the three meta-tools, describe under 2,000 characters", async () => {
    const { tools } = await proxy.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["describe", "call", "resources"]);
    const describe = tools[0]!;
    expect(describe.description!.length).toBeLessThan(2000);
    expect(describe.description).toContain("get-sum");
    expect(describe.description).toContain("read_graph");
    expect(describe.annotations?.readOnlyHint).toBe(true);
  });

  it("describe() gives the whole catalog with status", async () => {
    const out = text(await describeTool());
    expect(out).toContain("everything.echo");
    expect(out).toContain("filesystem.read_text_file");
    expect(out).toContain("memory.create_entities");
    expect(out).toMatch(/broken.*DOWN/);
  });

  it('describe("server") lists its tools with signatures', async () => {
    const out = text(await describeTool("everything"));
    expect(out).toContain("everything.get-sum(a: number, b: number)");
    expect(out).not.toContain("memory.");
  });

  it('describe("server.tool") gives the schema as TypeScript', async () => {
    const result = await describeTool("everything.get-sum");
    expect(result.isError).toBeFalsy();
    const out = text(result);
    expect(out).toContain("a: number");
    expect(out).toContain("First number");
    expect(out.split("\n")[0]).toBe("everything.get-sum [readonly]");
  });

  it("describe of a batch answers each", async () => {
    const out = text(await describeTool(["everything.echo", "memory"]));
    expect(out).toMatch(/^everything.echo \[readonly\]$/m);
    expect(out).toContain("memory.read_graph");
  });

  it("describe of an unknown name suggests the closest", async () => {
    const result = await describeTool("everythng.echo");
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Did you mean "everything.echo"');
  });

  it("calls everything.echo and everything.get-sum", async () => {
    expect(text(await call("everything.echo", { message: "hi there" }))).toContain("hi there");
    expect(text(await call("everything.get-sum", { a: 2, b: 40 }))).toContain("42");
  });

  it("accepts arguments as a JSON string", async () => {
    expect(text(await call("everything.get-sum", '{"a": 1, "b": 2}'))).toContain("3");
  });

  it("round-trips a file through filesystem write and read", async () => {
    const file = path.join(files, `written-${_transport}.txt`);
    const write = await call("filesystem.write_file", {
      path: file,
      content: "written through mcpx",
    });
    expect(write.isError).toBeFalsy();
    expect(readFileSync(file, "utf8")).toBe("written through mcpx");
    expect(text(await call("filesystem.read_text_file", { path: file }))).toContain(
      "written through mcpx",
    );
  });

  it("round-trips an entity through memory create and read", async () => {
    const name = `mcpx-${_transport}`;
    const create = await call("memory.create_entities", {
      entities: [{ name, entityType: "test", observations: ["made by the integration test"] }],
    });
    expect(create.isError).toBeFalsy();
    // Each call runs in a fresh session: the entity must come back from the memory file.
    expect(text(await call("memory.read_graph", {}))).toContain(name);
  });

  it("rejects bad arguments before the upstream, with the signature", async () => {
    const result = await call("everything.get-sum", { a: "two" });
    expect(result.isError).toBe(true);
    const out = text(result);
    expect(out).toContain('missing required property "b"');
    expect(out).toMatch(/"a" must be number/);
    expect(out).toContain("everything.get-sum(a: number, b: number)");
  });

  it("answers an unknown tool with suggestions", async () => {
    const result = await call("everything.ech", { message: "x" });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("everything.echo");
  });

  it("answers a call to a server that failed to start, others keep working", async () => {
    const result = await call("broken.anything", {});
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('"broken"');
    expect(text(await call("everything.echo", { message: "still up" }))).toContain("still up");
  });

  it("lists and reads resources", async () => {
    const list = text(await proxy.client.callTool({ name: "resources", arguments: {} }));
    expect(list).toContain("demo://resource/static/document/");
    const uri = /(demo:\/\/resource\/static\/document\/\S+)/.exec(list)?.[1];
    expect(uri).toBeDefined();
    const read = await proxy.client.callTool({ name: "resources", arguments: { uri } });
    expect(read.isError).toBeFalsy();
    const block = (
      read.content as { type: string; resource?: { uri: string; text?: string } }[]
    )[0];
    expect(block?.type).toBe("resource");
    expect(block?.resource?.uri).toBe(uri);
    expect(block?.resource?.text?.length).toBeGreaterThan(0);
    const onlyMemory = text(
      await proxy.client.callTool({ name: "resources", arguments: { server: "memory" } }),
    );
    expect(onlyMemory).not.toContain("demo://");
  });

  it("leaves no upstream process behind after closing", async () => {
    expect(upstreamPids.length).toBeGreaterThanOrEqual(3);
    await proxy.close();
    await eventually(() => !isAlive(proxy.pid), 15_000, "mcpx to exit");
    await eventually(() => upstreamPids.every((p) => !isAlive(p)), 15_000, "upstreams to exit");
  });
});
