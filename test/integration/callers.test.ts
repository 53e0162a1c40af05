/**
 * Callers and profiles through the built `mcpx`, as clients of both protocol eras use it: HTTP
 * (token, path, header, clientInfo) and stdio (--caller); HTTP security (bind rules, Host,
 * Origin, bearer tokens); and hot reload of the config file.
 */
import { writeFileSync } from "node:fs";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ERAS,
  eventually,
  fixtureServer,
  newClient,
  onToolsChanged,
  rawOpen,
  rawPost,
  runMcpx,
  startHttp,
  startHttpFixture,
  startStdio,
  stop,
  text,
  untilStarted,
  writeConfig,
  type Era,
  type RunningHttp,
} from "../helpers/proxy.js";

const SERVERS = {
  github: fixtureServer("replay.mjs"),
  faulty: fixtureServer("faulty.mjs"),
};
const ACCESS = {
  profiles: {
    default: { servers: ["faulty"] },
    // allow takes every github tool, deny takes the create_* ones back: deny wins.
    coding: {
      servers: ["github", "faulty"],
      tools: { allow: ["github.*", "faulty.echo"], deny: ["github.create_*"] },
    },
    readonly: { servers: ["github"], readOnly: true },
  },
  callers: { "claude-code": "coding", "ci-bot": "readonly" },
};

/** An SDK client of `era` over HTTP with extra request headers, at `url`. */
async function connect(
  era: Era,
  url: string,
  headers: Record<string, string> = {},
  name = "mcpx-test",
) {
  const client = newClient(era, name);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  // startHttp waited for the servers of the default profile only: wait for this caller's.
  await untilStarted(client);
  return client;
}

/** The describe tool's description from tools/list: per caller, capped at 2,000 characters. */
async function describeText(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  return tools[0]?.description ?? "";
}

/** describe(): the caller's whole catalog, every tool by ref. */
async function catalog(client: Client): Promise<string> {
  return text(await client.callTool({ name: "describe", arguments: {} }));
}

async function call(client: Client, method: string, args: Record<string, unknown> = {}) {
  const r = await client.callTool({ name: "call", arguments: { method, arguments: args } });
  return { isError: r.isError === true, text: text(r) };
}

/** The catalog each profile has of the fixtures, as describe() shows it. */
async function expectCoding(client: Client) {
  const c = await catalog(client);
  expect(c).toContain("github.get_me");
  expect(c).toContain("github.list_issues");
  expect(c).not.toContain("github.create_issue");
  expect(c).toContain("faulty.echo");
  expect(c).not.toContain("faulty.pid");
}
async function expectReadonly(client: Client) {
  const c = await catalog(client);
  expect(c).toContain("github.get_me");
  expect(c).not.toContain("github.create_issue");
  expect(c).not.toContain("github.delete_file");
  expect(c).not.toContain("faulty");
}
async function expectDefault(client: Client) {
  const c = await catalog(client);
  expect(c).toContain("faulty.echo");
  expect(c).toContain("faulty.pid");
  expect(c).not.toContain("github");
}

