/**
 * mcpx as an OAuth-protected resource, through the built `mcpx` over HTTP: a real authorization
 * server (oidc-provider, test/helpers/oidc-issuer.ts) issues JWT access tokens; SDK clients of
 * both protocol eras present them. Covers the RFC 9728 metadata, the 401/403 challenges, callers
 * and profiles from a token's claim, static tokens beside OAuth, the dashboard's sign-in, an
 * issuer that is down at start, bad config, and that no token reaches any log line.
 */
import {
  ClientCredentialsProvider,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import getPort from "get-port";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIssuer, type Issuer } from "../helpers/oidc-issuer.js";
import {
  ERAS,
  eventually,
  fixtureServer,
  INITIALIZE,
  newClient,
  rawPost,
  runMcpx,
  startHttp,
  text,
  untilStarted,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

const STATIC_TOKEN = "static-token-for-the-ops-user-0123456789";
const CLIENTS = [
  { id: "ci-bot", secret: "ci-bot-secret-0123456789abcdef", scope: "mcp:tools mcp:admin" },
  { id: "no-tools", secret: "no-tools-secret-0123456789abcd", scope: "mcp:admin" },
];

function configFor(issuer: string, audience: string) {
  return {
    mcpServers: {
      github: fixtureServer("replay.mjs"),
      faulty: fixtureServer("faulty.mjs"),
    },
    profiles: {
      default: { servers: ["faulty"] },
      coding: { servers: ["github", "faulty"] },
    },
    callers: { "ci-bot": "coding" },
    auth: {
      tokens: { [STATIC_TOKEN]: "ops" },
      oauth: { issuer, audience, scopes: ["mcp:tools"], callerClaim: "sub", jwksCooldown: 2_000 },
    },
  };
}

let issuer: Issuer;
let port: number;
let audience: string;
let base: string;
let mcpx: RunningHttp;
/** Every token handed out in this file: none may appear in mcpx's output. */
const handedOut: string[] = [STATIC_TOKEN];

async function token(client = "ci-bot", resource = audience, scope = "mcp:tools") {
  const t = await issuer.token(client, resource, scope);
  handedOut.push(t);
  return t;
}

beforeAll(async () => {
  issuer = await startIssuer(CLIENTS);
  port = await getPort();
  base = `http://127.0.0.1:${port}`;
  audience = `${base}/mcp`;
  // The static token opens the first client; OAuth clients connect per test.
  mcpx = await startHttp(writeConfig(configFor(issuer.url, audience)), ["--port", String(port)], {
    Authorization: `Bearer ${STATIC_TOKEN}`,
  });
}, 60_000);

afterAll(async () => {
  await mcpx.close();
  await issuer.close();
});

async function describeWith(bearer: string, era: (typeof ERAS)[number]) {
  const client = newClient(era, "oauth-test");
  await client.connect(
    new StreamableHTTPClientTransport(new URL(audience), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    }),
  );
  try {
    await untilStarted(client);
    return text(await client.callTool({ name: "describe", arguments: {} }));
  } finally {
    await client.close();
  }
}

