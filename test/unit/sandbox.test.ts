/**
 * The sandbox's parts without worker threads: limits, positions, messages, the host side of a
 * run, and the engine itself in this thread (whose small V8 stack lets a test reach the guard).
 */
import { describe, expect, it } from "vitest";
import { EngineRun } from "../../src/sandbox/engine.js";
import {
  DEFAULT_CALL_BYTES,
  DEFAULT_LIMITS,
  limitMessage,
  resolveLimits,
} from "../../src/sandbox/limits.js";
import { thrownError, toolRef } from "../../src/sandbox/messages.js";
import { STOP, type ToWorker, type WorkerOutcome } from "../../src/sandbox/protocol.js";
import { loadQuickJS } from "../../src/sandbox/quickjs.js";
import { ScriptRun } from "../../src/sandbox/run.js";
import { createStripper, positionInStack, wrapScript } from "../../src/sandbox/source.js";
import { toolHost } from "../helpers/sandbox.js";

describe("limits", () => {
  it("has the documented defaults", () => {
    expect(DEFAULT_LIMITS).toEqual({
      timeMs: 30_000,
      memoryBytes: 64 * 1024 * 1024,
      stackBytes: 512 * 1024,
      calls: 50,
      resultBytes: 256 * 1024,
      logBytes: 64 * 1024,
    });
    expect(resolveLimits({ calls: 5, timeMs: undefined })).toEqual({ ...DEFAULT_LIMITS, calls: 5 });
  });

  it("names the limit, its value, its setting and the way on", () => {
    expect(limitMessage("memoryBytes", 3 * 1024 * 1024, "x.memoryBytes")).toBe(
      "Script stopped: it ran out of memory: its limit is 3 MiB (x.memoryBytes). Keep less data alive at once (filter results as they arrive), or raise x.memoryBytes.",
    );
    expect(limitMessage("resultBytes", 1500, "s.resultBytes")).toMatch(/1500 bytes as JSON/);
  });
});

describe("positions", () => {
  const lines = 3;
  it("are the script's own: the wrapper's line is taken off, and its frames skipped", () => {
    expect(wrapScript("return 1;").split("\n")[1]).toBe("return 1;");
    const stack = [
      "    at fail (mcpx-bridge.js:30:7)",
      "    at <anonymous> (mcpx-script.js:1:2)", // the wrapper's first line
      "    at f (mcpx-script.js:3:9)",
      "    at <eval> (mcpx-script.js:4:1)",
    ].join("\n");
    expect(positionInStack(stack, lines)).toEqual({ line: 2, column: 9 });
    expect(positionInStack("    at <eval> (mcpx-script.js:5:3)", lines)).toBeUndefined(); // the tail
    expect(positionInStack(undefined, lines)).toBeUndefined();
  });

  it("survive type stripping unchanged, and TypeScript errors carry them", () => {
    const strip = createStripper();
    const wrapped = wrapScript("const a: number = 1;\nreturn a as number;");
    const out = strip(wrapped, 2);
    expect(out).toEqual({
      ok: true,
      code: wrapScript("const a         = 1;\nreturn a          ;"),
    });
    expect(strip(wrapScript("const a = 1;\n  let b: = 2;"), 2)).toMatchObject({
      ok: false,
      unsupported: false,
      position: { line: 2, column: 10 }, // the "=" where a type should be
    });
  });
});

describe("messages", () => {
  const ctx = { limits: DEFAULT_LIMITS, setting: "sandbox.limits", lines: 5 };
  it("writes tool names as the script would", () => {
    expect(toolRef("github", "get_me")).toBe("servers.github.get_me");
    expect(toolRef("my-server", "list issues")).toBe('servers["my-server"]["list issues"]');
  });

  it("maps QuickJS's own limit errors to limits, whatever they are called", () => {
    for (const name of ["InternalError", "RangeError", "SyntaxError"]) {
      expect(thrownError({ name, message: "stack overflow" }, ctx)).toMatchObject({
        kind: "limit",
        limit: "stackBytes",
      });
    }
    expect(thrownError({ name: "InternalError", message: "out of memory" }, ctx)).toMatchObject({
      limit: "memoryBytes",
    });
    expect(thrownError({ name: "SyntaxError", message: "bad" }, ctx)).toMatchObject({
      kind: "runtime", // thrown by eval() or JSON.parse at run time: the script's own error
    });
  });
});

