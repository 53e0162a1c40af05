/**
 * How `mcpx login` identifies itself to an authorization server (issue 27), against a real
 * oidc-provider (test/helpers/oidc.ts) and the protected fixture upstream: a client id and secret
 * given in the entry's `oauth` (pre-registered, no dynamic registration), a Client ID Metadata
 * Document where the server supports them, dynamic registration otherwise, and the error naming
 * the keys to set when the server registers no one. Precedence: configured id > CIMD > DCR.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authorize, startAuthServer, type AuthServer } from "../helpers/oidc.js";
import {
  eventually,
  MCPX,
  startHttpFixture,
  startStdio,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

const SECRET = "pre-registered-secret-0123456789abcdef";
const CIMD_URL = "https://mcpx.example.com/oauth/client-metadata.json";
const NATIVE = {
  application_type: "native",
  redirect_uris: ["http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
};

let running: { as: AuthServer; fixture: { url: string; child: ChildProcess } } | undefined;
afterEach(async () => {
  if (running) {
    await stop(running.fixture.child);
    await running.as.close();
  }
  running = undefined;
});

async function setUp(options: Parameters<typeof startAuthServer>[0]) {
  const as = await startAuthServer(options);
  const fixture = await startHttpFixture({ ISSUER: as.issuer }, "oauth-protected.mjs");
  running = { as, fixture };
  return { as, fixture };
}

function home(url: string, oauth?: Record<string, unknown>) {
  const dir = tempDir("mcpx-oauth-client-");
  const state = path.join(dir, "state");
  mkdirSync(state);
  const config = writeConfig(
    { mcpServers: { remote: { type: "http", url, ...(oauth && { oauth }) } } },
    dir,
  );
  return { config, env: { XDG_STATE_HOME: state, PRE_SECRET: SECRET } };
}

/** `mcpx login --no-browser`, the "browser" following the URL to the loopback redirect. */
async function login(h: ReturnType<typeof home>) {
  const child = spawn(process.execPath, [MCPX, "login", h.config, "remote", "--no-browser"], {
    env: { PATH: process.env.PATH ?? "", ...h.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  let url: URL | undefined;
  const shown = await Promise.race([
    eventually(() => /^\s+(http\S+)$/m.test(stderr), 15_000, "the sign-in URL").then(() => true),
    exited.then(() => false),
  ]);
  if (shown) {
    url = new URL(/^\s+(http\S+)$/m.exec(stderr)![1]!);
    try {
      await fetch(await authorize(url.toString(), url.searchParams.get("redirect_uri")!));
    } catch (err) {
      child.kill("SIGKILL");
      throw err;
    }
  }
  return { code: await exited, stderr, url };
}

function stored(h: ReturnType<typeof home>) {
  const dir = path.join(h.env.XDG_STATE_HOME, "mcpx", "oauth");
  const file = path.join(
    dir,
    readdirSync(dir).find((f) => f.endsWith(".json"))!,
  );
  return {
    file,
    record: JSON.parse(readFileSync(file, "utf8")) as {
      client: { client_id: string; client_secret?: string };
      tokens?: { access_token: string; refresh_token?: string; expiresAt?: number };
    },
  };
}

describe("mcpx login's client identity", () => {
  it("a configured client id and secret (${VAR}): no registration, refresh with the secret, the secret never shown", async () => {
    const { as, fixture } = await setUp({
      registration: false,
      clients: [
        {
          ...NATIVE,
          client_id: "mcpx-pre",
          client_secret: SECRET,
          token_endpoint_auth_method: "client_secret_basic",
        },
      ],
    });
    const h = home(fixture.url, { clientId: "mcpx-pre", clientSecret: "${PRE_SECRET}" });
    const result = await login(h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.url!.searchParams.get("client_id")).toBe("mcpx-pre");
    expect(as.registrations()).toBe(0);
    const { file, record } = stored(h);
    expect(record.client.client_id).toBe("mcpx-pre");

    // Expired: the running mcpx refreshes, authenticating with the secret.
    writeFileSync(
      file,
      JSON.stringify({ ...record, tokens: { ...record.tokens, expiresAt: Date.now() - 1_000 } }),
    );
    const refreshes = as.refreshes();
    const mcpx = await startStdio(h.config, ["--log-level", "debug"], { env: h.env });
    let log = "";
    try {
      const whoami = await mcpx.client.callTool({
        name: "call",
        arguments: { tool: "remote.whoami", arguments: {} },
      });
      expect(whoami.isError, text(whoami)).toBeFalsy();
      expect(text(whoami)).toContain("user-1");
      expect(as.refreshes()).toBe(refreshes + 1);
    } finally {
      await mcpx.close();
      log = mcpx.stderr();
    }
    const all = `${result.stderr}\n${log}`;
    expect(log.length).toBeGreaterThan(0);
    expect(all).not.toContain(SECRET);
  });

  it("no registration and no client configured: a clear error naming the keys to set", async () => {
    const { as, fixture } = await setUp({ registration: false });
    const h = home(fixture.url);
    const result = await login(h);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${as.issuer} does not offer dynamic client registration`);
    expect(result.stderr).toContain('"mcpServers.remote.oauth.clientId"');
    expect(result.stderr).toContain('"mcpServers.remote.oauth.clientSecret"');
  });

  it("a Client ID Metadata Document where the server supports them: its URL is the client id", async () => {
    const { as, fixture } = await setUp({
      metadataDocuments: {
        [CIMD_URL]: {
          ...NATIVE,
          client_id: CIMD_URL,
          client_name: "mcpx",
          token_endpoint_auth_method: "none",
        },
      },
    });
    const h = home(fixture.url, { clientMetadataUrl: CIMD_URL });
    const result = await login(h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.url!.searchParams.get("client_id")).toBe(CIMD_URL);
    expect(as.registrations()).toBe(0);
    expect(stored(h).record.client.client_id).toBe(CIMD_URL);
    expect(as.signIns()).toBe(1);
  });

  it("precedence: a configured client id wins over a metadata document; without server support, the document URL is not used (DCR)", async () => {
    const { as, fixture } = await setUp({
      clients: [{ ...NATIVE, client_id: "mcpx-public", token_endpoint_auth_method: "none" }],
      metadataDocuments: {},
    });
    const both = home(fixture.url, { clientId: "mcpx-public", clientMetadataUrl: CIMD_URL });
    const first = await login(both);
    expect(first.code, first.stderr).toBe(0);
    expect(first.url!.searchParams.get("client_id")).toBe("mcpx-public");
    expect(as.registrations()).toBe(0);
    await stop(running!.fixture.child);
    await running!.as.close();
    running = undefined;

    // This server has no metadata-document support: dynamic registration.
    const plain = await setUp({});
    const documentOnly = home(plain.fixture.url, { clientMetadataUrl: CIMD_URL });
    const second = await login(documentOnly);
    expect(second.code, second.stderr).toBe(0);
    expect(second.url!.searchParams.get("client_id")).not.toBe(CIMD_URL);
    expect(plain.as.registrations()).toBe(1);
  });
});