describe("mcpx as an OAuth protected resource", () => {
  it("serves RFC 9728 metadata at the bare and the /mcp-suffixed well-known", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: audience,
        authorization_servers: [issuer.url],
        bearer_methods_supported: ["header"],
        scopes_supported: ["mcp:tools"],
        resource_name: "mcpx",
      });
    }
  });

  it("answers no token with 401 and where to get one", async () => {
    const res = await rawPost(audience, INITIALIZE);
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe(
      `Bearer realm="mcpx", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
    );
  });

  for (const era of ERAS) {
    it(`${era}: a real access token names its caller, who sees its profile's servers`, async () => {
      const seen = await describeWith(await token(), era);
      expect(seen).toContain("github.");
      expect(seen).toContain("faulty.");
      // The static token still works beside OAuth, with its own profile (default: faulty only).
      const ops = text(await mcpx.client.callTool({ name: "describe", arguments: {} }));
      expect(ops).toContain("faulty.");
      expect(ops).not.toContain("github.");
    });
  }

  it("the SDK's own OAuth client finds its way from the 401 to a token (client_credentials)", async () => {
    const client = newClient("modern", "oauth-sdk");
    const authProvider = new ClientCredentialsProvider({
      clientId: "ci-bot",
      clientSecret: CLIENTS[0]!.secret,
      scope: "mcp:tools",
      expectedIssuer: issuer.url,
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(audience), { authProvider }));
    try {
      await untilStarted(client);
      const seen = text(await client.callTool({ name: "describe", arguments: {} }));
      expect(seen).toContain("github.");
      handedOut.push(authProvider.tokens()!.access_token);
    } finally {
      await client.close();
    }
  });

  it("refuses a token for another audience, an expired one and a forged one with invalid_token", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      [await token("ci-bot", "https://elsewhere.example.com/mcp"), "another resource (aud)"],
      [
        await issuer.sign({
          iss: issuer.url,
          aud: audience,
          sub: "ci-bot",
          scope: "mcp:tools",
          exp: now - 600,
        }),
        "the token expired",
      ],
      [
        await issuer.sign({
          iss: "https://evil.example.com",
          aud: audience,
          sub: "ci-bot",
          scope: "mcp:tools",
          exp: now + 600,
        }),
        "another authorization server (iss)",
      ],
    ] as const;
    for (const [bad, reason] of cases) {
      handedOut.push(bad);
      const res = await rawPost(audience, INITIALIZE, { Authorization: `Bearer ${bad}` });
      expect(res.status).toBe(401);
      const challenge = String(res.headers["www-authenticate"]);
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(
        `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(challenge).toContain(reason);
      expect(res.body).toContain(reason);
    }
  });

  it("answers a token without the required scope with 403 insufficient_scope", async () => {
    const narrow = await token("no-tools", audience, "mcp:admin");
    const res = await rawPost(audience, INITIALIZE, { Authorization: `Bearer ${narrow}` });
    expect(res.status).toBe(403);
    expect(res.headers["www-authenticate"]).toBe(
      `Bearer realm="mcpx", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="mcp:tools"`,
    );
  });

  it("gives /healthz detail and the dashboard a session for an access token", async () => {
    const bearer = await token();
    const health = (await (
      await fetch(`${base}/healthz`, { headers: { Authorization: `Bearer ${bearer}` } })
    ).json()) as { servers?: Record<string, unknown> };
    expect(Object.keys(health.servers ?? {}).sort()).toEqual(["faulty", "github"]);

    const login = await fetch(`${base}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `token=${encodeURIComponent(bearer)}`,
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const status = await fetch(`${base}/api/status`, { headers: { cookie } });
    expect(status.status).toBe(200);
    const body = (await status.json()) as { servers: { name: string }[] };
    expect(body.servers.map((s) => s.name).sort()).toEqual(["faulty", "github"]);
    const wrong = await fetch(`${base}/api/status`, {
      headers: {
        Authorization: `Bearer ${await token("ci-bot", "https://elsewhere.example.com/mcp")}`,
      },
    });
    expect(wrong.status).toBe(401);
  });

  it("follows the issuer's key rotation: the new key's tokens accepted (JWKS refetched for the unknown kid), a withdrawn key's refused; alg none refused", async () => {
    const before = await token();
    const oldKid = issuer.kid;
    const ok = await rawPost(audience, INITIALIZE, { Authorization: `Bearer ${before}` });
    expect(ok.status).toBe(200);
    await issuer.rotate({ retire: true });
    const after = await token();
    expect(decodeProtectedHeader(after).kid).toBe(issuer.kid);
    expect(issuer.kid).not.toBe(oldKid);
    // jose refetches the key set for a kid it does not know, at most once per cooldown
    // (`jwksCooldown`, 2 s here) since its last fetch (an earlier test's): poll slowly, well
    // within the failure throttle.
    await eventually(
      async () =>
        (await rawPost(audience, INITIALIZE, { Authorization: `Bearer ${after}` })).status === 200,
      45_000,
      "a token of the new key to be accepted",
      1_000,
    );
    // The refetched set no longer has the old key: its token (not expired) is refused.
    const withdrawn = await rawPost(audience, INITIALIZE, { Authorization: `Bearer ${before}` });
    expect(withdrawn.status).toBe(401);
    expect(String(withdrawn.headers["www-authenticate"])).toContain(
      "signed with a key the authorization server does not publish",
    );

    // alg none: claims that would pass, no signature.
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${b64({ alg: "none", typ: "at+jwt" })}.${b64({
      iss: issuer.url,
      aud: audience,
      sub: "ci-bot",
      scope: "mcp:tools",
      exp: now + 600,
    })}.`;
    const none = await rawPost(audience, INITIALIZE, { Authorization: `Bearer ${unsigned}` });
    expect(none.status).toBe(401);
    const challenge = String(none.headers["www-authenticate"]);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain("signing algorithm is not accepted");
    // (Not in handedOut: its empty signature would match any log.)
    expect(mcpx.stderr()).not.toContain(unsigned);
  }, 90_000);

  it("never writes a token to its log", () => {
    const log = mcpx.stderr();
    expect(log.length).toBeGreaterThan(0);
    for (const t of handedOut) {
      expect(log).not.toContain(t);
      // Nor a token's signature, the part that makes it a credential.
      expect(log).not.toContain(t.split(".").at(-1));
    }
  });
});

describe("an authorization server that is down when mcpx starts", () => {
  it("serves, answers OAuth tokens 503 saying why (logged once), and recovers when it is back", async () => {
    const issuerPort = await getPort();
    const mcpxPort = await getPort();
    const aud = `http://127.0.0.1:${mcpxPort}/mcp`;
    const down = await startHttp(
      writeConfig(configFor(`http://127.0.0.1:${issuerPort}`, aud)),
      ["--port", String(mcpxPort)],
      { Authorization: `Bearer ${STATIC_TOKEN}` },
    );
    try {
      // Nothing listens at the issuer's address: mcpx cannot read its metadata or keys.
      const forged = await issuer.sign({
        iss: `http://127.0.0.1:${issuerPort}`,
        aud,
        sub: "x",
        exp: Math.floor(Date.now() / 1000) + 600,
      });
      for (let i = 0; i < 3; i++) {
        const res = await rawPost(aud, INITIALIZE, { Authorization: `Bearer ${forged}` });
        expect(res.status).toBe(503);
        expect(res.body).toContain(
          `authorization server http://127.0.0.1:${issuerPort} cannot be reached`,
        );
      }
      expect(down.stderr().match(/auth\.oauth: the authorization server/g)).toHaveLength(1);

      const back = await startIssuer(CLIENTS, issuerPort);
      try {
        const real = await back.token("ci-bot", aud, "mcp:tools");
        await eventually(
          async () =>
            (await rawPost(aud, INITIALIZE, { Authorization: `Bearer ${real}` })).status === 200,
          15_000,
          "mcpx to accept tokens once the issuer is back",
        );
        expect(down.stderr()).toContain("answers again");
        expect(down.stderr()).not.toContain(real);
      } finally {
        await back.close();
      }
    } finally {
      await down.close();
    }
  }, 60_000);
});

describe("bad auth.oauth config", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["no issuer", { audience: "https://mcp.example.com/mcp" }, "auth.oauth.issuer"],
    [
      "an audience that is not a URL",
      { issuer: "https://login.example.com", audience: "mcp" },
      "auth.oauth.audience",
    ],
    [
      "an unknown key",
      {
        issuer: "https://login.example.com",
        audience: "https://mcp.example.com/mcp",
        callerclaim: "sub",
      },
      "callerclaim",
    ],
  ];
  for (const [name, oauth, key] of cases) {
    it(`exits 2 naming the key for ${name}`, async () => {
      const file = writeConfig({ mcpServers: {}, auth: { oauth } });
      const { code, stderr } = await runMcpx([file, "--port", "0"]);
      expect(code).toBe(2);
      expect(stderr).toContain(key);
    });
  }
});