describe.each(ERAS)("callers over HTTP, without auth, %s clients", (era) => {
  let proxy: RunningHttp;
  beforeAll(async () => {
    proxy = await startHttp(writeConfig({ mcpServers: SERVERS, ...ACCESS }), [], {}, { era });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("an unidentified client gets the default profile, in describe and in tools/list", async () => {
    await expectDefault(proxy.client);
    const d = await describeText(proxy.client);
    expect(d).toMatch(/^faulty: echo, slow/m);
    expect(d).not.toContain("github");
  });

  it("the X-MCPX-Caller header picks the caller", async () => {
    const client = await connect(era, proxy.url, { "X-MCPX-Caller": "claude-code" });
    try {
      await expectCoding(client);
      expect(await describeText(client)).toContain("github");
    } finally {
      await client.close();
    }
  });

  it("the /mcp/<caller> path picks the caller, and wins over the header", async () => {
    const client = await connect(era, `${proxy.url}/ci-bot`, { "X-MCPX-Caller": "claude-code" });
    try {
      await expectReadonly(client);
    } finally {
      await client.close();
    }
  });

  it("clientInfo.name picks the caller when nothing else does", async () => {
    const client = await connect(era, proxy.url, {}, "claude-code");
    try {
      await expectCoding(client);
    } finally {
      await client.close();
    }
  });

  it("refuses calls outside the profile; deny beats allow; readOnly hides write tools", async () => {
    const coding = await connect(era, proxy.url, { "X-MCPX-Caller": "claude-code" });
    const readonly = await connect(era, `${proxy.url}/ci-bot`);
    try {
      expect((await call(coding, "github.get_me")).isError).toBe(false);
      const denied = await call(coding, "github.create_issue", {
        owner: "o",
        repo: "r",
        title: "t",
      });
      expect(denied.isError).toBe(true);
      expect(denied.text).toContain('Unknown tool "create_issue" on server "github"');
      const hidden = await call(coding, "faulty.pid");
      expect(hidden.isError).toBe(true);
      expect(hidden.text).toContain('Unknown tool "pid" on server "faulty"');

      expect((await call(readonly, "github.list_issues", { owner: "o", repo: "r" })).isError).toBe(
        false,
      );
      const write = await call(readonly, "github.delete_file", {});
      expect(write.isError).toBe(true);
      expect(write.text).toContain('Unknown tool "delete_file"');

      const other = await call(proxy.client, "github.get_me");
      expect(other.isError).toBe(true);
      expect(other.text).toBe('Unknown server "github". Servers: faulty.');
      expect(
        text(await proxy.client.callTool({ name: "describe", arguments: { method: "github" } })),
      ).not.toContain("get_me");
    } finally {
      await coding.close();
      await readonly.close();
    }
  });

  it("logs each call with its caller, tool, duration and outcome", async () => {
    const client = await connect(era, proxy.url, { "X-MCPX-Caller": "claude-code" });
    try {
      await call(client, "faulty.echo", { message: "not-in-the-logs-123" });
      await eventually(() =>
        /call faulty\.echo by claude-code: ok in [\d.]+ ms/.test(proxy.stderr()),
      );
      expect(proxy.stderr()).not.toContain("not-in-the-logs-123");
    } finally {
      await client.close();
    }
  });

  it("rejects a foreign Host (DNS rebinding) and a foreign Origin with 403", async () => {
    const host = await rawOpen(proxy.url, { host: "evil.example:80" }, era);
    expect(host.status).toBe(403);
    const origin = await rawOpen(proxy.url, { origin: "https://evil.example" }, era);
    expect(origin.status).toBe(403);
    expect(origin.body).toContain("Forbidden");
    const own = await rawOpen(proxy.url, { origin: "http://localhost:6274" }, era);
    expect(own.status).toBe(200);
  });
});

describe.each(ERAS)("callers over stdio, %s clients", (era) => {
  it("--caller picks the profile", async () => {
    const file = writeConfig({ mcpServers: SERVERS, ...ACCESS });
    const coding = await startStdio(file, ["--caller", "claude-code"], { era });
    const readonly = await startStdio(file, ["--caller", "ci-bot"], { era });
    try {
      await expectCoding(coding.client);
      await expectReadonly(readonly.client);
      expect((await call(readonly.client, "faulty.echo", { message: "x" })).text).toBe(
        'Unknown server "faulty". Servers: github.',
      );
      expect((await call(coding.client, "faulty.echo", { message: "hi" })).text).toBe("hi");
    } finally {
      await coding.close();
      await readonly.close();
    }
  });
});

describe.each(ERAS)("HTTP with bearer tokens, %s clients", (era) => {
  const CI_TOKEN = "ci-token-0123456789abcdef";
  const CODE_TOKEN = "code-token-fedcba9876543210";
  let proxy: RunningHttp;
  let upstream: Awaited<ReturnType<typeof startHttpFixture>>;

  beforeAll(async () => {
    upstream = await startHttpFixture();
    process.env.MCPX_TEST_CI_TOKEN = CI_TOKEN;
    const file = writeConfig({
      mcpServers: { ...SERVERS, remote: { url: upstream.url } },
      ...ACCESS,
      profiles: {
        ...ACCESS.profiles,
        readonly: { servers: ["github", "remote"], readOnly: false },
      },
      auth: { tokens: { "${MCPX_TEST_CI_TOKEN}": "ci-bot", [CODE_TOKEN]: "claude-code" } },
    });
    // startHttp's own client has no token: start through a client that has one.
    proxy = await startHttp(file, [], { Authorization: `Bearer ${CODE_TOKEN}` }, { era });
  });
  afterAll(async () => {
    delete process.env.MCPX_TEST_CI_TOKEN;
    await proxy?.close();
    if (upstream) await stop(upstream.child);
  });

  it("answers 401 with WWW-Authenticate without a valid token", async () => {
    const none = await rawOpen(proxy.url, {}, era);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe('Bearer realm="mcpx"');
    const wrong = await rawOpen(proxy.url, { authorization: "Bearer not-a-token" }, era);
    expect(wrong.status).toBe(401);
    expect(wrong.headers["www-authenticate"]).toContain('error="invalid_token"');
    const ok = await rawOpen(proxy.url, { authorization: `Bearer ${CI_TOKEN}` }, era);
    expect(ok.status).toBe(200);
  });

  it("shows /healthz detail to token holders only; a bare probe gets the overall status", async () => {
    const healthz = proxy.url.replace(/\/mcp$/, "/healthz");
    const bare = (await (await fetch(healthz)).json()) as Record<string, unknown>;
    expect(Object.keys(bare)).toEqual(["status"]);
    const detailed = (await (
      await fetch(healthz, { headers: { authorization: `Bearer ${CI_TOKEN}` } })
    ).json()) as { servers: Record<string, unknown> };
    expect(Object.keys(detailed.servers)).toContain("remote");
  });

  it("a token fixes its caller whatever the header, path or clientInfo say", async () => {
    await expectCoding(proxy.client);
    const client = await connect(
      era,
      `${proxy.url}/claude-code`,
      { Authorization: `Bearer ${CI_TOKEN}`, "X-MCPX-Caller": "claude-code" },
      "claude-code",
    );
    try {
      const c = await catalog(client);
      expect(c).toContain("remote.headers");
      expect(c).not.toMatch(/^faulty\./m);
    } finally {
      await client.close();
    }
  });

  it.runIf(era === "legacy")(
    "a session opened with one token is not found with another",
    async () => {
      const opened = await rawOpen(proxy.url, { authorization: `Bearer ${CI_TOKEN}` }, era);
      const sid = opened.headers["mcp-session-id"] as string;
      const list = (token: string) =>
        rawPost(
          proxy.url,
          { jsonrpc: "2.0", id: 2, method: "tools/list" },
          { authorization: `Bearer ${token}`, "mcp-session-id": sid },
        );
      expect((await list(CODE_TOKEN)).status).toBe(404);
      expect((await list(CI_TOKEN)).status).toBe(200);
    },
  );

  it("never forwards the client's token upstream, and never logs it", async () => {
    const client = await connect(era, proxy.url, { Authorization: `Bearer ${CI_TOKEN}` });
    try {
      const r = await call(client, "remote.headers");
      expect(r.text).toContain("mcp-session-id");
      expect(r.isError).toBe(false);
      expect(r.text).toContain("mcp-session-id");
      expect(r.text).not.toContain(CI_TOKEN);
      expect(r.text.toLowerCase()).not.toContain("authorization");
      expect(proxy.stderr()).not.toContain(CI_TOKEN);
      expect(proxy.stderr()).not.toContain(CODE_TOKEN);
    } finally {
      await client.close();
    }
  });
});

describe("binding beyond loopback", () => {
  const file = writeConfig({ mcpServers: { faulty: SERVERS.faulty } });

  it("refuses a non-loopback --host without auth", async () => {
    const r = await runMcpx([file, "--port", "0", "--host", "0.0.0.0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the config has no "auth"');
    expect(r.stderr).toContain("--allow-unauthenticated");
  });

  it("serves with --allow-unauthenticated, warning loudly", async () => {
    const proxy = await startHttp(file, ["--host", "0.0.0.0", "--allow-unauthenticated"]);
    try {
      expect(proxy.stderr()).toContain("SERVING WITHOUT AUTHENTICATION ON 0.0.0.0");
    } finally {
      await proxy.close();
    }
  });
});

describe.each(ERAS)("hot reload, %s clients", (era) => {
  it("applies a valid edit, notifying the clients whose view changed, and keeps serving through an invalid one", async () => {
    const file = writeConfig({ mcpServers: SERVERS, ...ACCESS });
    const proxy = await startHttp(file, [], {}, { era });
    const coding = await connect(era, proxy.url, { "X-MCPX-Caller": "claude-code" });
    try {
      await expectCoding(coding);
      let notified = 0;
      await onToolsChanged(coding, () => {
        notified += 1;
      });

      // Valid: coding loses github and gains a new server.
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: { ...SERVERS, extra: fixtureServer("faulty.mjs", { EXTRA: "1" }) },
          ...ACCESS,
          profiles: { ...ACCESS.profiles, coding: { servers: ["extra"] } },
        }),
      );
      await eventually(() => notified > 0, 15_000, "tools/list_changed");
      await eventually(
        async () => /^extra: echo/m.test(await describeText(coding)),
        15_000,
        "extra.echo in the coding profile",
      );
      const d = await describeText(coding);
      expect(d).not.toContain("github");
      expect((await call(coding, "extra.echo", { message: "new server" })).text).toBe("new server");
      expect(proxy.stderr()).toContain("config reloaded");

      // Invalid: a caller mapped to a profile that does not exist. The old config stays.
      writeFileSync(
        file,
        JSON.stringify({ mcpServers: SERVERS, ...ACCESS, callers: { "claude-code": "nope" } }),
      );
      await eventually(
        () => proxy.stderr().includes("config change rejected"),
        15_000,
        "the rejection",
      );
      expect(proxy.stderr()).toContain('callers.claude-code: no profile "nope"');
      expect((await call(coding, "extra.echo", { message: "still here" })).text).toBe("still here");
      expect(await describeText(coding)).toBe(d);
    } finally {
      await coding.close();
      await proxy.close();
    }
  });
});
