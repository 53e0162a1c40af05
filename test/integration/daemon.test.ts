/**
 * One mcpx per user: clients launch `mcpx <config> --daemon`, a thin shim that attaches to the one
 * daemon of that config (started detached when none runs). Real shims, a real daemon, real
 * upstreams, the real SDK client over stdio.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import {
  cacheEnv,
  descendants,
  eventually,
  fixtureServer,
  installedCopy,
  INITIALIZE,
  isAlive,
  MCPX,
  newClient,
  npmServer,
  ROOT,
  stop,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

interface World {
  runtime: string;
  env: Record<string, string>;
  config: string;
}

/** A runtime folder (the daemon's socket) and a catalog cache of this test's own. */
function world(servers: Record<string, unknown>): World {
  const runtime = tempDir("mcpx-run-");
  chmodSync(runtime, 0o700);
  const dir = tempDir();
  const config = writeConfig({ mcpServers: servers }, dir);
  const w = {
    runtime,
    config,
    env: {
      PATH: process.env.PATH ?? "",
      XDG_RUNTIME_DIR: runtime,
      TMPDIR: dir,
      ...cacheEnv(),
    },
  };
  worlds.push(w);
  return w;
}

/** The tail of every daemon log of these worlds, and what each shim wrote to stderr. */
function logsOf(of: World[], shims: (() => string)[]): string {
  const tail = (t: string) => t.trim().split("\n").slice(-60).join("\n");
  const logs = of.flatMap((w) => {
    const dir = path.join(w.runtime, "mcpx");
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".log")) : [];
    return files.map((f) => `--- ${f}\n${tail(readFileSync(path.join(dir, f), "utf8"))}`);
  });
  const said = shims.map((s, i) => `--- shim ${i} stderr\n${tail(s())}`);
  return [...logs, ...said].join("\n");
}

const counter = () => fixtureServer("counter.mjs");

const daemons = new Set<number>();
const clients: Client[] = [];
const worlds: World[] = [];
const shimErrors: (() => string)[] = [];
afterEach(async ({ task }) => {
  // A test that failed (or timed out) shows what the daemons logged and the shims said.
  if (task.result?.state === "fail") console.error(logsOf(worlds, shimErrors));
  worlds.length = 0;
  shimErrors.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const pid of daemons) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Gone already.
    }
  }
  for (const pid of daemons) await eventually(() => !isAlive(pid), 15_000, `daemon ${pid} to exit`);
  daemons.clear();
});

/** A client over `mcpx <config> --daemon`, connected (its shim's pid in `shim`). */
/** The package's bin, what `install` writes into a client's file. */
const BIN = path.join(ROOT, "dist/mcpx.cjs");

async function attach(w: World, extra: string[] = [], mcpx = BIN) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpx, w.config, "--daemon", ...extra],
    env: w.env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  shimErrors.push(() => stderr);
  const client = newClient("legacy");
  await client.connect(transport);
  clients.push(client);
  return { client, shim: transport.pid!, stderr: () => stderr };
}

