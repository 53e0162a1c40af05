/**
 * `mcpx login` with a real browser (issue 27): `$BROWSER` is a small script
 * (test/fixtures/browser/sign-in.mjs) that drives Debian's Chromium through playwright-core over
 * the real authorization server's login form and consent page (oidc-provider,
 * test/helpers/oidc.ts with `interactive`) to mcpx's loopback redirect. A running mcpx, waiting
 * with the server as "needs sign-in", gets its tools through tools/list_changed.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthServer, type AuthServer } from "../helpers/oidc.js";
import { processesMentioning } from "../helpers/procfs.js";
import {
  eventually,
  MCPX,
  onToolsChanged,
  ROOT,
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

const CHROMIUM = process.env.MCPX_CHROMIUM ?? "/usr/bin/chromium";
const BROWSER_SCRIPT = path.join(ROOT, "test/fixtures/browser/sign-in.mjs");
const PASSWORD = "correct horse battery staple";

let as: AuthServer;
let fixture: Awaited<ReturnType<typeof startHttpFixture>>;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium, as .ci/run does) or set MCPX_CHROMIUM.`,
    );
  }
  as = await startAuthServer({ interactive: { password: PASSWORD } });
  fixture = await startHttpFixture({ ISSUER: as.issuer }, "oauth-protected.mjs");
});

afterAll(async () => {
  if (fixture) await stop(fixture.child);
  await as?.close();
});

interface BrowserReport {
  pid: number;
  ok?: boolean;
  pages?: string[];
  scope?: string;
  landed?: string;
  text?: string;
  error?: string;
}

describe("mcpx login in a real browser", () => {
  it("opens $BROWSER, which signs in through the login and consent pages; the running mcpx's tools arrive through list_changed", async () => {
    const dir = tempDir("mcpx-oauth-browser-");
    const state = path.join(dir, "state");
    mkdirSync(state);
    const config = writeConfig(
      {
        mcpServers: { remote: { type: "http", url: fixture.url } },
        // Reconnects an hour apart: only the sign-in's own signal brings the server back in time.
        health: { retryInitial: 3_600_000, retryMax: 3_600_000, failureThreshold: 1 },
      },
      dir,
    );
    const env = { XDG_STATE_HOME: state };
    const running = await startStdio(config, [], { env });
    // Chromium's profile and temp files land here; its command line names it.
    const browserTmp = tempDir();
    let browserPid: number | undefined;
    try {
      let notified = 0;
      await onToolsChanged(running.client, () => (notified += 1));
      const before = text(await running.client.callTool({ name: "describe", arguments: {} }));
      expect(before).toContain(`needs sign-in: run mcpx login ${config} remote`);

      const out = path.join(dir, "browser.json");
      const login = spawn(process.execPath, [MCPX, "login", config, "remote"], {
        // No DISPLAY: $BROWSER alone says there is a browser to open.
        env: {
          PATH: process.env.PATH ?? "",
          ...env,
          BROWSER: `${process.execPath} ${BROWSER_SCRIPT}`,
          BROWSER_OUT: out,
          BROWSER_LOGIN: "user-1",
          BROWSER_PASSWORD: PASSWORD,
          MCPX_CHROMIUM: CHROMIUM,
          TMPDIR: browserTmp,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      login.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      login.stdout.resume();
      const code = await new Promise<number | null>((resolve) => login.once("exit", resolve));
      const report = () => JSON.parse(readFileSync(out, "utf8")) as BrowserReport;
      browserPid = existsSync(out) ? report().pid : undefined;
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("opened the browser to sign in to remote");
      expect(stderr).toContain(`signed in to remote at ${as.issuer}`);
      await eventually(() => report().ok !== undefined, 30_000, "the browser to finish");
      const done = report();
      expect(done.error).toBeUndefined();
      expect(done.pages).toEqual(["Sign in", "Allow access?"]);
      expect(done.scope).toContain("mcp:tools");
      expect(done.landed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(done.text).toContain("mcpx received the sign-in");
      // The browser closed Chromium and left.
      await eventually(() => !alive(done.pid), 15_000, "the browser script to exit");

      await eventually(() => notified > 0, 15_000, "tools/list_changed");
      await eventually(
        async () =>
          text(await running.client.callTool({ name: "describe", arguments: {} })).includes(
            "whoami",
          ),
        15_000,
        "remote's tools",
      );
      const whoami = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(whoami.isError, text(whoami)).toBeFalsy();
      expect(text(whoami)).toContain("user-1");
      expect(as.signIns()).toBe(1);
    } finally {
      // On a failure the browser may still be running: SIGTERM lets playwright close Chromium,
      // which must be gone before its profile folder can be removed.
      if (browserPid !== undefined && alive(browserPid)) process.kill(browserPid, "SIGTERM");
      await eventually(
        () =>
          processesMentioning(browserTmp).length === 0 &&
          (browserPid === undefined || !alive(browserPid)),
        15_000,
        "the browser and Chromium to exit",
      ).catch(() => {
        const left = processesMentioning(browserTmp);
        if (browserPid !== undefined && alive(browserPid)) left.push(browserPid);
        for (const pid of left) process.kill(pid, "SIGKILL");
      });
      await running.close();
    }
  }, 120_000);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
