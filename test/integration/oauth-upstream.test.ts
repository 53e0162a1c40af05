/**
 * mcpx signs in to an OAuth-protected upstream for the user (issue 27, upstream half), against
 * real parts: oidc-provider as the authorization server (test/helpers/oidc.ts), a protected SDK
 * server checking JWT access tokens with jose (test/fixtures/upstreams/oauth-protected.mjs), the
 * built mcpx (`mcpx login`, `mcpx <config>` over stdio). The browser step follows the
 * authorization server's redirects with fetch (its interaction signs in and consents at once),
 * then either calls mcpx's loopback listener, as a browser would, or pastes the redirect URL on
 * `mcpx login --no-browser`'s stdin.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorize, startAuthServer, type AuthServer } from "../helpers/oidc.js";
import {
  eventually,
  MCPX,
  MCPX_MODULES,
  runMcpx,
  startHttp,
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";

let as: AuthServer;
let fixture: { url: string; base: string; child: ChildProcess };
/** The same server, but every request needs mcp:admin (a 403 insufficient_scope at connect). */
let strict: { url: string; base: string; child: ChildProcess };

beforeAll(async () => {
  as = await startAuthServer({ scopes: ["mcp:tools", "mcp:admin"] });
  fixture = await startHttpFixture({ ISSUER: as.issuer }, "oauth-protected.mjs");
  strict = await startHttpFixture(
    { ISSUER: as.issuer, REQUIRE: "mcp:admin" },
    "oauth-protected.mjs",
  );
});

afterAll(async () => {
  if (fixture) await stop(fixture.child);
  if (strict) await stop(strict.child);
  await as?.close();
});

/** Everything mcpx wrote in this file's tests, to grep for secrets at the end. */
const outputs: string[] = [];

interface Home {
  dir: string;
  config: string;
  env: Record<string, string>;
}

function newHome(health: Record<string, number> = {}, url = fixture.url): Home {
  const dir = tempDir("mcpx-oauth-");
  const state = path.join(dir, "state");
  mkdirSync(state);
  const config = writeConfig(
    {
      mcpServers: { remote: { type: "http", url } },
      health: { retryInitial: 100, retryMax: 300, interval: 300, failureThreshold: 1, ...health },
    },
    dir,
  );
  return { dir, config, env: { XDG_STATE_HOME: state } };
}

function tokenFile(home: Home): string {
  const dir = path.join(home.env.XDG_STATE_HOME!, "mcpx", "oauth");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  expect(files).toHaveLength(1);
  return path.join(dir, files[0]!);
}

interface Stored {
  tokens?: { access_token: string; refresh_token?: string; expiresAt?: number; scope?: string };
  wantedScope?: string;
  client: { client_id: string; client_secret?: string };
}
const readStored = (home: Home) => JSON.parse(readFileSync(tokenFile(home), "utf8")) as Stored;

/**
 * Run `mcpx login <config> remote --no-browser`; the "browser" follows the URL it prints, then
 * `deliver` hands the redirect to mcpx (default: the loopback listener, as a browser would).
 */
