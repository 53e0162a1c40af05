/**
 * One secret registry: every form of every credential mcpx knows or builds is masked in every
 * output. The upstream here refuses mcpx's credentials and quotes them back (header and URL), as
 * careless servers do; the test then reads everything mcpx shows anyone: the client's answer,
 * stderr, the log file, `/healthz`, the dashboard's `/api/*`, and `validate`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpx } from "../helpers/cli.js";
import {
  eventually,
  startHttp,
  startHttpFixture,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

const BEARER = "bare-bearer-secret-1a2b3c";
const USER = "basic-user-7f3e5d";
const PASS = "basic-pass-9c4d2e";
const QUERY = "query-key-5b6a7c";
/** Each form a credential of this config takes on the wire or in an echo. */
const FORMS = {
  bearer: BEARER,
  "url user": USER,
  "url password": PASS,
  "url query value": QUERY,
  "derived Basic credential": Buffer.from(`${USER}:${PASS}`).toString("base64"),
};

let upstream: Awaited<ReturnType<typeof startHttpFixture>>;
beforeAll(async () => {
  upstream = await startHttpFixture({
    HTTP_REQUIRE_HEADER: "Authorization:Bearer the-right-one",
    HTTP_ECHO_REFUSED: "1",
  });
});
afterAll(async () => {
  await stop(upstream.child);
});

function config(dir: string) {
  const withCredentials = new URL(upstream.url);
  withCredentials.username = USER;
  withCredentials.password = PASS;
  withCredentials.searchParams.set("api_key", QUERY);
  return writeConfig(
    {
      mcpServers: {
        bearer: { url: upstream.url, headers: { Authorization: `Bearer ${BEARER}` } },
        basic: { url: withCredentials.href },
      },
      log: { file: path.join(dir, "mcpx.log") },
    },
    dir,
  );
}

function expectNoSecret(where: string, output: string) {
  for (const [form, value] of Object.entries(FORMS)) {
    expect(output, `${form} in ${where}`).not.toContain(value);
  }
}

describe("secret registry", () => {
  it("the upstream really echoes each form (so the checks below can fail)", async () => {
    const res = await fetch(`${upstream.base}/mcp?api_key=${QUERY}`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${FORMS["derived Basic credential"]}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    const body = await res.text();
    expect(body).toContain(QUERY);
    expect(body).toContain(FORMS["derived Basic credential"]);
  });

  it("masks every form in the answer, stderr, log file, /healthz and the dashboard", async () => {
    const dir = tempDir();
    const file = config(dir);
    const proxy = await startHttp(file, [], {}, { waitReady: false });
    try {
      const health = async () => (await fetch(new URL("/healthz", proxy.url))).text();
      // Both servers are refused at start: wait for the line logging each refusal.
      for (const name of ["bearer", "basic"]) {
        const refused = new RegExp(`${name}[^\\n]*missing or wrong Authorization header`);
        await eventually(() => refused.test(proxy.stderr()), 20_000, `${name} refused`);
      }
      const healthz = await health();
      expect(healthz).toContain("missing or wrong Authorization header");
      expectNoSecret("/healthz", healthz);

      for (const tool of ["bearer.echo", "basic.echo"]) {
        const answer = await proxy.client.callTool({
          name: "call",
          arguments: { tool, args: { message: "hi" } },
        });
        expectNoSecret(`the answer to ${tool}`, text(answer));
      }

      const api = await Promise.all(
        ["/api/status", "/api/servers/bearer", "/api/servers/basic", "/api/logs"].map(async (p) =>
          (await fetch(new URL(p, proxy.url))).text(),
        ),
      );
      expect(api[3]).toContain("missing or wrong Authorization header");
      expectNoSecret("the dashboard API", api.join("\n"));
    } finally {
      await proxy.close();
    }
    expect(proxy.stderr()).toContain("missing or wrong Authorization header");
    expectNoSecret("stderr", proxy.stderr());
    const logged = readFileSync(path.join(dir, "mcpx.log"), "utf8");
    expect(logged).toContain("missing or wrong Authorization header");
    expectNoSecret("the log file", logged);
  });

  it("validate (with and without --connect) prints no form of any secret", async () => {
    const dir = tempDir();
    const file = config(dir);
    for (const args of [
      ["validate", file],
      ["validate", file, "--connect"],
    ]) {
      const r = await mcpx(args);
      expect(r.stdout).toContain("is valid");
      expect(r.stdout).toContain("api_key=***");
      expectNoSecret(`mcpx ${args.join(" ")}`, r.stdout + r.stderr);
    }
  });
});
