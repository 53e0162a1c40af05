/**
 * `mcpx import` on each client's file, then mcpx serving the imported config: the same tools
 * as the source servers connected directly, and no secret written that the source did not hold.
 */
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { fixtureEnv, SECRETS, workspace, type Fixture } from "../helpers/client-files.js";
import { catalogOf, directCatalog, mcpx, serveStdio } from "../helpers/cli.js";
import { startHttpFixture, stop } from "../helpers/proxy.js";

/** Each fixture, and the header its remote server must receive (from the environment). */
const FIXTURES: [Fixture, string | undefined][] = [
  ["claude-code.mcp.json", `Authorization:Bearer ${SECRETS.token}`],
  ["claude.json", undefined],
  ["claude_desktop_config.json", undefined],
  ["cursor.mcp.json", `X-Api-Key:${SECRETS.token}`],
  ["vscode.mcp.json", undefined],
  ["gemini.settings.json", `Authorization:Bearer ${SECRETS.token}`],
  ["codex.config.toml", `Authorization:Bearer ${SECRETS.token}`],
];

const http = new Map<string, Awaited<ReturnType<typeof startHttpFixture>>>();

beforeAll(async () => {
  for (const [, header] of FIXTURES) {
    if (header && !http.has(header))
      http.set(header, await startHttpFixture({ HTTP_REQUIRE_HEADER: header }));
  }
});

afterAll(async () => {
  for (const h of http.values()) await stop(h.child);
});

describe("mcpx import, then mcpx serving what it wrote", () => {
  it.each(FIXTURES)("%s", async (fixture, header) => {
    const ws = workspace();
    const source = ws.place(fixture, header ? http.get(header)!.url : undefined);
    const out = path.join(ws.dir, "imported.json");
    const env = { ...fixtureEnv(), HOME: ws.home };
    const ran = await mcpx(["import", source, "-o", out], { env, cwd: ws.project });
    expect(ran.stderr).toContain(`wrote ${out}`);
    expect(ran.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    // References stay references: no value from the environment or an envFile is written.
    const written = readFileSync(out, "utf8");
    for (const secret of [SECRETS.token, SECRETS.input, SECRETS.envFile]) {
      expect(written).not.toContain(secret);
    }

    const expected = await directCatalog(
      loadConfig(source, env, { home: ws.home, project: ws.project }),
    );
    const running = await serveStdio(out, { env, cwd: ws.project });
    try {
      expect(await catalogOf(running.client)).toEqual(expected);
    } finally {
      await running.close();
    }
    // The servers each fixture has, so an empty catalog on both sides cannot pass.
    expect(Object.values(expected).flat().length).toBeGreaterThan(0);
  });

  it("says what it kept, renamed and did not move, and that a project file may not be yours", async () => {
    const ws = workspace();
    const vscode = ws.place("vscode.mcp.json");
    const r = await mcpx(["import", vscode, "-o", "-"], {
      env: { HOME: ws.home },
      cwd: ws.project,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty("mcpServers.echo");
    expect(r.stderr).toContain("  kept:       echo, memory");
    expect(r.stderr).toContain(
      "  not moved:  boxed (sandboxEnabled: mcpx cannot run the server in VS Code's sandbox)",
    );
    expect(r.stderr).toContain("  left out:   memory.dev");
    expect(r.stderr).toContain(
      "is a project-scope file: it came with the repository and may not be yours.",
    );
    const desktop = ws.place("claude_desktop_config.json");
    const d = await mcpx(["import", desktop, "-o", "-"], { env: { HOME: ws.home } });
    expect(d.stderr).toContain('  renamed:    "my memory" → my_memory');
  });

  it("refuses to overwrite a file without --force", async () => {
    const ws = workspace();
    const source = ws.place("claude-code.mcp.json");
    const out = path.join(ws.dir, "mcpx.json");
    expect((await mcpx(["import", source, "-o", out])).code).toBe(0);
    const again = await mcpx(["import", source, "-o", out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      `mcpx: ${out} already exists.\n  Pass --force to overwrite it, or -o another file.\n`,
    );
    expect((await mcpx(["import", source, "-o", out, "--force"])).code).toBe(0);
  });

  it("--force leaves the overwritten file readable by its owner only", async () => {
    const ws = workspace();
    const source = ws.place("claude-code.mcp.json");
    const out = path.join(ws.dir, "shared.json");
    writeFileSync(out, "{}\n", { mode: 0o644 });
    chmodSync(out, 0o644);
    expect((await mcpx(["import", source, "-o", out, "--force"])).code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });
});
