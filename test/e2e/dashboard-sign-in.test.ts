/**
 * The dashboard's "Sign in" (issue 27) in a real browser: Debian's Chromium, driven by
 * playwright-core, clicks the button on a server that needs sign-in, goes through the real
 * authorization server's login form and consent page (oidc-provider, test/helpers/oidc.ts with
 * `interactive`) to the running mcpx's loopback redirect; the server's row then turns ready and an
 * MCP client calls its tool, without restarting mcpx.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthServer, type AuthServer } from "../helpers/oidc.js";
import {
  eventually,
  startHttp,
  startHttpFixture,
  stop,
  tempDir,
  text,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

const CHROMIUM = process.env.MCPX_CHROMIUM ?? "/usr/bin/chromium";
const PASSWORD = "correct horse battery staple";
const WAIT = { timeout: 15_000 };

let as: AuthServer | undefined;
let fixture: Awaited<ReturnType<typeof startHttpFixture>> | undefined;
let browser: Browser | undefined;
let proxy: RunningHttp | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium, as .ci/run does) or set MCPX_CHROMIUM.`,
    );
  }
  as = await startAuthServer({ interactive: { password: PASSWORD } });
  fixture = await startHttpFixture({ ISSUER: as.issuer }, "oauth-protected.mjs");
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
    // Chromium's own temp files land in a folder the test removes.
    env: { ...process.env, TMPDIR: tempDir() },
  });
});

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  if (fixture) await stop(fixture.child);
  await as?.close();
});

describe("the dashboard's Sign in in a real browser", () => {
  it("signs in through the login and consent pages, and the server turns ready in the running mcpx", async () => {
    const dir = tempDir("mcpx-dashboard-sign-in-");
    const state = path.join(dir, "state");
    mkdirSync(state);
    const config = writeConfig(
      {
        mcpServers: { remote: { type: "http", url: fixture!.url } },
        // Reconnects an hour apart: only the sign-in's own signal brings the server back in time.
        health: { retryInitial: 3_600_000, retryMax: 3_600_000, failureThreshold: 1 },
      },
      dir,
    );
    proxy = await startHttp(config, [], {}, { env: { XDG_STATE_HOME: state } });
    // mcpx writes its trust pins and sign-in under `dir`: it stops before the test's folder goes.
    try {
      const base = proxy.url.replace(/\/mcp$/, "");
      const context = await browser!.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("pageerror", (err) => problems.push(err.message));

      await page.goto(`${base}/`);
      const row = (status: string) =>
        page.locator(`#server-table tr[data-server="remote"][data-status="${status}"]`);
      await row("needs sign-in").waitFor(WAIT);
      // The server's detail (opened from its name) holds the button.
      await row("needs sign-in").getByRole("button", { name: "remote" }).click();
      await page.getByRole("button", { name: "Sign in to remote" }).click();

      // The authorization server's own pages, as a person sees them.
      await page.waitForURL((u) => u.origin === new URL(as!.issuer).origin, WAIT);
      expect(await page.locator("h1").textContent()).toBe("Sign in");
      await page.fill('input[name="login"]', "user-1");
      await page.fill('input[name="password"]', PASSWORD);
      await page.click("#sign-in");
      await page.waitForSelector("#allow", WAIT);
      expect(await page.locator("h1").textContent()).toBe("Allow access?");
      await page.click("#allow");
      await page.waitForURL(
        (u) => u.hostname === "127.0.0.1" && u.pathname === "/callback" && u.origin !== base,
        WAIT,
      );
      expect(await page.locator("body").textContent()).toContain("mcpx received the sign-in");

      // Back on the dashboard: the same mcpx process now has the server, ready.
      await page.goto(`${base}/`);
      await row("ready").waitFor(WAIT);
      expect(problems).toEqual([]);
      await context.close();

      await eventually(
        async () =>
          text(await proxy!.client.callTool({ name: "describe", arguments: {} })).includes(
            "whoami",
          ),
        15_000,
        "remote's tools",
      );
      const whoami = await proxy.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(whoami.isError, text(whoami)).toBeFalsy();
      expect(text(whoami)).toContain("user-1");
      expect(as!.signIns()).toBe(1);
      // No token reached mcpx's log.
      expect(proxy.stderr()).not.toMatch(/access_token|refresh_token|eyJ[\w-]{20,}\./);
    } finally {
      await proxy.close();
      proxy = undefined;
    }
  }, 120_000);
});
