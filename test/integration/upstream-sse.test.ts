/**
 * SSE upstreams get the request headers a strict server expects: built mcpx, a real SDK
 * SSEServerTransport fixture that records what it receives and refuses a GET that does not
 * accept text/event-stream.
 */
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import {
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

/** Config files in temp folders of their own, removed after the tests. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function config(value: unknown): string {
  const dir = tempDir();
  dirs.push(dir);
  return writeConfig(value, dir);
}

interface Recorded {
  method: string;
  path: string;
  status: number | null;
  headers: Record<string, string>;
  rpc?: string | null;
}

describe("SSE upstream requests", () => {
  it("opens the stream with Accept: text/event-stream and the entry's headers; messages carry mcp-protocol-version", async () => {
    const upstream = await startHttpFixture({}, "sse-strict.mjs");
    try {
      const file = config({
        mcpServers: {
          legacy: {
            type: "sse",
            url: `${upstream.base}/sse`,
            headers: { Authorization: "Bearer sse-entry-token", "X-Entry": "kept" },
          },
        },
      });
      const proxy = await startStdio(file);
      try {
        const r = await proxy.client.callTool({
          name: "call",
          arguments: { method: "legacy.echo", arguments: { message: "strict sse" } },
        });
        expect(r.isError, text(r)).toBeFalsy();
        expect(text(r)).toContain("strict sse");
      } finally {
        await proxy.close();
      }
      const seen = (await (await fetch(`${upstream.base}/control/requests`)).json()) as Recorded[];
      const gets = seen.filter((q) => q.method === "GET");
      const posts = seen.filter((q) => q.method === "POST");
      expect(gets.length).toBeGreaterThan(0);
      expect(posts.length).toBeGreaterThan(0);
      for (const get of gets) {
        expect(get.status).toBeNull(); // not refused
        expect(get.headers.accept).toContain("text/event-stream");
        expect(get.headers.authorization).toBe("Bearer sse-entry-token");
        expect(get.headers["x-entry"]).toBe("kept");
      }
      for (const post of posts) {
        expect(post.headers.authorization).toBe("Bearer sse-entry-token");
        expect(post.headers["x-entry"]).toBe("kept");
      }
      // The version is negotiated by initialize, so every message after it carries it.
      const afterInit = posts.filter((p) => p.rpc !== "initialize");
      expect(afterInit.length).toBeGreaterThan(0);
      for (const post of afterInit) expect(post.headers["mcp-protocol-version"]).toMatch(/^\d{4}-/);
    } finally {
      await stop(upstream.child);
    }
  }, 30_000);

  it("sends a URL's user and password as Basic auth (fetch refuses URLs with credentials)", async () => {
    const upstream = await startHttpFixture({}, "sse-strict.mjs");
    try {
      const url = new URL(`${upstream.base}/sse`);
      url.username = "alice";
      url.password = "pa ss:word";
      const file = config({ mcpServers: { legacy: { type: "sse", url: url.href } } });
      const proxy = await startStdio(file);
      try {
        const r = await proxy.client.callTool({
          name: "call",
          arguments: { method: "legacy.echo", arguments: { message: "with credentials" } },
        });
        expect(r.isError, text(r)).toBeFalsy();
      } finally {
        await proxy.close();
      }
      const seen = (await (await fetch(`${upstream.base}/control/requests`)).json()) as Recorded[];
      const basic = `Basic ${Buffer.from("alice:pa ss:word").toString("base64")}`;
      expect(seen.length).toBeGreaterThan(0);
      for (const q of seen) expect(q.headers.authorization).toBe(basic);
    } finally {
      await stop(upstream.child);
    }
  }, 30_000);
});