/** `mcpx daemon <action> <config>` with the world's environment. */
function daemonCommand(w: World, action: string, mcpx = MCPX) {
  const run = spawnSync(process.execPath, [mcpx, "daemon", action, w.config], {
    env: w.env,
    encoding: "utf8",
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

function daemonPid(w: World, mcpx = MCPX): number {
  const status = daemonCommand(w, "status", mcpx);
  const pid = Number(/pid (\d+)/.exec(status.out)?.[1]);
  if (!pid) throw new Error(`no daemon: ${status.out}${status.err}`);
  daemons.add(pid);
  return pid;
}

/** A connection of our own to the daemon's socket, below any shim; `closed` says if it was reset. */
function rawConnection(w: World): { socket: net.Socket; closed: Promise<boolean> } {
  const socketPath = /socket (\S+)/.exec(daemonCommand(w, "status").out)?.[1];
  if (!socketPath) throw new Error("the daemon's status names no socket");
  const socket = net.connect(socketPath);
  socket.on("error", () => undefined);
  return { socket, closed: new Promise((resolve) => socket.once("close", resolve)) };
}

interface Line {
  id?: number | string;
  method?: string;
  error?: { code: number; message: string };
  result?: { content?: { text?: string }[]; isError?: boolean };
}

/** A shim of our own over raw pipes: what it wrote to stdout (parsed) and to stderr. */
function rawShim(w: World) {
  const shim = spawn(process.execPath, [BIN, w.config, "--daemon"], {
    env: w.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  shim.stdout.on("data", (c: Buffer) => (out += c.toString()));
  shim.stderr.on("data", (c: Buffer) => (err += c.toString()));
  shimErrors.push(() => err);
  const lines = () =>
    out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Line);
  return {
    shim,
    lines,
    answer: (id: number) => lines().find((m) => m.id === id),
    send: (m: unknown) => shim.stdin.write(`${JSON.stringify(m)}\n`),
    stderr: () => err,
  };
}

const call = (client: Client, method: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name: "call", arguments: { method, arguments: args } });

const describeAll = async (client: Client) =>
  text(await client.callTool({ name: "describe", arguments: {} }));

/** The parent of `pid`, or undefined once it has exited. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 4; the command name (field 2) may hold spaces, so read after its ")".
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

describe("mcpx --daemon", () => {
  it("three clients share one daemon and its upstreams; each keeps its own sessions", async () => {
    const w = world({
      everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
      counter: counter(),
    });
    const a = await attach(w);
    const [b, c] = await Promise.all([attach(w), attach(w)]);
    const pid = daemonPid(w);
    // Each shim is a thin relay: no upstream runs under it (the first one started the daemon,
    // detached: its own process group, which outlives that shim).
    for (const shim of [b.shim, c.shim]) expect(descendants(shim)).toEqual([]);
    // Its one child is the daemon (read per process: the daemon's short-lived background
    // sessions may come and go between two reads of the whole tree).
    expect(descendants(a.shim).filter((p) => parentOf(p) === a.shim)).toEqual([pid]);
    for (const { client } of [a, b, c]) {
      const catalog = await describeAll(client);
      expect(catalog).toContain("everything");
      expect(catalog).toContain("counter");
    }
    expect(text(await call(a.client, "counter.count"))).toBe("1");
    expect(text(await call(a.client, "counter.count"))).toBe("2");
    expect(text(await call(b.client, "counter.count"))).toBe("1");
    // One daemon: every upstream process is its descendant; server-everything, which no client
    // called, runs once for all (a background look for tools' needs may add one for a while).
    await eventually(
      () => descendants(pid).filter((p) => cmdline(p).includes("server-everything")).length <= 1,
      20_000,
      "one server-everything for three clients",
    );
    expect(daemonCommand(w, "status").out).toContain("3 client(s) attached");
    // Closing one client leaves the others working.
    await a.client.close();
    expect(text(await call(b.client, "counter.count"))).toBe("2");
    expect(text(await call(c.client, "everything.echo", { message: "still here" }))).toContain(
      "still here",
    );
    await eventually(
      () => daemonCommand(w, "status").out.includes("2 client(s) attached"),
      10_000,
      "the daemon to count 2 clients",
    );
  });

  it("the shim is thin: one CommonJS file of Node built-ins, no SDK, CLI parser or proxy code", async () => {
    const w = world({ counter: counter() });
    await attach(w);
    daemonPid(w);
    // The daemon runs (started untraced); a traced shim attaches to it and makes a call.
    const trace = path.join(tempDir(), "modules.txt");
    const traced = await attach({
      ...w,
      env: {
        ...w.env,
        NODE_OPTIONS: `--import ${path.join(ROOT, "test/fixtures/preload/module-trace.mjs")}`,
        MCPX_TRACE_MODULES: trace,
      },
    });
    expect(text(await call(traced.client, "counter.count"))).toBe("1");
    const modules = readFileSync(trace, "utf8").split("\n").filter(Boolean);
    // The bin (what install writes) is one CommonJS file of Node built-ins: nothing else loads,
    // neither a dependency nor another file of mcpx (not even its CLI parser).
    expect(modules.some((m) => m.endsWith("/dist/mcpx.cjs"))).toBe(true);
    const files = modules.filter((m) => m.startsWith("file:") && !m.endsWith("/dist/mcpx.cjs"));
    expect(files.filter((m) => !m.includes("/test/fixtures/preload/"))).toEqual([]);
  });

  it("keeps the socket to its user: 0700 folder, 0600 socket, another uid refused", async () => {
    const w = world({ counter: counter() });
    await attach(w);
    daemonPid(w);
    const dir = path.join(w.runtime, "mcpx");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const [socket] = readdirSync(dir)
      .filter((f) => f.endsWith(".sock"))
      .map((f) => path.join(dir, f));
    expect(statSync(socket!).mode & 0o777).toBe(0o600);
    if (process.getuid?.() !== 0) return; // another uid needs root to exist here
    const other = spawnSync(
      process.execPath,
      [
        "-e",
        `require("net").connect(${JSON.stringify(socket)}).on("error", e => { console.log(e.code); process.exit(0) }).on("connect", () => { console.log("CONNECTED"); process.exit(0) })`,
      ],
      { uid: 65534, gid: 65534, encoding: "utf8" },
    );
    expect(other.stdout.trim()).toBe("EACCES");
  });

  it("two shims starting at once start one daemon", async () => {
    const w = world({ counter: counter() });
    const [a, b] = await Promise.all([attach(w), attach(w)]);
    const pid = daemonPid(w);
    expect(text(await call(a.client, "counter.pid"))).not.toBe("");
    expect(text(await call(b.client, "counter.count"))).toBe("1");
    expect(daemonsOf(w.config)).toEqual([pid]);
  });

  it("SIGKILL of the daemon: no upstream survives, the in-flight call errs, the next call starts a new daemon", async () => {
    const w = world({
      counter: counter(),
      slow: fixtureServer("faulty.mjs"),
    });
    const a = await attach(w);
    expect(text(await call(a.client, "counter.count"))).toBe("1");
    const pid = daemonPid(w);
    const upstreams = descendants(pid);
    expect(upstreams.length).toBeGreaterThan(0);
    // The first progress from the upstream says the call is under way there. (An upstream
    // process is no sign: discovery starts one before any call, and a request the shim has not
    // read yet when the daemon dies goes to the next daemon, rightly, where it would run again.)
    let underWay = () => {};
    const progressed = new Promise<void>((resolve) => (underWay = resolve));
    const inflight = a.client
      .callTool(
        { name: "call", arguments: { method: "slow.slow", arguments: { ms: 600_000 } } },
        { onprogress: () => underWay(), timeout: 20_000 },
      )
      .then(
        (r) => ({ ok: r }),
        (err: Error) => ({ err: err.message }),
      );
    await Promise.race([
      progressed,
      inflight.then((o) => {
        throw new Error(`the call ended before it was under way: ${JSON.stringify(o)}`);
      }),
    ]);
    process.kill(pid, "SIGKILL");
    const outcome = await inflight;
    expect(JSON.stringify(outcome)).toContain("daemon ended");
    await eventually(() => upstreams.every((p) => !isAlive(p)), 15_000, "upstreams to be killed");
    // The shim attaches to a new daemon (the stale socket replaced) and replays initialize.
    expect(text(await call(a.client, "counter.count"))).toBe("1");
    const next = daemonPid(w);
    expect(next).not.toBe(pid);
  });

  it("a killed shim's sessions close; the other client carries on", async () => {
    const w = world({ counter: counter() });
    const a = await attach(w);
    const b = await attach(w);
    const pid = daemonPid(w);
    expect(text(await call(a.client, "counter.count"))).toBe("1");
    expect(text(await call(b.client, "counter.count"))).toBe("1");
    const aCounter = Number(text(await call(a.client, "counter.pid")));
    const bCounter = Number(text(await call(b.client, "counter.pid")));
    expect(aCounter).not.toBe(bCounter);
    expect(descendants(pid)).toContain(aCounter);
    process.kill(a.shim, "SIGKILL");
    await eventually(
      () => !isAlive(aCounter),
      15_000,
      "the killed client's upstream session to close",
    );
    expect(isAlive(bCounter)).toBe(true);
    expect(text(await call(b.client, "counter.count"))).toBe("2");
  });

  it("the shim answers a message past 10 MiB itself, not sending it; the client carries on", async () => {
    const w = world({ counter: counter() });
    await attach(w);
    const pid = daemonPid(w);
    const { shim, answer, send } = rawShim(w);
    try {
      send(INITIALIZE);
      await eventually(() => answer(1) !== undefined, 20_000, "the answer to initialize");
      const pad = "x".repeat(11 * 1024 * 1024);
      send({ jsonrpc: "2.0", id: 2, method: "ping", params: { pad } });
      // The SDK's order: the id comes last.
      send({ method: "ping", params: { pad }, jsonrpc: "2.0", id: 4 });
      send({ jsonrpc: "2.0", id: 3, method: "ping" });
      await eventually(() => answer(3) !== undefined, 20_000, "the next request's answer");
      expect(answer(4)?.error?.code).toBe(-32600);
      expect(answer(2)?.error).toEqual({
        code: -32600,
        message: expect.stringMatching(
          /^mcpx: this message is more than the 10 MiB one message may be; it was not sent\./,
        ) as unknown,
      });
      expect(answer(3)).toMatchObject({ result: {} });
      expect(daemonCommand(w, "status").out).toContain("2 client(s) attached");
      expect(isAlive(pid)).toBe(true);
    } finally {
      await stop(shim);
    }
  }, 60_000);

  it("a client's answer past 10 MiB is not sent: the upstream's request gets an error at once, the client is told", async () => {
    const w = world({ everything: npmServer("@modelcontextprotocol/server-everything", "stdio") });
    const { shim, lines, answer, send, stderr } = rawShim(w);
    try {
      send({ ...INITIALIZE, params: { ...INITIALIZE.params, capabilities: { sampling: {} } } });
      await eventually(() => answer(1) !== undefined, 20_000, "the answer to initialize");
      daemonPid(w);
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "call",
          arguments: {
            method: "everything.trigger-sampling-request",
            arguments: { prompt: "p" },
          },
        },
      });
      await eventually(
        () => lines().some((m) => m.method === "sampling/createMessage"),
        20_000,
        "the upstream's sampling request",
      );
      const asked = lines().find((m) => m.method === "sampling/createMessage")!;
      const pad = "x".repeat(11 * 1024 * 1024);
      // An answer to a request the daemon never sent: said on stderr, no error made up for it.
      send({ jsonrpc: "2.0", id: "nobody", result: { pad } });
      await eventually(
        () => stderr().includes(`request "nobody" was more than`),
        20_000,
        "the shim to drop the answer to no request",
      );
      expect(stderr()).toContain("it was not passed on, and no request awaits it.");
      // The SDK's order: the id comes last, after 11 MiB.
      send({
        result: { role: "assistant", content: { type: "text", text: pad }, model: "m" },
        jsonrpc: "2.0",
        id: asked.id,
      });
      await eventually(() => answer(2) !== undefined, 20_000, "the call's answer");
      expect(answer(2)?.result?.isError).toBe(true);
      expect(answer(2)?.result?.content?.[0]?.text).toContain(
        `the client's answer to request ${JSON.stringify(asked.id)} was more than the 10 MiB one message may be; it was not passed on`,
      );
      expect(stderr()).toContain("it was not passed on");
    } finally {
      await stop(shim);
    }
  }, 60_000);

  it("the shim skips a client's line that is JSON but not JSON-RPC, says so once on stderr, and answers the next request", async () => {
    const w = world({ counter: counter() });
    const { shim, answer, send, stderr } = rawShim(w);
    try {
      send(INITIALIZE);
      await eventually(() => answer(1) !== undefined, 20_000, "the answer to initialize");
      send({ jsonrpc: "2.0", id: 7, method: 42 });
      send({ a: 1 });
      // A batch (the protocol has none now) and a bare value.
      send([{ jsonrpc: "2.0", id: 8, method: "ping" }]);
      send(5);
      send({ jsonrpc: "2.0", id: 3, method: "ping" });
      await eventually(() => answer(3) !== undefined, 20_000, "the next request's answer");
      expect(answer(3)).toMatchObject({ result: {} });
      expect(answer(7)).toBeUndefined();
      expect(answer(8)).toBeUndefined();
      const warned = stderr()
        .split("\n")
        .filter((l) => l.includes("not a JSON-RPC message"));
      expect(warned).toEqual([
        expect.stringMatching(
          /^mcpx: the client sent a line that is not a JSON-RPC message; it was skipped .* A request has "jsonrpc": "2\.0"/,
        ) as unknown,
      ]);
      // The shim sent neither line on: the daemon's log has no word of them.
      expect(logsOf([w], [])).not.toContain("not a JSON-RPC message");
    } finally {
      await stop(shim);
    }
  });

  it("ends a connection that sends a line past 10 MiB: the peer sees it close, the others carry on", async () => {
    const w = world({ counter: counter() });
    const a = await attach(w);
    daemonPid(w);
    const { socket, closed } = rawConnection(w);
    let got = "";
    socket.on("data", (c: Buffer) => (got += c.toString()));
    socket.write(`${JSON.stringify({ mcpx: "attach", version: "test" })}\n`);
    await eventually(() => got.includes('"attached"'), 20_000, "the daemon to attach");
    socket.write(`${JSON.stringify(INITIALIZE)}\n`);
    await eventually(() => got.includes('"id":1'), 20_000, "the answer to initialize");
    // Past the bound: the daemon ends this connection and reads on to the end of what we send,
    // so our side closes too (left unread, neither side would ever close).
    socket.write(`${"x".repeat(11 * 1024 * 1024)}\n`);
    // Closed cleanly, not reset by the daemon's last resort (a socket destroyed after 10 s).
    expect(await closed).toBe(false);
    expect(text(await call(a.client, "counter.count"))).toBe("1");
  }, 60_000);

  it("ends a connection whose first line runs past 10 MiB without a newline", async () => {
    const w = world({ counter: counter() });
    const a = await attach(w);
    daemonPid(w);
    const { socket, closed } = rawConnection(w);
    let ended = false;
    void closed.then(() => (ended = true));
    socket.write("x".repeat(11 * 1024 * 1024));
    await eventually(() => ended, 20_000, "the daemon to end the connection");
    expect(text(await call(a.client, "counter.count"))).toBe("1");
  }, 60_000);

  it("exits after --daemon-idle with no client", async () => {
    const w = world({ counter: counter() });
    const a = await attach(w, ["--daemon-idle", "200"]);
    const pid = daemonPid(w);
    const upstreams = descendants(pid);
    await a.client.close();
    await eventually(() => !isAlive(pid), 15_000, "the idle daemon to exit");
    await eventually(() => upstreams.every((p) => !isAlive(p)), 15_000, "its upstreams to exit");
    expect(daemonCommand(w, "status").out).toContain("no mcpx daemon runs");
  });

  it("a config edit reaches every client", async () => {
    const w = world({ counter: counter() });
    const a = await attach(w);
    const b = await attach(w);
    daemonPid(w);
    const config = JSON.parse(readFileSync(w.config, "utf8")) as {
      mcpServers: Record<string, unknown>;
    };
    config.mcpServers.second = counter();
    writeFileSync(w.config, JSON.stringify(config));
    for (const { client } of [a, b]) {
      await expect
        .poll(async () => describeAll(client), { timeout: 20_000, interval: 100 })
        .toContain("second");
    }
  });

  it("a daemon of another mcpx version serves its clients; new clients get a daemon of this version", async () => {
    // An "older" mcpx: this build under another version number.
    const old = installedCopy("0.0.1-old");
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as object;
    const oldMcpx = path.join(old, "dist/index.js");
    const w = world({ counter: counter() });
    const a = await attach(w, [], oldMcpx);
    const oldPid = daemonPid(w, oldMcpx);
    expect(daemonCommand(w, "status").out).toContain("mcpx 0.0.1-old");
    // A client of this version attaches to the running daemon, says so once, and asks it to retire.
    const b = await attach(w);
    expect(b.stderr()).toContain("runs mcpx 0.0.1-old");
    expect(text(await call(b.client, "counter.count"))).toBe("1");
    // The old daemon keeps its clients until they leave, then exits; new clients start a new one.
    expect(text(await call(a.client, "counter.count"))).toBe("1");
    await a.client.close();
    await b.client.close();
    await eventually(() => !isAlive(oldPid), 15_000, "the old daemon to exit");
    const c = await attach(w);
    expect(c.stderr()).not.toContain("runs mcpx");
    expect(daemonCommand(w, "status").out).toContain(
      `mcpx ${(pkg as { version: string }).version}`,
    );
    daemonPid(w);
  });
});

describe("mcpx upgraded under a running daemon", () => {
  it("the first lazy load that finds its chunk gone ends the daemon; the client carries on with a daemon of the installed mcpx", async () => {
    // An installed mcpx of its own, to "upgrade" under its daemon.
    const installed = installedCopy();
    const bin = path.join(installed, "dist/mcpx.cjs");
    // The chunk the schema compiler (json-schema-to-typescript) is in: loaded at the first describe.
    const inputs = JSON.parse(
      readFileSync(path.join(installed, "dist/bundle-inputs.json"), "utf8"),
    ) as Record<string, string[]>;
    const [chunk] = Object.entries(inputs).find(([, modules]) =>
      modules.some((m) => m.includes("node_modules/json-schema-to-typescript/")),
    )!;
    const file = path.join(installed, "dist/bundle", chunk);
    const w = world({ alpha: fixtureServer("modern.mjs") });
    const a = await attach(w, [], bin);
    const oldPid = daemonPid(w);
    // npm removes the old version's files and puts the new one's in place (its chunk below).
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as object;
    writeFileSync(
      path.join(installed, "package.json"),
      JSON.stringify({ ...pkg, version: "99.0.0-new" }),
    );
    renameSync(file, `${file}.gone`);
    const schema = () =>
      a.client.callTool({ name: "describe", arguments: { method: "alpha.echo" } });
    // The describe is answered (its schema as JSON, the compiler being gone) ...
    expect(text(await schema())).toContain('"message":{"type":"string"');
    // ... and the daemon, which can no longer load what it loads on first use, ends.
    await eventually(() => !isAlive(oldPid), 15_000, "the daemon to exit");
    renameSync(`${file}.gone`, file);
    // The shim attached to a new daemon, of the installed version: the client's next describe
    // compiles the schema.
    const described = text(await schema());
    const newPid = daemonPid(w);
    expect(described).toContain("message: string");
    expect(newPid).not.toBe(oldPid);
    expect(daemonCommand(w, "status").out).toContain("mcpx 99.0.0-new");
    expect(logsOf([w], [])).toContain("its files changed on disk");
    // The old shim did not retire it (it is the installed version): a new client attaches to it.
    const b = await attach(w, [], bin);
    expect(text(await b.client.callTool({ name: "describe", arguments: {} }))).toContain("alpha");
    expect(daemonPid(w)).toBe(newPid);
    expect(a.stderr()).not.toContain("runs mcpx");
  });
});

/** Pids of the `mcpx daemon run` processes of this config. */
function daemonsOf(config: string): number[] {
  return spawnSync("pgrep", ["-f", `daemon run ${config}`], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number);
}
