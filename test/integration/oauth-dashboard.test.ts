/**
 * The dashboard's "Sign in" (issue 27): `POST /api/signin` on the built mcpx over HTTP starts the
 * same flow as `mcpx login` and answers the authorization URL; a browser (here fetch with cookies,
 * through the real oidc-provider) comes back to the sign-in's loopback listener; the tokens go to
 * the same store and the server's tools reach the connected client through list_changed. Only
 * JSON, only same-origin, only a server the viewer sees that needs sign-in.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorize, startAuthServer, type AuthServer } from "../helpers/oidc.js";
import {
  eventually,
  onToolsChanged,
  startHttp,
  startHttpFixture,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

let as: AuthServer;
let fixture: Awaited<ReturnType<typeof startHttpFixture>>;

beforeAll(async () => {
  as = await startAuthServer();
  fixture = await startHttpFixture({ ISSUER: as.issuer }, "oauth-protected.mjs");
});

afterAll(async () => {
  if (fixture) await stop(fixture.child);
  await as?.close();
});

describe("the dashboard's Sign in", () => {
  it("starts the sign-in for a needs-sign-in server; the tools arrive through list_changed", async () => {
    const dir = tempDir("mcpx-oauth-dashboard-");
    const state = path.join(dir, "state");
    mkdirSync(state);
    const config = writeConfig(
      {
        mcpServers: { remote: { type: "http", url: fixture.url } },
        health: { retryInitial: 3_600_000, retryMax: 3_600_000, failureThreshold: 1 },
      },
      dir,
    );
    const running = await startHttp(config, [], {}, { env: { XDG_STATE_HOME: state } });
    try {
      const origin = new URL(running.url).origin;
      let notified = 0;
      await onToolsChanged(running.client, () => (notified += 1));
      const post = (body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${origin}/api/signin`, {
          method: "POST",
          headers: { "content-type": "application/json", origin, ...headers },
          body: typeof body === "string" ? body : JSON.stringify(body),
        });

      // Another site's page cannot start it, nor a form post, nor for a server not there.
      expect((await post({ server: "remote" }, { origin: "https://evil.example" })).status).toBe(
        403,
      );
      expect(
        (await post("server=remote", { "content-type": "application/x-www-form-urlencoded" }))
          .status,
      ).toBe(415);
      expect((await post({ server: "nope" })).status).toBe(404);

      const started = await post({ server: "remote" });
      expect(started.status).toBe(200);
      const { url } = (await started.json()) as { url: string };
      const authorization = new URL(url);
      expect(authorization.origin).toBe(as.issuer);
      const redirectUri = authorization.searchParams.get("redirect_uri")!;
      expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      // A second click while it runs gets the same authorization URL.
      const again = (await (await post({ server: "remote" })).json()) as { url: string };
      expect(again.url).toBe(url);

      const landed = await fetch(await authorize(url, redirectUri));
      expect(await landed.text()).toContain("mcpx received the sign-in");

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
      expect(text(whoami)).toContain("user-1");
      const after = await post({ server: "remote" });
      expect(after.status).toBe(409);

      // The tokens are in the store, and in no output.
      const oauthDir = path.join(state, "mcpx", "oauth");
      const file = readdirSync(oauthDir).find((f) => f.endsWith(".json"))!;
      const stored = JSON.parse(readFileSync(path.join(oauthDir, file), "utf8")) as {
        tokens: { access_token: string; refresh_token: string };
      };
      const log = running.stderr();
      expect(log).toContain("dashboard: signed in to remote");
      expect(log).not.toContain(stored.tokens.access_token);
      expect(log).not.toContain(stored.tokens.refresh_token);
    } finally {
      await running.close();
    }
  }, 90_000);
});
