/**
 * A real screenshot through mcpx: @playwright/mcp over stdio driving Debian's chromium (headless,
 * no sandbox, profile and output in a temp folder) on a page served from a local HTTP server.
 * `browser_take_screenshot {}` is valid for playwright (its required `scale` has a default) and
 * must be for mcpx too; its image must reach the client as an image block, also from a script.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStdio, tempDir, writeConfig, type Running } from "../helpers/proxy.js";
import { CHROMIUM, playwrightArgs } from "../helpers/real-servers.js";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64").slice(0, 4);

type Block = { type: string; [key: string]: unknown };

describe.skipIf(!existsSync(CHROMIUM))("playwright screenshots through mcpx", () => {
  let page: Server;
  let url: string;
  let mcpx: Running;

  beforeAll(async () => {
    page = createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end("<!doctype html><title>mcpx</title><h1 style='color:#c00'>Hello from mcpx</h1>");
    });
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    const dir = tempDir();
    const config = {
      mcpServers: {
        playwright: {
          command: process.execPath,
          args: playwrightArgs(path.join(dir, "out"), path.join(dir, "profile")),
          // One browser for the whole test (the navigation must hold for the screenshot).
          session: "shared",
          timeout: 60_000,
        },
      },
    };
    mcpx = await startStdio(writeConfig(config, dir));
  }, 60_000);

  afterAll(async () => {
    await mcpx?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  async function call(
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; content: Block[] }> {
    const r = await mcpx.client.callTool({ name: "call", arguments: args });
    return { isError: r.isError === true, content: r.content };
  }

  it("browser_take_screenshot {} succeeds and answers an image block", async () => {
    const nav = await call({ method: "playwright.browser_navigate", arguments: { url } });
    expect(nav.isError, JSON.stringify(nav.content)).toBe(false);
    const shot = await call({ method: "playwright.browser_take_screenshot", arguments: {} });
    expect(shot.isError, JSON.stringify(shot.content).slice(0, 500)).toBe(false);
    const images = shot.content.filter((b) => b.type === "image");
    expect(images).toHaveLength(1);
    expect(images[0]!.mimeType).toMatch(/^image\/(png|jpeg)$/);
    expect(String(images[0]!.data).length).toBeGreaterThan(1_000);
    // A wrong value is still refused, and the hint does not call `scale` required.
    const wrong = await call({
      method: "playwright.browser_take_screenshot",
      arguments: { type: "gif" },
    });
    expect(wrong.isError).toBe(true);
    expect(String(wrong.content[0]!.text)).toContain('"type" must be one of "png", "jpeg"');
    expect(String(wrong.content[0]!.text)).toContain("\nRequired: none\n");
  }, 60_000);

  it("a script returning a screenshot answers an image block, not base64 text", async () => {
    const out = await call({
      script: `await servers.playwright.browser_navigate({ url: ${JSON.stringify(url)} });
return await servers.playwright.browser_take_screenshot({ type: "png" });`,
    });
    expect(out.isError, JSON.stringify(out.content).slice(0, 500)).toBe(false);
    const images = out.content.filter((b) => b.type === "image");
    expect(images).toHaveLength(1);
    expect(images[0]!.mimeType).toBe("image/png");
    expect(String(images[0]!.data).startsWith(PNG)).toBe(true);
    const text = out.content.flatMap((b) => (b.type === "text" ? [String(b.text)] : [])).join("");
    expect(text).not.toContain(String(images[0]!.data).slice(0, 200));
    expect(text.length).toBeLessThan(4_000);
  }, 60_000);
});