describe("the host side of a run", () => {
  function started(limits = DEFAULT_LIMITS, callBytes = DEFAULT_CALL_BYTES) {
    const host = toolHost();
    const posted: ToWorker[] = [];
    const flags: number[] = [];
    const run = new ScriptRun(7, "return 1;", host.options(), limits, 1_000, callBytes);
    run.start({ flag: (v) => flags.push(v), post: (m) => posted.push(m), kill: () => {} });
    return { host, posted, flags, run };
  }

  it("answers a call outside the script's servers with an error, never calling it", async () => {
    const { host, posted, run } = started();
    run.receive({ type: "call", id: 7, call: 1, server: "secret", tool: "read_all", args: "{}" });
    run.receive({ type: "call", id: 7, call: 2, server: "a", tool: "nope", args: "{}" });
    run.receive({ type: "call", id: 7, call: 3, server: "a", tool: "echo", args: "{bad json" });
    await expect.poll(() => posted.length).toBe(4);
    expect(posted.slice(1)).toEqual([
      {
        type: "answer",
        id: 7,
        call: 1,
        ok: false,
        message: "servers.secret.read_all is not a tool this script can call.",
      },
      {
        type: "answer",
        id: 7,
        call: 2,
        ok: false,
        message: "servers.a.nope is not a tool this script can call.",
      },
      expect.objectContaining({ call: 3, ok: false }),
    ]);
    expect(posted[3]).toMatchObject({ message: /JSON/ });
    expect(host.calls).toEqual([]);
    run.cancel(false);
  });

  it("refuses arguments past callBytes.argument before parsing them, never calling the tool", async () => {
    const { host, posted, run } = started(DEFAULT_LIMITS, { argument: 100, inFlight: 1000 });
    const args = JSON.stringify({ pad: "x".repeat(200) });
    run.receive({ type: "call", id: 7, call: 1, server: "a", tool: "echo", args });
    await expect.poll(() => posted.length).toBe(2);
    expect(posted[1]).toEqual({
      type: "answer",
      id: 7,
      call: 1,
      ok: false,
      message:
        "servers.a.echo was not called: its arguments are 210 bytes or more as JSON, more than the 100 bytes one inner call may send. Send less per call (split the data over several calls, or pass a reference the tool can read).",
    });
    expect(host.calls).toEqual([]);
    run.cancel(false);
  });

  it("does not hand a script a result larger than its whole memory", async () => {
    const limits = { ...DEFAULT_LIMITS, memoryBytes: 1024 * 1024 };
    const { host, posted, run } = started(limits, { argument: 4e6, inFlight: 4e6 });
    const big = JSON.stringify({ pad: "x".repeat(1024 * 1024) });
    run.receive({ type: "call", id: 7, call: 1, server: "a", tool: "echo", args: big });
    await expect.poll(() => posted.length).toBe(2);
    expect(host.calls).toHaveLength(1);
    expect(posted[1]).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /^servers\.a\.echo answered 1 MiB or more as JSON, more than the script's memory limit of 1 MiB: it was not passed to the script\./,
      ) as unknown,
    });
    run.cancel(false);
  });

  it("holds the worker's value to resultBytes before parsing it", async () => {
    const { run } = started({ ...DEFAULT_LIMITS, resultBytes: 10 });
    run.receive({
      type: "done",
      id: 7,
      outcome: { ok: true, json: JSON.stringify("x".repeat(20)), logs: [], calls: 0 },
    });
    const out = await run.answer;
    expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "resultBytes" } });
  });

  it("counts calls itself: one past the limit sets the stop flag", () => {
    const { host, posted, flags, run } = started({ ...DEFAULT_LIMITS, calls: 1 });
    run.receive({ type: "call", id: 7, call: 1, server: "a", tool: "echo", args: "{}" });
    run.receive({ type: "call", id: 7, call: 2, server: "a", tool: "echo", args: "{}" });
    expect(flags).toEqual([STOP.none, STOP.calls]);
    expect(posted).toContainEqual({ type: "stop", id: 7 });
    expect(host.calls).toHaveLength(1);
    run.cancel(false);
  });
});

describe("the engine, in this thread", () => {
  const instantiate = loadQuickJS();

  async function runHere(script: string, limits = DEFAULT_LIMITS): Promise<WorkerOutcome> {
    const { module } = await (await instantiate)();
    let outcome: WorkerOutcome | undefined;
    const job = {
      type: "run" as const,
      id: 1,
      script,
      servers: {},
      limits,
      limitSetting: "sandbox.limits",
      deadline: Date.now() + limits.timeMs,
      callBytes: DEFAULT_CALL_BYTES,
    };
    new EngineRun(module, job, {
      stop: new Int32Array(new SharedArrayBuffer(4)),
      postCall: () => {},
      finish: (o) => (outcome = o),
      strip: createStripper(),
    }).start();
    if (!outcome) throw new Error("the script did not finish synchronously");
    return outcome;
  }

  it("runs a script", async () => {
    expect(await runHere("return [1, 2].map((x) => x * 2);")).toEqual({
      ok: true,
      json: "[2,4]",
      logs: [],
      calls: 0,
    });
  });

  it("reports V8's stack running out inside WebAssembly as the stack limit", async () => {
    // This thread's V8 stack (~1 MB) is far smaller than a worker's: QuickJS's parser, allowed
    // 4 MiB, exhausts it first, and the engine must not crash or misreport it.
    const out = await runHere('return eval("[".repeat(1000000));', {
      ...DEFAULT_LIMITS,
      stackBytes: 4 * 1024 * 1024,
    });
    expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "stackBytes" } });
  });
});
