#!/usr/bin/env node
/**
 * `npm run inspector`: the MCP Inspector's CLI (@modelcontextprotocol/inspector, `--cli`) as an
 * independent client of the built mcpx, over stdio (the Inspector spawns `node dist/bundle/index.js
 * <config>` itself, once per command) and over streamable HTTP (`mcpx <config> --port 0`). Each
 * command is one Inspector run; its JSON output is checked. Exit 0 when every check passes.
 *
 * The Inspector needs Node >= 22.19: it runs on conformance/node_modules/node/bin/node (the npm
 * package `node@22`, INSPECTOR_NODE overrides); mcpx runs on the Node running this script.
 *
 *   node conformance/inspector.mjs
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const HERE = import.meta.dirname;
const ROOT = path.resolve(HERE, "..");
const MCPX = path.join(ROOT, "dist/bundle/index.js");
const NODE22 = process.env.INSPECTOR_NODE ?? path.join(HERE, "node_modules/node/bin/node");
const INSPECTOR = path.join(
  HERE,
  "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
);
const EVERYTHING = path.join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
/** Bound on one Inspector run (a second or two; a hang must not stall CI). */
const RUN_TIMEOUT_MS = 60_000;

const say = (line = "") => process.stdout.write(`${line}\n`);

/** Run a command; resolves with its exit code, stdout and stderr. Killed after the bound. */
function run(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? `killed (${signal})`, stdout, stderr });
    });
  });
}

/** Text of a tools/call result's text blocks. */
const textOf = (result) =>
  (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");

/**
 * The checks: [name, Inspector arguments, a predicate on its parsed JSON output, the exit code
 * expected (0; the Inspector exits 5 on an isError result)]. The payload is unique per transport
 * so an answer cannot come from another run.
 */
function checks(tag) {
  const payload = `inspector ${tag} ${process.pid} "quoted" ünïcødé`;
  return [
    [
      "tools/list shows the three meta-tools",
      ["--method", "tools/list"],
      (r) =>
        JSON.stringify(r.tools.map((t) => t.name).sort()) ===
        JSON.stringify(["call", "describe", "resources"]),
    ],
    [
      "tools/call describe everything.echo",
      ["--method", "tools/call", "--tool-name", "describe", "--tool-arg", "method=everything.echo"],
      (r) =>
        !r.isError && /^everything\.echo\b/.test(textOf(r)) && /message: string/.test(textOf(r)),
    ],
    [
      "tools/call call everything.echo",
      [
        "--method",
        "tools/call",
        "--tool-name",
        "call",
        "--tool-arg",
        "method=everything.echo",
        `arguments=${JSON.stringify({ message: payload })}`,
      ],
      (r) => !r.isError && textOf(r) === `Echo: ${payload}`,
    ],
    [
      "tools/call call of an unknown tool is an isError result",
      ["--method", "tools/call", "--tool-name", "call", "--tool-arg", "method=everything.nope"],
      (r) => r.isError === true && /Unknown tool "nope" on server "everything"/.test(textOf(r)),
      5,
    ],
    [
      "tools/call resources lists everything's resources",
      ["--method", "tools/call", "--tool-name", "resources", "--tool-arg", "server=everything"],
      (r) => !r.isError && textOf(r).includes("demo://resource/static/document/architecture.md"),
    ],
    [
      "resources/list",
      ["--method", "resources/list"],
      (r) => r.resources.some((x) => x.uri === "demo://resource/static/document/architecture.md"),
    ],
    [
      "resources/read",
      ["--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"],
      (r) =>
        r.contents.length === 1 &&
        r.contents[0].uri === "demo://resource/static/document/architecture.md" &&
        r.contents[0].text.length > 100,
    ],
    [
      "prompts/list",
      ["--method", "prompts/list"],
      (r) => r.prompts.some((p) => p.name === "everything__args-prompt"),
    ],
    [
      "prompts/get with arguments",
      [
        "--method",
        "prompts/get",
        "--prompt-name",
        "everything__args-prompt",
        "--prompt-args",
        "city=Zürich",
        "state=ZH",
      ],
      (r) => JSON.stringify(r.messages).includes("Zürich"),
    ],
  ];
}

/** mcpx over HTTP on a free port; resolves once it listens and everything is ready. */
async function startHttp(config, env) {
  const child = spawn(process.execPath, [MCPX, config, "--port", "0"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mcpx did not listen: ${err}`)), 30_000);
    child.stderr.on("data", (c) => {
      err += c;
      const m = /mcpx listening on (\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`mcpx exited with ${code}: ${err}`)));
  });
  return { child, url, stderr: () => err };
}

/** SIGTERM mcpx and wait for it (SIGKILL after 15 s). */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Run every check with `target` (the Inspector's server arguments); returns the failures. */
async function runChecks(label, target, env) {
  let failed = 0;
  for (const [name, args, ok, exit = 0] of checks(label)) {
    const out = await run(NODE22, [INSPECTOR, "--cli", ...target, ...args], env);
    let verdict = false;
    let why = `exit ${out.code}`;
    if (out.code === exit) {
      try {
        verdict = ok(JSON.parse(out.stdout));
        why = verdict ? "" : `unexpected output: ${out.stdout.slice(0, 400)}`;
      } catch (error) {
        why = `${error.message}: ${out.stdout.slice(0, 400)}`;
      }
    }
    say(`${verdict ? "pass" : "FAIL"}  ${label.padEnd(5)} ${name}${verdict ? "" : ` — ${why}`}`);
    if (!verdict) {
      failed++;
      say(out.stderr.slice(-2000));
    }
  }
  return failed;
}

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), "mcpx-inspector-"));
  // The Inspector keeps a catalog and secrets under HOME: a temp one, removed at the end.
  const env = { ...process.env, HOME: dir, MCP_CATALOG_PATH: path.join(dir, "catalog.json") };
  const config = path.join(dir, "mcpx.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
    }),
  );
  const version = await run(NODE22, [INSPECTOR, "--version"], env);
  say(
    `MCP Inspector ${version.stdout.trim()} on Node ${(await run(NODE22, ["--version"])).stdout.trim()}`,
  );
  let failed = 0;
  let http;
  try {
    // stdio: the Inspector starts mcpx itself, a fresh one per command.
    failed += await runChecks("stdio", [process.execPath, MCPX, config], env);
    http = await startHttp(config, env);
    failed += await runChecks("http", ["--transport", "http", "--server-url", http.url], env);
  } finally {
    if (http) await stop(http.child);
    rmSync(dir, { recursive: true, force: true });
  }
  const total = checks("").length * 2;
  say(`\nInspector checks: ${total - failed}/${total} passed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
