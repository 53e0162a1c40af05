/**
 * How to start the real third-party MCP servers in node_modules offline: the catalog recorder
 * (test/fixtures/catalogs/record.ts) and the compatibility corpus
 * (test/integration/compat-corpus.test.ts) share these launch specs, so both run each server
 * exactly the same way.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MODULES = path.join(ROOT, "node_modules");

/** One server's stdio launch, given a scratch folder it may write to (its HOME, databases). */
export interface RealServer {
  /** The short name used in tool refs (`kubernetes.kubectl_get`) and catalog file names. */
  name: string;
  /** The npm package it comes from. */
  pkg: string;
  /** The package's licence, as its package.json, LICENSE or README states it. */
  license: string;
  /** Drives a browser: needs Debian chromium (`/usr/bin/chromium`). */
  browser?: boolean;
  launch(scratch: string): { args: string[]; env: Record<string, string> };
}

function bin(pkg: string, file: string): string {
  return path.join(MODULES, pkg, file);
}

/** The Debian browser the browser servers drive (never a downloaded one). */
export const CHROMIUM = process.env.MCPX_CHROMIUM ?? "/usr/bin/chromium";

/**
 * @playwright/mcp's arguments on Debian's chromium, headless, no sandbox, its output in
 * `outputDir`; the profile in memory (`--isolated`) unless `profileDir` is given.
 */
export function playwrightArgs(outputDir: string, profileDir?: string): string[] {
  return [
    bin("@playwright/mcp", "cli.js"),
    "--headless",
    "--browser",
    "chromium",
    "--executable-path",
    CHROMIUM,
    "--no-sandbox",
    ...(profileDir === undefined ? ["--isolated"] : ["--user-data-dir", profileDir]),
    "--output-dir",
    outputDir,
  ];
}

/**
 * Environment every server gets besides PATH: its HOME is the scratch folder (desktop-commander
 * writes its config there, chrome-devtools its profile) and known telemetry is off.
 */
function quiet(scratch: string): Record<string, string> {
  return { HOME: scratch, XDG_CONFIG_HOME: path.join(scratch, ".config"), CI: "1" };
}

export const REAL_SERVERS: readonly RealServer[] = [
  {
    name: "playwright",
    pkg: "@playwright/mcp",
    license: "Apache-2.0",
    browser: true,
    launch: (scratch) => ({
      args: playwrightArgs(path.join(scratch, "playwright-output")),
      env: quiet(scratch),
    }),
  },
  {
    name: "chrome-devtools",
    pkg: "chrome-devtools-mcp",
    license: "Apache-2.0",
    browser: true,
    launch: (scratch) => ({
      args: [
        bin("chrome-devtools-mcp", "build/src/bin/chrome-devtools-mcp.js"),
        "--headless",
        "--isolated",
        "--executable-path",
        CHROMIUM,
        "--chrome-arg=--no-sandbox",
        "--no-usage-statistics",
      ],
      env: {
        ...quiet(scratch),
        CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: "1",
        CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: "1",
      },
    }),
  },
  {
    name: "desktop-commander",
    pkg: "@wonderwhy-er/desktop-commander",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@wonderwhy-er/desktop-commander", "dist/index.js")],
      env: { ...quiet(scratch), DESKTOP_COMMANDER_DISABLE_TELEMETRY: "1" },
    }),
  },
  {
    name: "sequential-thinking",
    pkg: "@modelcontextprotocol/server-sequential-thinking",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@modelcontextprotocol/server-sequential-thinking", "dist/index.js")],
      env: { ...quiet(scratch), DISABLE_THOUGHT_LOGGING: "true" },
    }),
  },
  {
    name: "kubernetes",
    pkg: "mcp-server-kubernetes",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("mcp-server-kubernetes", "dist/index.js")],
      env: { ...quiet(scratch), KUBECONFIG: kubeconfig(scratch) },
    }),
  },
  {
    name: "database",
    pkg: "@executeautomation/database-server",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@executeautomation/database-server", "dist/src/index.js"), dbFile(scratch)],
      env: quiet(scratch),
    }),
  },
  {
    name: "context7",
    pkg: "@upstash/context7-mcp",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@upstash/context7-mcp", "dist/index.js"), "--transport", "stdio"],
      env: { ...quiet(scratch), OTEL_SDK_DISABLED: "true" },
    }),
  },
  {
    name: "sqlite",
    pkg: "mcp-sqlite",
    license: "ISC",
    launch: (scratch) => ({
      args: [bin("mcp-sqlite", "mcp-sqlite-server.js"), dbFile(scratch)],
      env: quiet(scratch),
    }),
  },
  {
    name: "notion",
    pkg: "@notionhq/notion-mcp-server",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@notionhq/notion-mcp-server", "bin/cli.mjs")],
      env: quiet(scratch),
    }),
  },
  {
    name: "github",
    pkg: "@modelcontextprotocol/server-github",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@modelcontextprotocol/server-github", "dist/index.js")],
      env: quiet(scratch),
    }),
  },
  {
    name: "everything",
    pkg: "@modelcontextprotocol/server-everything",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@modelcontextprotocol/server-everything", "dist/index.js"), "stdio"],
      env: quiet(scratch),
    }),
  },
  {
    name: "filesystem",
    pkg: "@modelcontextprotocol/server-filesystem",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@modelcontextprotocol/server-filesystem", "dist/index.js"), scratch],
      env: quiet(scratch),
    }),
  },
  {
    name: "memory",
    pkg: "@modelcontextprotocol/server-memory",
    license: "MIT",
    launch: (scratch) => ({
      args: [bin("@modelcontextprotocol/server-memory", "dist/index.js")],
      env: { ...quiet(scratch), MEMORY_FILE_PATH: path.join(scratch, "memory.jsonl") },
    }),
  },
];

/**
 * A kubeconfig naming one cluster that does not exist (the server refuses to start without a
 * kubeconfig; listing tools and reading contexts need no cluster).
 */
function kubeconfig(scratch: string): string {
  const file = path.join(scratch, "kubeconfig");
  writeFileSync(file, KUBECONFIG, { mode: 0o600 });
  return file;
}

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: offline
    cluster:
      server: https://127.0.0.1:1
contexts:
  - name: offline-context
    context:
      cluster: offline
      user: offline-user
      namespace: default
current-context: offline-context
users:
  - name: offline-user
    user:
      token: not-a-real-token
`;

function dbFile(scratch: string): string {
  return path.join(scratch, "data.db");
}

/** The installed version of a server's package. */
export function versionOf(server: RealServer): string {
  const file = path.join(MODULES, server.pkg, "package.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}
