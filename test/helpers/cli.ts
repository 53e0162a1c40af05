/** Running the built `mcpx` command as a user would: with its own environment and folder. */
import { spawn } from "node:child_process";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Config } from "../../src/config/load.js";
import { toolVisible } from "../../src/registry/profiles.js";
import { cacheEnv, MCPX, untilStarted } from "./proxy.js";

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
}

/**
 * The environment a command gets: PATH, a catalog cache folder of its own, plus `env` (HOME among
 * them, when a test fakes it).
 */
function environment(env: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "", ...cacheEnv(), ...env };
}

/** `mcpx <args>` to completion. */
export function mcpx(args: string[], o: RunOptions = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MCPX, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: environment(o.env),
      ...(o.cwd && { cwd: o.cwd }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcpx ${args.join(" ")} did not exit: ${stderr}`));
    }, o.timeoutMs ?? 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A client of `command args` over stdio, started with `env`; waits until its catalog settled. */
export async function stdioClient(
  command: string,
  args: string[],
  o: RunOptions & { capabilities?: Record<string, unknown> } = {},
): Promise<{ client: Client; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command,
    args,
    env: environment(o.env),
    stderr: "pipe",
    ...(o.cwd && { cwd: o.cwd }),
  });
  (transport.stderr as NodeJS.ReadableStream | null)?.resume();
  const client = new Client(
    { name: "mcpx-test", version: "1.0.0" },
    o.capabilities ? { capabilities: o.capabilities } : undefined,
  );
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/** `mcpx <config>` over stdio, catalog settled. */
export async function serveStdio(config: string, o: RunOptions = {}) {
  const running = await stdioClient(process.execPath, [MCPX, config], o);
  await untilStarted(running.client);
  return running;
}

/** Server → tool names, as mcpx's describe description lists them. */
export async function catalogOf(client: Client): Promise<Record<string, string[]>> {
  const { tools } = await client.listTools();
  const description = tools.find((t) => t.name === "describe")?.description ?? "";
  const lines = description.split("\nTools:\n")[1]?.split("\n") ?? [];
  return Object.fromEntries(
    lines.map((line) => {
      const [server = "", names = ""] = line.split(": ");
      return [server, names === "" ? [] : names.split(", ").sort()];
    }),
  );
}

/**
 * Server → tool names, from each server of `config` connected directly (no mcpx), narrowed by
 * the config's own tool filters as its client would: what the source servers offer.
 */
export async function directCatalog(config: Config): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const server of config.servers) {
    const spec = server.spec;
    const client = new Client({ name: "mcpx-test-direct", version: "1.0.0" });
    await client.connect(
      spec.transport === "stdio"
        ? new StdioClientTransport({
            command: spec.command,
            args: spec.args,
            env: { ...getDefaultEnvironment(), ...spec.env },
            stderr: "ignore",
          })
        : new StreamableHTTPClientTransport(new URL(spec.url), {
            requestInit: { headers: spec.headers },
          }),
    );
    try {
      const { tools } = await client.listTools();
      out[server.name] = tools
        .filter((t) => toolVisible(config.profiles.default!, server.name, t))
        .map((t) => t.name)
        .sort();
    } finally {
      await client.close();
    }
  }
  return out;
}
