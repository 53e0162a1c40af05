/**
 * The two arms of the speed bench and how to time them: a minimal echo server
 * (bench/echo-server.mjs) reached directly, and the same server behind the built mcpx
 * (`"session": "shared"`), each over stdio or streamable HTTP. Every process started here is
 * closed by the `close()` that comes with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { resultText, ROOT } from "./upstreams.js";

export const MCPX = path.join(ROOT, "dist/bundle/index.js");
export const ECHO_SERVER = path.join(ROOT, "bench/echo-server.mjs");
/** A byte relay in front of `node <args>`: the floor of a stdio proxy (bench/relay.mjs). */
export const RELAY = path.join(ROOT, "bench/relay.mjs");

/** One way to call echo: a connected client and the call it makes. */
export interface Arm {
  client: Client;
  call(): Promise<void>;
}

/** A started process: its pid and how to stop it (SIGTERM, waiting for the exit). */
export interface Proc {
  pid: number;
  stop(): Promise<void>;
}

/** Starts `node <args>`, resolving once stdout or stderr shows `ready`'s first match. */
export async function startProcess(
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<Proc & { match: RegExpExecArray }> {
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = ready.exec(out);
      if (m) resolve(m);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited with ${code}: ${out}`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    pid: child.pid!,
    match,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The echo server over streamable HTTP. */
export async function startEchoHttp(): Promise<Proc & { url: string }> {
  const p = await startProcess([ECHO_SERVER], /listening (\d+)/, { PORT: "0" });
  return { ...p, url: `http://127.0.0.1:${p.match[1]}/mcp` };
}

/** mcpx over HTTP with the echo server (stdio) as its one shared upstream. */
export async function startMcpxHttp(dir: string): Promise<Proc & { url: string }> {
  const p = await startProcess(
    [MCPX, echoConfig(dir), "--port", "0", "--log-level", "warn"],
    /mcpx listening on (\S+)/,
  );
  return { ...p, url: p.match[1]! };
}

/** A config file in `dir` with the echo server as one shared stdio upstream. */
export function echoConfig(dir: string): string {
  const file = path.join(dir, "speed.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: { echo: { command: process.execPath, args: [ECHO_SERVER], session: "shared" } },
    }),
  );
  return file;
}

const newClient = () => new Client({ name: "mcpx-bench-speed", version: "1.0.0" });

/** The call each arm makes, checked: a wrong answer is a failure, not a data point. */
function echoCall(client: Client, viaMcpx: boolean): () => Promise<void> {
  const request = viaMcpx
    ? { name: "call", arguments: { method: "echo.echo", arguments: { message: "x" } } }
    : { name: "echo", arguments: { message: "x" } };
  return async () => {
    const result = await client.callTool(request);
    if (result.isError || resultText(result) !== "x")
      throw new Error(`echo answered ${JSON.stringify(result)}`);
  };
}

/** An SDK client over stdio to `node <args>`. */
export async function stdioArm(args: string[], viaMcpx: boolean): Promise<Arm & Proc> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    stderr: "ignore",
  });
  const client = newClient();
  await client.connect(transport);
  const pid = transport.pid!;
  return { client, pid, call: echoCall(client, viaMcpx), stop: () => client.close() };
}

/** An SDK streamable-HTTP client (its own MCP session) to `url`. */
export async function httpArm(
  url: string,
  viaMcpx: boolean,
): Promise<Arm & { close(): Promise<void> }> {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, call: echoCall(client, viaMcpx), close: () => client.close() };
}

/** mcpx's upstreams are ready when its catalog marks none as starting. */
export async function untilReady(client: Client): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { tools } = await client.listTools();
    if (!(tools.find((t) => t.name === "describe")?.description ?? "").includes("[starting]"))
      return;
    if (Date.now() > deadline) throw new Error("mcpx's upstream did not start in 30 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}
