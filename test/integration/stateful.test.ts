/**
 * Real stateful servers behind mcpx with a config that names no `session` (the `client`
 * default): a browser page and a thought history last across a client's calls, two HTTP clients
 * each keep their own page, and after the upstream is SIGKILLed the next answer says the server
 * restarted and its state is gone. Every browser process is gone after each test.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import path from "node:path";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { SeenProcesses } from "../helpers/procfs.js";
import { playwrightArgs } from "../helpers/real-servers.js";
import {
  descendants,
  eventually,
  isAlive,
  newClient,
  npmServer,
  ROOT,
  startHttp,
  startStdio,
  tempDir,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";

const PLAYWRIGHT_CLI = path.join(ROOT, "node_modules/@playwright/mcp/cli.js");

/** @playwright/mcp on Debian's chromium, headless, its profile in memory, output in `dir`. */
function playwright(dir: string) {
  return { command: process.execPath, args: playwrightArgs(dir), env: { HOME: dir } };
}

const thinking = () => npmServer("@modelcontextprotocol/server-sequential-thinking");

/** The text of every text block of a result, in order. */
function texts(result: unknown): string[] {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.filter((c) => c.type === "text").map((c) => c.text ?? "");
}

function call(client: Client, method: string, args: Record<string, unknown> = {}) {
  return client.callTool({ name: "call", arguments: { method, arguments: args } });
}

function think(client: Client, n: number) {
  return call(client, "thinking.sequentialthinking", {
    thought: `step ${n}`,
    thoughtNumber: n,
    totalThoughts: 3,
    nextThoughtNeeded: true,
  });
}

/** thoughtHistoryLength from a sequentialthinking answer (the tool's own text, last block). */
function historyLength(result: unknown): number {
  const own = texts(result).at(-1) ?? "";
  return (JSON.parse(own) as { thoughtHistoryLength: number }).thoughtHistoryLength;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

/** Upstream processes of mcpx (`pid`) whose command line contains `marker`. */
function upstreamsOf(pid: number, marker: string): number[] {
  return descendants(pid).filter((p) => cmdline(p).includes(marker));
}

/**
 * Close mcpx when the test ends, then check that every process seen under it (`seen()` records
 * them: upstreams, browsers) is gone.
 */
function closeAndCheck(running: Running): () => void {
  const seen = new SeenProcesses();
  onTestFinished(async () => {
    await running.close();
    expect(await seen.untilGone(15_000)).toEqual([]);
  });
  return () => seen.add(descendants(running.pid));
}

/** SIGKILL `pid` and wait until it is gone. */
async function kill(pid: number): Promise<void> {
  process.kill(pid, "SIGKILL");
  await eventually(() => !isAlive(pid), 10_000, `upstream ${pid} to die`);
}

let site: Server;
let base: string;
beforeAll(async () => {
  site = createServer((req, res) => {
    res.setHeader("content-type", "text/html");
    res.end(
      `<html><head><title>Page ${req.url}</title></head><body><h1>mcpx ${req.url}</h1></body></html>`,
    );
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  site.closeAllConnections();
  await new Promise((resolve) => site.close(resolve));
});

describe("stateful servers with no session in the config (client policy)", () => {
  it("stdio: playwright's page and sequential-thinking's history last across calls; a kill is said", async () => {
    const dir = tempDir();
    const running: Running = await startStdio(
      writeConfig({ mcpServers: { playwright: playwright(dir), thinking: thinking() } }),
    );
    const seen = closeAndCheck(running);
    const { client } = running;

    const navigated = await call(client, "playwright.browser_navigate", { url: `${base}/one` });
    expect(navigated.isError, texts(navigated).join("\n")).toBeFalsy();
    const snapshot = await call(client, "playwright.browser_snapshot");
    // Before: a fresh session per call answered "Page URL: about:blank".
    expect(texts(snapshot).join("\n")).toContain(`Page URL: ${base}/one`);

    expect(historyLength(await think(client, 1))).toBe(1);
    expect(historyLength(await think(client, 2))).toBe(2);
    seen();

    // The browser's server is the playwright process with children (the spare has none).
    const [browserServer] = upstreamsOf(running.pid, PLAYWRIGHT_CLI).filter(
      (p) => descendants(p).length > 0,
    );
    expect(browserServer).toBeDefined();
    await kill(browserServer!);
    const after = await call(client, "playwright.browser_snapshot");
    const lines = texts(after);
    expect(lines[0]).toMatch(
      /^Note from mcpx: server "playwright" restarted since your last call \(.*\)\. Whatever it held for you .* is gone/,
    );
    expect(lines.join("\n")).not.toContain(`${base}/one`);
    // Said once.
    expect(texts(await call(client, "playwright.browser_snapshot"))[0]).not.toMatch(
      /^Note from mcpx/,
    );
    seen();
  }, 120_000);

  it("HTTP: two 2025-era clients each keep their own browser page", async () => {
    const dir = tempDir();
    const running = await startHttp(
      writeConfig({ mcpServers: { playwright: playwright(dir) } }),
      [],
      {},
      {
        era: "legacy",
      },
    );
    const seen = closeAndCheck(running);
    const other = newClient("legacy", "second");
    const otherTransport = new StreamableHTTPClientTransport(new URL(running.url));
    await other.connect(otherTransport);
    onTestFinished(() => other.close());

    await call(running.client, "playwright.browser_navigate", { url: `${base}/first` });
    await call(other, "playwright.browser_navigate", { url: `${base}/second` });
    seen();
    expect(texts(await call(running.client, "playwright.browser_snapshot")).join("\n")).toContain(
      `Page URL: ${base}/first`,
    );
    expect(texts(await call(other, "playwright.browser_snapshot")).join("\n")).toContain(
      `Page URL: ${base}/second`,
    );
    // Two browser servers, one per client.
    expect(
      upstreamsOf(running.pid, PLAYWRIGHT_CLI).filter((p) => descendants(p).length > 0),
    ).toHaveLength(2);
    // A client that ends its session (DELETE) takes its browser with it.
    await otherTransport.terminateSession();
    await eventually(
      () =>
        upstreamsOf(running.pid, PLAYWRIGHT_CLI).filter((p) => descendants(p).length > 0).length ===
        1,
      10_000,
      "the second client's browser to close",
    );
  }, 120_000);
});

describe("lost state is said", () => {
  it("shared: after the upstream is SIGKILLed, the next answer says it restarted", async () => {
    const running = await startStdio(
      writeConfig({ mcpServers: { thinking: { ...thinking(), session: "shared" } } }),
    );
    onTestFinished(() => running.close());
    const { client } = running;
    expect(historyLength(await think(client, 1))).toBe(1);
    expect(historyLength(await think(client, 2))).toBe(2);
    const [server] = upstreamsOf(running.pid, "server-sequential-thinking");
    await kill(server!);
    const after = await think(client, 3);
    expect(texts(after)[0]).toMatch(
      /^Note from mcpx: server "thinking" restarted since your last call/,
    );
    // The new process starts from nothing, and the answer says why.
    expect(historyLength(after)).toBe(1);
  }, 60_000);
});