async function login(
  home: Home,
  deliver: (redirect: string, child: ChildProcess) => Promise<void> = async (redirect) => {
    await fetch(redirect);
  },
  extra: string[] = [],
): Promise<{ code: number | null; stderr: string; redirect: string; url: string }> {
  const args = [MCPX, "login", home.config, "remote", "--no-browser", ...extra];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...home.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  let redirect = "";
  let url = "";
  try {
    await eventually(() => /^\s+(http\S+)$/m.test(stderr), 15_000, "the sign-in URL");
    url = /^\s+(http\S+)$/m.exec(stderr)![1]!;
    const redirectUri = new URL(url).searchParams.get("redirect_uri")!;
    redirect = await authorize(url, redirectUri);
    await deliver(redirect, child);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  const code = await exited;
  outputs.push(stderr);
  return { code, stderr, redirect, url };
}

async function describeRemote(running: Running): Promise<string> {
  return text(await running.client.callTool({ name: "describe", arguments: { server: "remote" } }));
}

describe("mcpx and an OAuth-protected upstream", () => {
  it("shows needs sign-in (never down, never an SSE error) with the command, then takes a sign-in without restarting", async () => {
    // Reconnects an hour apart: only the sign-in's own signal brings the server back in time.
    const home = newHome({ retryInitial: 3_600_000, retryMax: 3_600_000 });
    const running = await startStdio(home.config, ["--log-level", "debug"], { env: home.env });
    try {
      const before = await describeRemote(running);
      const command = `mcpx login ${home.config} remote`;
      expect(before).toContain("needs sign-in");
      expect(before).toContain(command);
      expect(before).not.toMatch(/DOWN|SSE error|405/);
      const call = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(call.isError).toBe(true);
      expect(text(call)).toContain(`needs sign-in: ask the user to run \`${command}\``);

      const { code, stderr } = await login(home);
      expect(code, stderr).toBe(0);
      expect(stderr).toContain(`signed in to remote at ${as.issuer}`);
      // Only the user may read the tokens.
      const file = tokenFile(home);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);

      // The running mcpx reconnects with the new sign-in: its tools arrive, no restart.
      await eventually(async () => (await describeRemote(running)).includes("whoami"), 15_000);
      const whoami = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(whoami.isError).toBeFalsy();
      expect(text(whoami)).toContain("user-1");
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("/healthz says needs sign-in with the command, not an SSE error", async () => {
    const home = newHome();
    const running = await startHttp(home.config, [], {}, { env: home.env });
    try {
      const res = await fetch(new URL("/healthz", running.url));
      const report = (await res.json()) as {
        servers: Record<string, { status: string; signIn?: string; error?: string }>;
      };
      expect(report.servers.remote).toMatchObject({
        status: "needs sign-in",
        signIn: `mcpx login ${home.config} remote`,
      });
      expect(report.servers.remote!.error).not.toMatch(/SSE|405/);
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("refreshes an expired access token without asking, and on a 401", async () => {
    const home = newHome();
    const paste = (r: string, child: ChildProcess) => {
      child.stdin!.end(`${r}\n`);
      return Promise.resolve();
    };
    expect((await login(home, paste)).code).toBe(0);
    const first = readStored(home);
    // Expired by the clock: refreshed before the request.
    writeFileSync(
      tokenFile(home),
      JSON.stringify({ ...first, tokens: { ...first.tokens, expiresAt: Date.now() - 1_000 } }),
    );
    const refreshes = as.refreshes();
    const running = await startStdio(home.config, ["--log-level", "debug"], { env: home.env });
    try {
      const whoami = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(text(whoami)).toContain("user-1");
      expect(as.refreshes()).toBe(refreshes + 1);
      const second = readStored(home);
      expect(second.tokens?.access_token).not.toBe(first.tokens?.access_token);
      // Rotation: the refresh token changed too.
      expect(second.tokens?.refresh_token).not.toBe(first.tokens?.refresh_token);

      // Refused by the server (a token it does not accept): refreshed on the 401, call retried.
      writeFileSync(
        tokenFile(home),
        JSON.stringify({
          ...second,
          tokens: { ...second.tokens, access_token: "not-a-valid-token", expiresAt: undefined },
        }),
      );
      const again = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.echo", arguments: { message: "after 401" } },
      });
      expect(again.isError, text(again)).toBeFalsy();
      expect(text(again)).toContain("after 401");
      expect(as.refreshes()).toBe(refreshes + 2);
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("two processes refreshing at once spend the refresh token once", async () => {
    const home = newHome();
    expect((await login(home)).code).toBe(0);
    const stored = readStored(home);
    writeFileSync(
      tokenFile(home),
      JSON.stringify({ ...stored, tokens: { ...stored.tokens, expiresAt: Date.now() - 1_000 } }),
    );
    const refreshes = as.refreshes();
    const refused = as.refusedRefreshes();
    const bearer = path.join(path.dirname(MCPX_MODULES), "upstream/oauth/bearer.js");
    const storeJs = path.join(path.dirname(MCPX_MODULES), "upstream/oauth/store.js");
    const loggerJs = path.join(path.dirname(MCPX_MODULES), "logger.js");
    const script = `
      const { storedTokens } = await import(${JSON.stringify(bearer)});
      const { TokenStore } = await import(${JSON.stringify(storeJs)});
      const { createLogger } = await import(${JSON.stringify(loggerJs)});
      const auth = storedTokens({
        resource: ${JSON.stringify(fixture.url)},
        store: new TokenStore(${JSON.stringify(path.join(home.env.XDG_STATE_HOME!, "mcpx"))}),
        command: "mcpx login",
        logger: createLogger({ level: "silent" }),
      });
      const token = await auth.token();
      process.stdout.write(String(token.length));
    `;
    const run = () =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        child.stdout.on("data", (c: Buffer) => (out += c.toString()));
        child.stderr.on("data", (c: Buffer) => (err += c.toString()));
        child.once("exit", (code) => resolve({ code, out, err }));
      });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.code, a.err).toBe(0);
    expect(b.code, b.err).toBe(0);
    expect(as.refreshes()).toBe(refreshes + 1);
    expect(as.refusedRefreshes()).toBe(refused);
    const after = readStored(home);
    expect(after.tokens?.refresh_token).not.toBe(stored.tokens?.refresh_token);
  });

  it("a revoked sign-in is back to needs sign-in", async () => {
    const home = newHome();
    expect((await login(home)).code).toBe(0);
    const running = await startStdio(home.config, ["--log-level", "debug"], { env: home.env });
    try {
      expect(await describeRemote(running)).toContain("whoami");
      await as.revokeAll();
      // A JWT access token stays valid at the resource until it expires: let it expire.
      const stored = readStored(home);
      writeFileSync(
        tokenFile(home),
        JSON.stringify({ ...stored, tokens: { ...stored.tokens, expiresAt: Date.now() - 1_000 } }),
      );
      const refused = as.refusedRefreshes();
      const call = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(call.isError).toBe(true);
      expect(text(call)).toContain("needs sign-in");
      expect(text(call)).toContain(`mcpx login ${home.config} remote`);
      await eventually(async () => (await describeRemote(running)).includes("needs sign-in"));
      expect(readStored(home).tokens).toBeUndefined();
      expect(as.refusedRefreshes()).toBe(refused + 1);
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("refuses a redirect whose iss is not the authorization server's", async () => {
    const home = newHome();
    const result = await login(home, (redirect, child) => {
      const forged = new URL(redirect);
      forged.searchParams.set("iss", "https://attacker.example");
      child.stdin!.end(`${forged.toString()}\n`);
      return Promise.resolve();
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sign-in to remote failed: .*iss/i);
    // Nothing stored.
    const oauthDir = path.join(home.env.XDG_STATE_HOME!, "mcpx", "oauth");
    expect(
      existsSync(oauthDir) ? readdirSync(oauthDir).filter((f) => f.endsWith(".json")) : [],
    ).toEqual([]);
  });

  it("no token, code or client secret in any output", async () => {
    const home = newHome();
    const { code, redirect } = await login(home);
    expect(code).toBe(0);
    const stored = readStored(home);
    const running = await startStdio(home.config, ["--log-level", "debug"], { env: home.env });
    try {
      await running.client.callTool({ name: "call", arguments: { tool: "remote.whoami" } });
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
    // validate --connect uses the sign-in as serving does, and prints no token.
    const validate = spawn(process.execPath, [MCPX, "validate", home.config, "--connect"], {
      env: { PATH: process.env.PATH ?? "", ...home.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let validated = "";
    validate.stdout.on("data", (c: Buffer) => (validated += c.toString()));
    validate.stderr.on("data", (c: Buffer) => (validated += c.toString()));
    const validateCode = await new Promise<number | null>((resolve) =>
      validate.once("exit", resolve),
    );
    outputs.push(validated);
    expect(validateCode, validated).toBe(0);
    expect(validated).toContain("remote: 3 tools: whoami, echo, admin");
    const secrets = [
      stored.tokens?.access_token,
      stored.tokens?.refresh_token,
      stored.client.client_secret,
      new URL(redirect).searchParams.get("code"),
    ].filter((s): s is string => typeof s === "string" && s.length > 0);
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    const all = outputs.join("\n");
    expect(all.length).toBeGreaterThan(0);
    for (const line of all.split("\n")) {
      for (const secret of secrets) expect(line).not.toContain(secret);
    }
  });

  it("step-up: a tool answered 403 insufficient_scope says to sign in with the wider scope; mcpx login asks for the union", async () => {
    const home = newHome();
    const first = await login(home);
    expect(first.code, first.stderr).toBe(0);
    expect(new URL(first.url).searchParams.get("scope")).not.toContain("mcp:admin");
    const running = await startStdio(home.config, ["--log-level", "debug"], { env: home.env });
    try {
      const denied = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.admin", arguments: {} },
      });
      expect(denied.isError).toBe(true);
      const command = `mcpx login ${home.config} remote --scope 'mcp:tools mcp:admin'`;
      expect(text(denied)).toContain(
        "needs sign-in (the server asks for more scope: mcp:tools mcp:admin)",
      );
      expect(text(denied)).toContain(command);
      // The server's other tools keep working with the narrower token.
      const whoami = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(whoami.isError, text(whoami)).toBeFalsy();
      // The wider scope is remembered: a plain mcpx login asks for the union.
      expect(readStored(home).wantedScope).toBe("mcp:tools mcp:admin");
      const again = await login(home);
      expect(again.code, again.stderr).toBe(0);
      const asked = new URL(again.url).searchParams.get("scope")!.split(" ");
      expect(asked).toEqual(expect.arrayContaining(["mcp:tools", "mcp:admin"]));
      const stored = readStored(home);
      expect(stored.tokens?.scope?.split(" ")).toEqual(
        expect.arrayContaining(["mcp:tools", "mcp:admin"]),
      );
      expect(stored.wantedScope).toBeUndefined();
      // The running mcpx reads the new token before its next request.
      const allowed = await running.client.callTool({
        name: "call",
        arguments: { tool: "remote.admin", arguments: {} },
      });
      expect(allowed.isError, text(allowed)).toBeFalsy();
      expect(text(allowed)).toContain("admin ok");
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("step-up at connect: a server refusing every request 403 insufficient_scope is needs sign-in with the scope, until mcpx login --scope", async () => {
    const home = newHome({ retryInitial: 3_600_000, retryMax: 3_600_000 }, strict.url);
    expect((await login(home)).code).toBe(0);
    const running = await startStdio(home.config, ["--log-level", "debug"], { env: home.env });
    try {
      const command = `mcpx login ${home.config} remote --scope 'mcp:tools mcp:admin'`;
      await eventually(async () => (await describeRemote(running)).includes(command), 15_000);
      expect(await describeRemote(running)).toContain(`needs sign-in: run ${command}`);
      const { code, url } = await login(home, undefined, ["--scope", "mcp:admin"]);
      expect(code).toBe(0);
      expect(new URL(url).searchParams.get("scope")!.split(" ")).toEqual(
        expect.arrayContaining(["mcp:tools", "mcp:admin"]),
      );
      // The sign-in's own signal reconnects it: its tools arrive.
      await eventually(async () => (await describeRemote(running)).includes("whoami"), 15_000);
    } finally {
      await running.close();
      outputs.push(running.stderr());
    }
  });

  it("import moves a remote server without credentials and says to run mcpx login for it", async () => {
    const dir = tempDir("mcpx-oauth-import-");
    const source = path.join(dir, ".mcp.json");
    writeFileSync(
      source,
      JSON.stringify({ mcpServers: { linear: { type: "http", url: fixture.url } } }),
    );
    const out = path.join(dir, "mcpx.json");
    const ran = await runMcpx(["import", source, "--format", "claude-code", "-o", out]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain(`mcpx login ${out} linear`);
    const written = JSON.parse(readFileSync(out, "utf8")) as {
      mcpServers: Record<string, unknown>;
    };
    expect(written.mcpServers.linear).toMatchObject({ type: "http", url: fixture.url });
  });
});
