/**
 * Why a server is down reaches every place that shows it: describe, call, /healthz and the log.
 * The built mcpx over HTTP with three servers that cannot start for three different reasons.
 */
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureServer,
  startHttp,
  tempDir,
  text,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";
import { eventually } from "../helpers/eventually.js";

/** Config files in temp folders of their own, removed after the tests. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function config(value: unknown): string {
  const dir = tempDir();
  dirs.push(dir);
  return writeConfig(value, dir);
}

/** A port nothing listens on: bound by us, then released. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const SECRET = "sk-down-reasons-secret";
const MISSING = "mcpx-test-no-such-command";
/** Five lines on stderr, the API key among them, then exit 3: the last three are the reason. */
const CRASH = [
  "starting",
  "reading config",
  "using key $API_KEY",
  "boom: missing API_KEY scope",
  "giving up",
]
  .map((l) => `echo "${l}" >&2`)
  .join("; ");

interface Health {
  servers: Record<string, { status: string; error?: string; consecutiveFailures: number }>;
}

let proxy: RunningHttp;
let port: number;

beforeAll(async () => {
  port = await refusedPort();
  const file = config({
    mcpServers: {
      ok: fixtureServer("faulty.mjs"),
      crashy: { command: "/bin/sh", args: ["-c", `${CRASH}; exit 3`], env: { API_KEY: SECRET } },
      refused: {
        type: "http",
        url: `http://user:pw-in-url@127.0.0.1:${port}/mcp?key=query-secret`,
      },
      missing: { command: MISSING },
    },
    // Retries come quickly, so a test sees failed reconnects counted.
    health: { retryInitial: 200, retryMax: 400 },
  });
  proxy = await startHttp(file);
}, 30_000);

afterAll(async () => {
  await proxy.close();
});

const describeServer = async (name: string) =>
  text(await proxy.client.callTool({ name: "describe", arguments: { method: name } }));

async function callDown(name: string): Promise<string> {
  const r = await proxy.client.callTool({ name: "call", arguments: { method: `${name}.any` } });
  expect(r.isError).toBe(true);
  return text(r);
}

async function health(): Promise<Health> {
  return (await (await fetch(proxy.url.replace(/\/mcp$/, "/healthz"))).json()) as Health;
}

/** Each reason, checked in describe, call, /healthz and the log; secrets never shown. */
async function expectReason(name: string, parts: string[]): Promise<void> {
  const shown = [
    await describeServer(name),
    await callDown(name),
    (await health()).servers[name]?.error ?? "",
  ];
  const log = proxy.stderr();
  const logged = log.split("\n").find((l) => l.includes(`${name}: failed to start`)) ?? "";
  for (const where of [...shown, logged]) {
    for (const part of parts) expect(where).toContain(part);
    expect(where).not.toContain(SECRET);
  }
  expect(log).not.toContain(SECRET);
}

describe("why a server is down", () => {
  it("a process that exits at startup: its exit code and last stderr lines", async () => {
    await expectReason("crashy", [
      "exited with code 3 at startup",
      "using key *** | boom: missing API_KEY scope | giving up",
    ]);
    const error = (await health()).servers.crashy?.error ?? "";
    expect(error).not.toContain("reading config"); // only the last three lines
    expect(error).not.toContain("Connection closed");
  });

  it("a refused HTTP upstream: the URL without credentials or query, and the cause", async () => {
    await expectReason("refused", [`http://127.0.0.1:${port}/mcp`, "ECONNREFUSED"]);
    const error = (await health()).servers.refused?.error ?? "";
    expect(error).not.toContain("pw-in-url");
    expect(error).not.toContain("query-secret");
  });

  it("a missing command: not found on PATH", async () => {
    await expectReason("missing", [`command "${MISSING}" not found on PATH`, "ENOENT"]);
  });

  it("/healthz counts failed starts and reconnects of down servers", async () => {
    const initial = await health();
    for (const name of ["crashy", "refused", "missing"]) {
      expect(initial.servers[name]?.status).toBe("down");
      expect(initial.servers[name]?.consecutiveFailures).toBeGreaterThanOrEqual(1);
    }
    expect(initial.servers.ok?.consecutiveFailures).toBe(0);
    // Each reconnect attempt that fails adds one (retries come every 200-400 ms here).
    const counted = (h: Health) =>
      ["crashy", "refused", "missing"].every((n) => (h.servers[n]?.consecutiveFailures ?? 0) >= 3);
    let h = initial;
    await eventually(
      async () => counted(initial) || counted((h = await health())),
      15_000,
      "failed reconnects to be counted",
    ).catch(() => {
      throw new Error(`failed reconnects not counted: ${JSON.stringify(h)}`);
    });
  });
});
