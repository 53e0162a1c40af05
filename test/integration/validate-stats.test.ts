/** `mcpx validate`, `mcpx stats` and `--untrusted`, run as a user runs them. */
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { ResultSchema } from "@modelcontextprotocol/core";
import type { Tool } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiForm } from "../../src/economy/tokens.js";
import type { StatsReport } from "../../src/economy/report.js";
import { fixtureEnv, SECRETS, workspace, type Fixture } from "../helpers/client-files.js";
import { mcpx, serveStdio, stdioClient } from "../helpers/cli.js";
import { npmServer, startHttpFixture, stop, tempDir, writeConfig } from "../helpers/proxy.js";
import { CLIENT_CAPABILITIES } from "../../src/upstream/session.js";

let upstream: Awaited<ReturnType<typeof startHttpFixture>>;
beforeAll(async () => {
  upstream = await startHttpFixture();
});
afterAll(async () => {
  await stop(upstream.child);
});

const FIXTURES: Fixture[] = [
  "claude-code.mcp.json",
  "claude.json",
  "claude_desktop_config.json",
  "cursor.mcp.json",
  "vscode.mcp.json",
  "gemini.settings.json",
  "codex.config.toml",
];

describe("mcpx validate", () => {
  it.each(FIXTURES)(
    "%s: valid, and no secret value in anything it prints (also with --connect)",
    async (fixture) => {
      const ws = workspace();
      const file = ws.place(fixture, upstream.url);
      const env = { ...fixtureEnv(), HOME: ws.home };
      for (const args of [
        ["validate", file],
        ["validate", file, "--connect"],
      ]) {
        const r = await mcpx(args, { env, cwd: ws.project });
        expect(r.stdout).toContain("is valid");
        expect(r.code).toBe(0);
        for (const secret of Object.values(SECRETS)) {
          expect(r.stdout + r.stderr).not.toContain(secret);
        }
        expect(r.stdout).toMatch(/=\*\*\*/);
      }
    },
  );

  it("hides header values, auth tokens and URL passwords of an mcpx config", async () => {
    const file = writeConfig({
      mcpServers: {
        remote: {
          url: upstream.url,
          headers: { Authorization: "Bearer literal-header-secret-8c1", "X-Team": "${TEAM}" },
        },
      },
      auth: { tokens: { "${MCPX_TOKEN}": "ci" } },
    });
    const env = { TEAM: "team-env-secret-5e2", MCPX_TOKEN: "auth-token-secret-a91" };
    const r = await mcpx(["validate", file, "--connect"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("headers: Authorization=*** X-Team=***");
    for (const secret of [
      "literal-header-secret-8c1",
      "team-env-secret-5e2",
      "auth-token-secret-a91",
    ]) {
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    // fetch refuses URLs with credentials, so this one is only validated, not connected.
    const withPassword = writeConfig({
      mcpServers: {
        r: { url: "https://url-user-4242:url-password-31337@example.com/mcp?token=q-secret-77" },
      },
    });
    const v = await mcpx(["validate", withPassword]);
    expect(v.code).toBe(0);
    expect(v.stdout).toContain("https://***:***@example.com/mcp?token=***");
    for (const secret of ["url-user-4242", "url-password-31337", "q-secret-77"]) {
      expect(v.stdout).not.toContain(secret);
    }
  });

  it("exits 1 with every problem at its key path, and how to fix it", async () => {
    const dir = tempDir();
    const file = path.join(dir, ".cursor", "mcp.json");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(path.dirname(file));
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { a: { command: "x", args: "y" }, b: { url: "ftp://x" } } }),
    );
    const r = await mcpx(["validate", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("  - mcpServers.a.args: must be an array.");
    expect(r.stderr).toContain("  - mcpServers.b.url: must be an http:// or https:// URL.");
    expect(r.stderr).toContain("Fix each key named above, then run mcpx validate again.");
  });

  it("--connect exits 1 naming a server that does not start", async () => {
    const file = writeConfig({
      mcpServers: { gone: { command: process.execPath, args: ["-e", "process.exit(3)"] } },
    });
    const r = await mcpx(["validate", file, "--connect"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("gone: did not start");
    expect(r.stderr).toContain("1 of 1 servers did not start.");
  });
});

describe("mcpx stats", () => {
  it("rows add up to the totals, and match the token benchmark's count", async () => {
    const files = tempDir();
    const file = writeConfig({
      mcpServers: {
        everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
        filesystem: npmServer("@modelcontextprotocol/server-filesystem", files),
        memory: {
          ...npmServer("@modelcontextprotocol/server-memory"),
          env: { MEMORY_FILE_PATH: path.join(files, "m.json") },
        },
      },
    });
    const r = await mcpx(["stats", file, "--json"], { timeoutMs: 120_000 });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as StatsReport;
    const sum = (k: "tools" | "direct" | "mcpx") => report.rows.reduce((n, row) => n + row[k], 0);
    expect(report.total.tools).toBe(sum("tools"));
    expect(report.total.direct).toBe(sum("direct"));
    expect(report.total.mcpx).toBe(sum("mcpx") + report.shared);
    expect(report.total.saved).toBe(
      report.rows.reduce((n, row) => n + row.saved, 0) - report.shared,
    );

    // Direct: each server's tools/list in API form, counted as bench/tokens/ counts.
    for (const row of report.rows) {
      const spec = { everything: ["stdio"], filesystem: [files], memory: [] }[row.server]!;
      const pkg = `@modelcontextprotocol/server-${row.server}`;
      // Declaring what mcpx declares upstream: server-everything lists its roots, elicitation
      // and sampling tools only to a client that can answer them.
      const direct = await stdioClient(process.execPath, [npmServer(pkg).args[0]!, ...spec], {
        capabilities: CLIENT_CAPABILITIES,
      });
      try {
        // The raw list, as a client receives it: the SDK's typed listTools drops keys it does not know.
        const { tools } = (await direct.client.request(
          { method: "tools/list", params: {} },
          ResultSchema,
        )) as unknown as { tools: Tool[] };
        expect(row.tools).toBe(tools.length);
        expect(row.direct).toBe(tools.reduce((n, t) => n + countTokens(apiForm(t)), 0));
      } finally {
        await direct.close();
      }
    }
    // Through mcpx: the tools/list a client of the same config receives.
    const running = await serveStdio(file);
    try {
      const { tools } = await running.client.listTools();
      expect(report.total.mcpx).toBe(tools.reduce((n, t) => n + countTokens(apiForm(t)), 0));
    } finally {
      await running.close();
    }
    expect(report.total.mcpx).toBeLessThan(report.total.direct);
  });

  it("never shows a negative shared row: with 11 servers the rows still add up", async () => {
    // Eleven names for one spec (one process); their catalogs no longer all fit the describe
    // description, so each server's marginal overcounts (the shared row was -15 on 11 servers).
    const everything = npmServer("@modelcontextprotocol/server-everything", "stdio");
    const mcpServers = Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [`everything_${i}`, everything]),
    );
    const r = await mcpx(["stats", writeConfig({ mcpServers }), "--json"], { timeoutMs: 120_000 });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as StatsReport;
    expect(report.rows).toHaveLength(11);
    expect(report.shared).toBeGreaterThanOrEqual(0);
    for (const row of report.rows) expect(row.mcpx).toBeGreaterThanOrEqual(0);
    expect(report.total.mcpx).toBe(report.rows.reduce((n, row) => n + row.mcpx, 0) + report.shared);
  });

  it("prints a table with a total line", async () => {
    const ws = workspace();
    const file = ws.place("claude_desktop_config.json");
    const r = await mcpx(["stats", file], { env: { HOME: ws.home } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^server +tools +direct tokens +through mcpx +saved$/m);
    expect(r.stdout).toMatch(/^my_memory +9 /m);
    expect(r.stdout).toMatch(/^total +19 /m);
    expect(r.stdout).not.toContain(SECRETS.desktopLiteral);
  });
});

describe("--untrusted", () => {
  it("refuses a stdio entry before anything runs", async () => {
    const dir = tempDir();
    const marker = path.join(dir, "ran");
    const file = path.join(dir, ".mcp.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          evil: {
            command: process.execPath,
            args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`],
          },
        },
      }),
    );
    const r = await mcpx(["--untrusted", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "mcpServers.evil: refused: an untrusted config may not run local commands (stdio).",
    );
    expect(existsSync(marker)).toBe(false);
    const v = await mcpx(["validate", "--untrusted", file]);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain("mcpServers.evil: refused");
  });

  it("resolves hosts at load: a name that does not resolve to public addresses is refused", async () => {
    const file = writeConfig({
      trust: "untrusted",
      mcpServers: { r: { url: "https://mcpx-test.invalid/mcp" } },
    });
    const r = await mcpx(["validate", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('server "r": refused: cannot resolve mcpx-test.invalid');
  });
});
