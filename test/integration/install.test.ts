/**
 * `mcpx install` / `mcpx uninstall` on copies of each client's file under a fake HOME: the
 * client's file gets one working mcpx entry, keeps everything else, and comes back byte for byte.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument, serversAt } from "../../src/commands/client-file.js";
import { loadConfig } from "../../src/config/load.js";
import { fixtureEnv, workspace, type Fixture } from "../helpers/client-files.js";
import { catalogOf, directCatalog, mcpx, stdioClient } from "../helpers/cli.js";
import {
  eventually,
  isAlive,
  startHttpFixture,
  stop,
  tempDir,
  untilStarted,
} from "../helpers/proxy.js";

interface Case {
  client: string;
  fixture: Fixture;
  scope: string[];
  kind: "json" | "toml";
  at: (project: string) => string[];
  /** Servers mcpx cannot run, which stay in the client's file. */
  stays: string[];
}

const CASES: Case[] = [
  {
    client: "claude-code",
    fixture: "claude.json",
    scope: [],
    kind: "json",
    at: () => ["mcpServers"],
    stays: [],
  },
  {
    client: "claude-code",
    fixture: "claude-code.mcp.json",
    scope: ["--scope", "project"],
    kind: "json",
    at: () => ["mcpServers"],
    stays: [],
  },
  {
    client: "claude-code",
    fixture: "claude.json",
    scope: ["--scope", "local"],
    kind: "json",
    at: (p) => ["projects", p, "mcpServers"],
    stays: [],
  },
  {
    client: "claude-desktop",
    fixture: "claude_desktop_config.json",
    scope: [],
    kind: "json",
    at: () => ["mcpServers"],
    stays: [],
  },
  {
    client: "cursor",
    fixture: "cursor.mcp.json",
    scope: ["--scope", "project"],
    kind: "json",
    at: () => ["mcpServers"],
    stays: [],
  },
  {
    client: "vscode",
    fixture: "vscode.mcp.json",
    scope: ["--scope", "project"],
    kind: "json",
    at: () => ["servers"],
    stays: ["boxed"],
  },
  {
    client: "gemini",
    fixture: "gemini.settings.json",
    scope: [],
    kind: "json",
    at: () => ["mcpServers"],
    stays: [],
  },
  {
    client: "codex",
    fixture: "codex.config.toml",
    scope: [],
    kind: "toml",
    at: () => ["mcp_servers"],
    stays: [],
  },
];

function without(doc: Record<string, unknown>, at: string[]): unknown {
  const copy = structuredClone(doc);
  let node = copy;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string, unknown>;
  delete node[at.at(-1)!];
  return copy;
}

const backups = (file: string) =>
  readdirSync(path.dirname(file)).filter((f) =>
    f.startsWith(`${path.basename(file)}.mcpx-backup-`),
  );

let upstream: Awaited<ReturnType<typeof startHttpFixture>>;
beforeAll(async () => {
  upstream = await startHttpFixture();
});
afterAll(async () => {
  await stop(upstream.child);
});

