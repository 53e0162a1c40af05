/**
 * mcpx as users install it: a clean clone (no dist) packed with `npm pack`, the tarball installed
 * with npm into an empty folder, the installed `mcpx` bin run from there. Needs the npm registry
 * for the package's dependencies (`--prefer-offline` uses the local cache first).
 */
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
} from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { beforeAll, describe, expect, it } from "vitest";
import { fixtureEnv, workspace } from "../helpers/client-files.js";
import {
  ERAS,
  eventually,
  fixtureServer,
  isAlive,
  newClient,
  ROOT,
  text,
  writeConfig,
} from "../helpers/proxy.js";
import { tempDir } from "../helpers/temp.js";

/** Packing builds with tsc and installing resolves ~100 packages: minutes on a busy 2-core box. */
const INSTALL_TIMEOUT_MS = 240_000;
const VERSION = (
  JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }
).version;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion; rejects with its output when it fails or outlives `timeoutMs`. */
function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const ran = { code, stdout, stderr };
      if (code === 0) resolve(ran);
      else
        reject(
          new Error(`${command} ${args.join(" ")} exited ${code ?? signal}:\n${stderr}\n${stdout}`),
        );
    });
  });
}

/** What a fresh clone holds: the files git tracks (or would, once committed), no dist. */
function cleanClone(into: string): void {
  const files = execFileSync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: ROOT, encoding: "utf8" },
  )
    .split("\0")
    .filter((f) => f !== "" && existsSync(path.join(ROOT, f)));
  for (const file of files) {
    mkdirSync(path.dirname(path.join(into, file)), { recursive: true });
    copyFileSync(path.join(ROOT, file), path.join(into, file));
  }
  // `npm ci` would give the clone its own copy; the installed one builds the same.
  symlinkSync(path.join(ROOT, "node_modules"), path.join(into, "node_modules"), "dir");
}