describe("mcpx install, then uninstall", () => {
  it.each(CASES.map((c) => [`${c.client} ${c.scope.join(" ")}`.trim(), c] as const))(
    "%s",
    async (_name, c) => {
      const ws = workspace();
      const file = ws.place(c.fixture, upstream.url);
      const original = readFileSync(file);
      const env = { ...fixtureEnv(), HOME: ws.home };
      const at = c.at(ws.project);
      const before = parseDocument(original.toString(), c.kind)!;
      const claudeScope =
        c.fixture === "claude.json" ? (c.scope[1] === "local" ? "local" : "user") : undefined;
      const expected = await directCatalog(
        loadConfig(file, env, {
          home: ws.home,
          project: ws.project,
          ...(claudeScope && { claudeScope }),
        }),
      );

      const ran = await mcpx(["install", c.client, ...c.scope], { env, cwd: ws.project });
      expect(ran.stderr).toContain("now starts mcpx");
      expect(ran.code).toBe(0);
      // A file that came with the repository is named as one, with the advice to review it.
      expect(ran.stderr.includes("is a project-scope file")).toBe(c.scope.includes("project"));

      // One mcpx entry in place of the moved servers; everything else as it was.
      const after = parseDocument(readFileSync(file, "utf8"), c.kind)!;
      const servers = serversAt(after, at);
      expect(Object.keys(servers).sort()).toEqual([...c.stays, "mcpx"].sort());
      expect(isDeepStrictEqual(without(after, at), without(before, at))).toBe(true);
      expect(backups(file)).toHaveLength(1);
      expect(readFileSync(path.join(path.dirname(file), backups(file)[0]!))).toEqual(original);

      // The entry starts mcpx, which serves exactly the servers that moved.
      const entry = servers.mcpx as { command: string; args: string[]; env?: object };
      const [script, config, ...flags] = entry.args;
      expect([entry.command, script!, config!].every((a) => path.isAbsolute(a))).toBe(true);
      // Attached to the config's shared daemon, unless the client hands mcpx env of its own.
      expect(flags).toEqual(entry.env ? [] : ["--daemon"]);
      const runtime = { ...env, XDG_RUNTIME_DIR: tempDir("mcpx-xdg-run-") };
      const running = await stdioClient(entry.command, entry.args, {
        env: runtime,
        cwd: ws.project,
      });
      try {
        await untilStarted(running.client);
        const served = await catalogOf(running.client);
        expect(Object.keys(served).length).toBeGreaterThan(0);
        expect(served).toEqual(expected);
      } finally {
        await running.close();
        if (flags.includes("--daemon")) await stopDaemon(config!, runtime);
      }

      const undo = await mcpx(["uninstall", c.client, ...c.scope], { env, cwd: ws.project });
      expect(undo.stderr).toContain("byte for byte");
      expect(undo.code).toBe(0);
      expect(readFileSync(file)).toEqual(original);
      expect(backups(file)).toEqual([]);
    },
  );

  it("leaves a server whose variables mcpx cannot honour in the client's file", async () => {
    const ws = workspace();
    const file = ws.place("cursor.mcp.json", upstream.url);
    const doc = JSON.parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, unknown> };
    doc.mcpServers.picky = { command: "x", args: ["${command:pickFile}"] };
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const env = { ...fixtureEnv(), HOME: ws.home };
    const r = await mcpx(["install", "cursor", "--scope", "project"], { env, cwd: ws.project });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("left in place (fix them, then install again): picky");
    expect(r.stderr).toContain(
      "mcpServers.picky.args[0]: ${command:pickFile} is not supported by mcpx",
    );
    const after = parseDocument(readFileSync(file, "utf8"), "json")!;
    expect(Object.keys(serversAt(after, ["mcpServers"])).sort()).toEqual(["mcpx", "picky"]);
    const imported = JSON.parse(readFileSync(path.join(ws.project, "mcpx.json"), "utf8")) as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.keys(imported.mcpServers).sort()).toEqual(["echo", "remote"]);
  });

  it("--dry-run prints the diff and writes nothing", async () => {
    const ws = workspace();
    const file = ws.place("claude_desktop_config.json");
    const original = readFileSync(file);
    const r = await mcpx(["install", "claude-desktop", "--dry-run"], { env: { HOME: ws.home } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('+    "mcpx": {');
    expect(r.stdout).toContain('-    "my memory": {');
    expect(readFileSync(file)).toEqual(original);
    expect(backups(file)).toEqual([]);
    expect(existsSync(path.join(ws.home, ".config/mcpx"))).toBe(false);
  });

  it("--dry-run masks header, env, URL and query secrets as validate does", async () => {
    const ws = workspace();
    const file = ws.place("claude.json");
    const secrets = {
      header: "dry-header-secret-3c9f1a",
      env: "dry-env-secret-8b2e4d",
      user: "dry-url-user-5a7c",
      password: "dry-url-pass-6d1e",
      query: "dry-query-secret-2f4b",
    };
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          local: { command: "node", args: ["server.js"], env: { API_KEY: secrets.env } },
          remote: {
            type: "http",
            url: "https://api.example/mcp",
            headers: { Authorization: `Bearer ${secrets.header}` },
          },
          keyed: {
            type: "http",
            url: `https://${secrets.user}:${secrets.password}@api.example/mcp?api_key=${secrets.query}`,
          },
        },
      }),
    );
    const r = await mcpx(["install", "claude-code", "--dry-run"], { env: { HOME: ws.home } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"mcpx": {');
    expect(r.stdout).toContain('"API_KEY": "***"');
    expect(r.stdout).toContain('"Authorization": "***"');
    for (const [form, value] of Object.entries(secrets)) {
      expect(r.stdout + r.stderr, form).not.toContain(value);
    }
  });

  it("never touches a file it cannot parse, and refuses a second install", async () => {
    const ws = workspace();
    const file = ws.place("gemini.settings.json");
    writeFileSync(file, '{ "mcpServers": { "a": ');
    const broken = await mcpx(["install", "gemini"], { env: { HOME: ws.home } });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("does not parse as JSON; mcpx leaves it untouched.");
    expect(readFileSync(file, "utf8")).toBe('{ "mcpServers": { "a": ');
    expect(backups(file)).toEqual([]);

    ws.place("gemini.settings.json");
    const env = { ...fixtureEnv(), HOME: ws.home };
    expect((await mcpx(["install", "gemini"], { env })).code).toBe(0);
    const again = await mcpx(["install", "gemini"], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already has an "mcpx" entry.');
    expect(again.stderr).toContain("mcpx uninstall gemini");
  });

  it("uninstall after the client's file changed keeps the change and puts the servers back", async () => {
    const ws = workspace();
    const file = ws.place("claude_desktop_config.json");
    const env = { ...fixtureEnv(), HOME: ws.home };
    expect((await mcpx(["install", "claude-desktop"], { env })).code).toBe(0);
    const doc = JSON.parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, unknown> };
    doc.mcpServers.added = { command: "added-later" };
    writeFileSync(file, JSON.stringify(doc, null, 2));

    const undo = await mcpx(["uninstall", "claude-desktop"], { env });
    expect(undo.code).toBe(0);
    expect(undo.stderr).toContain("changed since install");
    const back = JSON.parse(readFileSync(file, "utf8")) as {
      mcpServers: Record<string, unknown>;
      preferences: unknown;
    };
    expect(Object.keys(back.mcpServers).sort()).toEqual(["added", "echo", "my memory"]);
    expect(back.preferences).toEqual({ menuBarEnabled: false });
    const original = JSON.parse(ws.text("claude_desktop_config.json")) as {
      mcpServers: Record<string, unknown>;
    };
    expect(back.mcpServers.echo).toEqual(original.mcpServers.echo);
  });
});

/** Stop the daemon an installed `--daemon` entry started, and wait until it is gone. */
async function stopDaemon(config: string, env: Record<string, string>): Promise<void> {
  const status = await mcpx(["daemon", "status", config], { env });
  const pid = Number(/pid (\d+)/.exec(status.stdout)?.[1]);
  expect(pid).toBeGreaterThan(0);
  await mcpx(["daemon", "stop", config], { env });
  await eventually(() => !isAlive(pid), 15_000, "the daemon to exit");
}