describe("the packed tarball, installed into an empty folder", () => {
  let pkg = "";
  let bin = "";

  beforeAll(async () => {
    const work = tempDir("mcpx-pack-");
    const clone = path.join(work, "clone");
    const packed = path.join(work, "packed");
    const prefix = path.join(work, "install");
    for (const dir of [clone, packed, prefix]) mkdirSync(dir);
    cleanClone(clone);
    expect(existsSync(path.join(clone, "dist"))).toBe(false);
    await run("npm", ["pack", "--pack-destination", packed], clone, INSTALL_TIMEOUT_MS);
    const tarballs = readdirSync(packed).filter((f) => f.endsWith(".tgz"));
    expect(tarballs).toEqual([`mcpx-${VERSION}.tgz`]);
    await run(
      "npm",
      [
        "install",
        "--prefix",
        prefix,
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        path.join(packed, tarballs[0]!),
      ],
      prefix,
      INSTALL_TIMEOUT_MS,
    );
    pkg = path.join(prefix, "node_modules", "mcpx");
    bin = path.join(prefix, "node_modules", ".bin", "mcpx");
  }, 2 * INSTALL_TIMEOUT_MS);

  it("installs a bin that answers --help and --version", async () => {
    const help = await run(bin, ["--help"], path.dirname(bin), 20_000);
    expect(help.stdout).toContain("Usage: mcpx <config>");
    // npx finds the installed bin from the folder it was installed in, with no network.
    const npx = await run(
      "npx",
      ["--no", "--", "mcpx", "--help"],
      path.dirname(path.dirname(path.dirname(bin))),
      30_000,
    );
    expect(npx.stdout).toContain("Usage: mcpx <config>");
    for (const command of ["import", "install", "uninstall", "validate", "stats"]) {
      const sub = await run(bin, [command, "--help"], path.dirname(bin), 20_000);
      expect(sub.stdout).toContain(`Usage: mcpx ${command}`);
    }
    const version = await run(bin, ["--version"], path.dirname(bin), 20_000);
    expect(version.stdout.trim()).toBe(VERSION);
  });

  it("ships the license and an example config that loads from the installed copy", async () => {
    expect(readFileSync(path.join(pkg, "LICENSE"), "utf8")).toContain("MIT License");
    // config.example.json points at the clone's devDependencies: it cannot work from here.
    expect(existsSync(path.join(pkg, "config.example.json"))).toBe(false);
    const load = (await import(pathToFileURL(path.join(pkg, "dist/config/load.js")).href)) as {
      loadConfig: (file: string, env: Record<string, string>) => { servers: { name: string }[] };
    };
    const example = load.loadConfig(path.join(pkg, "examples/npx.json"), {});
    expect(example.servers.length).toBeGreaterThan(0);
    // Its "$schema" names the JSON Schema shipped beside it, so editors check it offline.
    const { $schema } = JSON.parse(readFileSync(path.join(pkg, "examples/npx.json"), "utf8")) as {
      $schema: string;
    };
    const schema = path.resolve(pkg, "examples", $schema);
    expect(schema).toBe(path.join(pkg, "schema/mcpx.schema.json"));
    expect(JSON.parse(readFileSync(schema, "utf8"))).toMatchObject({ title: "mcpx config" });
  });

  it("ships the dashboard page, built by npm run build", () => {
    for (const file of ["index.html", "app.js", "app.css"])
      expect(existsSync(path.join(pkg, "dist/web", file))).toBe(true);
  });

  it("installs into a client's file (fake HOME) an entry that starts the installed mcpx, and uninstalls", async () => {
    const ws = workspace();
    const file = ws.place("claude_desktop_config.json");
    const original = readFileSync(file);
    // The entry attaches to a shared daemon (--daemon): its socket in this test's own folder.
    const env = {
      ...process.env,
      ...fixtureEnv(),
      HOME: ws.home,
      XDG_RUNTIME_DIR: tempDir("mcpx-xdg-run-"),
    };
    await run(bin, ["install", "claude-desktop"], ws.dir, 30_000, env);
    const entry = (
      JSON.parse(readFileSync(file, "utf8")) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      }
    ).mcpServers.mcpx!;
    // The entry names the installed copy, not the clone it was packed from.
    expect(entry.args[0]).toBe(path.join(pkg, "dist/mcpx.cjs"));
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env,
      stderr: "pipe",
    });
    const client = newClient("legacy", "mcpx-packaging-test");
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: "call",
        arguments: { method: "echo.echo", arguments: { message: "installed" } },
      });
      expect(text(result)).toBe("installed");
    } finally {
      await client.close();
    }
    // Stop the daemon the entry started (it would outlive the test by its idle time).
    expect(entry.args.at(-1)).toBe("--daemon");
    const config = entry.args[1]!;
    const status = await run(bin, ["daemon", "status", config], ws.dir, 30_000, env);
    const daemon = Number(/pid (\d+)/.exec(status.stdout)?.[1]);
    expect(daemon).toBeGreaterThan(0);
    await run(bin, ["daemon", "stop", config], ws.dir, 30_000, env);
    await eventually(() => !isAlive(daemon), 15_000, "the installed daemon to exit");
    await run(bin, ["uninstall", "claude-desktop"], ws.dir, 30_000, env);
    expect(readFileSync(file)).toEqual(original);
  });

  it.each(ERAS)("serves a config over stdio: the SDK client (%s) lists and calls", async (era) => {
    const config = writeConfig({ mcpServers: { fixture: fixtureServer("faulty.mjs") } });
    const transport = new StdioClientTransport({
      command: bin,
      args: [config],
      cwd: path.dirname(config),
      stderr: "pipe",
      // The bin's `#!/usr/bin/env node` finds this node first.
      env: { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}` },
    });
    const client = newClient(era, "mcpx-packaging-test");
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe(era);
    const pid = transport.pid;
    try {
      expect(client.getServerVersion()?.name).toBe("mcpx");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["call", "describe", "resources"]);
      const result = await client.callTool({
        name: "call",
        arguments: { method: "fixture.echo", arguments: { message: "from the tarball" } },
      });
      expect(result.isError).toBeFalsy();
      expect(text(result)).toBe("from the tarball");
      // What loads lazily from the installed bundle: the schema compiler, the sandbox's worker.
      const described = await client.callTool({
        name: "describe",
        arguments: { method: "fixture.echo" },
      });
      expect(text(described)).toContain("message: string");
      expect(text(described)).not.toContain("JSON Schema");
      const script = await client.callTool({
        name: "call",
        arguments: {
          script: 'const r = await servers.fixture.echo({ message: "in a script" });\nreturn r;',
        },
      });
      expect(script.isError, text(script)).toBeFalsy();
      expect(text(script)).toContain("in a script");
    } finally {
      await client.close();
    }
    // Closing stdin ends mcpx, which ends its upstream.
    expect(pid).not.toBeNull();
    await eventually(() => !isAlive(pid!), 10_000, "the installed mcpx to exit");
  });
});
