/**
 * Every limit stops a script with a message that names the limit, its value, its setting and
 * how to go on; the limits come from the caller's profile (`limits`, `limitSetting`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  type SandboxLimits,
  type Sandbox,
  type ScriptOutcome,
} from "../../src/sandbox/index.js";
import { toolHost } from "../helpers/sandbox.js";

let sandbox: Sandbox;
beforeAll(() => {
  sandbox = createSandbox({ maxWorkers: 2 });
});
afterAll(() => sandbox.close());

const SETTING = "profiles.ci.sandbox";

function run(script: string, limits: Partial<SandboxLimits>, host = toolHost()) {
  return sandbox.run(script, host.options({ limits, limitSetting: SETTING }));
}

function failure(out: ScriptOutcome) {
  if (out.ok) throw new Error(`expected a failure, got ${JSON.stringify(out)}`);
  return out.error;
}

describe("each limit, its message", () => {
  it("timeMs: a busy script", async () => {
    const error = failure(await run("let i = 0;\nwhile (true) i++;", { timeMs: 300 }));
    expect(error).toMatchObject({ kind: "limit", limit: "timeMs" });
    expect(error.message).toBe(
      "Script stopped: it ran longer than its wall-time limit of 300 ms (profiles.ci.sandbox.timeMs). Do less work per script (fewer or faster calls, no busy loops), or raise profiles.ci.sandbox.timeMs.",
    );
  });

  it("timeMs: a script waiting on a slow call, answered by the host's own timer", async () => {
    const host = toolHost();
    const out = await run("const r = await servers.a.hang();\nreturn r;", { timeMs: 300 }, host);
    expect(failure(out)).toMatchObject({ kind: "limit", limit: "timeMs" });
    expect(host.aborted).toEqual(["hang"]);
  });

  it("memoryBytes", async () => {
    const error = failure(
      await run("const a = [];\nwhile (true) a.push([a.length]);", {
        memoryBytes: 8 * 1024 * 1024,
      }),
    );
    expect(error).toMatchObject({ kind: "limit", limit: "memoryBytes", line: 2 });
    expect(error.message).toMatch(
      /^Script stopped: it ran out of memory: its limit is 8 MiB \(profiles\.ci\.sandbox\.memoryBytes\)\. Keep less data alive at once \(filter results as they arrive\), or raise profiles\.ci\.sandbox\.memoryBytes\. It was stopped at line 2, column \d+\.$/,
    );
  });

  it("stackBytes; a script may catch the overflow and go on", async () => {
    const deep = "function down(n) {\n  return down(n + 1) + 1;\n}\n";
    const error = failure(await run(`${deep}return down(0);`, { stackBytes: 128 * 1024 }));
    expect(error).toMatchObject({ kind: "limit", limit: "stackBytes", line: 2 });
    expect(error.message).toMatch(
      /overflowed its stack: its limit is 128 KiB \(profiles\.ci\.sandbox\.stackBytes\)\. Replace deep recursion with a loop, or raise profiles\.ci\.sandbox\.stackBytes\./,
    );
    const caught = await run(`${deep}try { down(0); } catch (e) { return e.message; }`, {
      stackBytes: 128 * 1024,
    });
    expect(caught).toMatchObject({ ok: true, value: "stack overflow" });
  });

  it("calls: the call past the limit stops the script; earlier ones ran", async () => {
    const host = toolHost();
    const out = await run(
      "for (let i = 0; i < 10; i++) {\n  await servers.a.echo({ i });\n}",
      { calls: 3 },
      host,
    );
    expect(out).toMatchObject({ ok: false, calls: 3 });
    const error = failure(out);
    expect(error).toMatchObject({ kind: "limit", limit: "calls", line: 2 });
    expect(error.message).toMatch(
      /^Script stopped: it made more than 3 inner calls \(profiles\.ci\.sandbox\.calls\)\. Make fewer calls per script, or split the work over several scripts, or raise profiles\.ci\.sandbox\.calls\./,
    );
    expect(host.calls.map((c) => c.args)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
  });

  it("calls: 0 allows none", async () => {
    const host = toolHost();
    const out = await run("return await servers.a.echo({});", { calls: 0 }, host);
    expect(failure(out)).toMatchObject({ kind: "limit", limit: "calls" });
    expect(host.calls).toEqual([]);
  });

  it("resultBytes counts UTF-8 bytes of the JSON", async () => {
    const fits = await run('return "x".repeat(998);', { resultBytes: 1000 }); // 1000 with quotes
    expect(fits).toMatchObject({ ok: true });
    const long = failure(await run('return "x".repeat(999);', { resultBytes: 1000 }));
    expect(long).toMatchObject({ kind: "limit", limit: "resultBytes" });
    expect(long.message).toBe(
      "Script stopped: it returned a value larger than 1000 bytes as JSON (profiles.ci.sandbox.resultBytes). Return only the fields the answer needs, or raise profiles.ci.sandbox.resultBytes.",
    );
    // 602 characters, 1,202 bytes.
    const wide = failure(await run('return "é".repeat(600);', { resultBytes: 1000 }));
    expect(wide).toMatchObject({ kind: "limit", limit: "resultBytes" });
  });

  it("logBytes: the lines logged before the limit come back with the error", async () => {
    const out = await run(
      'for (let i = 0; ; i++) console.log("line " + String(i).padStart(4, "0"));',
      { logBytes: 100 },
    );
    const error = failure(out);
    expect(error).toMatchObject({ kind: "limit", limit: "logBytes" });
    expect(error.message).toMatch(
      /^Script stopped: it logged more than 100 bytes \(profiles\.ci\.sandbox\.logBytes\)\. Log less \(summaries, not whole results\), or raise profiles\.ci\.sandbox\.logBytes\./,
    );
    // Each line is 9 bytes plus a newline: 10 fit in 100.
    expect(out.logs).toEqual(
      Array.from({ length: 10 }, (_, i) => `line ${String(i).padStart(4, "0")}`),
    );
  });

  it("the setting defaults to sandbox.limits", async () => {
    const out = await sandbox.run(
      "while (true) {}",
      toolHost().options({ limits: { timeMs: 100 } }),
    );
    expect(failure(out).message).toMatch(
      /\(sandbox\.limits\.timeMs\)\..* raise sandbox\.limits\.timeMs\.$/,
    );
  });
});

describe("what inner calls carry to the host", () => {
  it("arguments past callBytes.argument are refused in the worker: the call rejects, catchably", async () => {
    const host = toolHost();
    const out = await run(
      `const big = "x".repeat(2 * 1024 * 1024);
const failed = await servers.a.echo({ big }).catch((e) => [e.name, e.message]);
const fine = await servers.a.echo({ small: 1 });
return { failed, fine };`,
      {},
      host,
    );
    expect(out).toMatchObject({ ok: true });
    const value = out.ok ? (out.value as { failed: string[]; fine: unknown }) : undefined;
    expect(value?.failed).toEqual([
      "ToolCallError",
      "servers.a.echo was not called: its arguments are 2 MiB or more as JSON, more than the 1 MiB one inner call may send. Send less per call (split the data over several calls, or pass a reference the tool can read).",
    ]);
    expect(value?.fine).toEqual({ small: 1 });
    // The refused call never reached the host.
    expect(host.calls).toEqual([{ server: "a", tool: "echo", args: { small: 1 } }]);
  });

  it("the arguments of calls in flight are summed: the one past callBytes.inFlight is refused", async () => {
    const small = createSandbox({ maxWorkers: 1, callBytes: { argument: 1000, inFlight: 2500 } });
    try {
      const host = toolHost();
      const out = await small.run(
        `const pad = "x".repeat(900);
const all = [1, 2, 3].map((i) => servers.a.echo({ i, pad }).then(() => "ran", (e) => e.message));
const first = await Promise.all(all);
// Once they answered, their bytes are free again.
return [...first, await servers.a.echo({ i: 4, pad }).then(() => "ran")];`,
        host.options(),
      );
      expect(out).toMatchObject({ ok: true });
      const [one, two, three, four] = out.ok ? (out.value as string[]) : [];
      expect([one, two, four]).toEqual(["ran", "ran", "ran"]);
      expect(three).toBe(
        "servers.a.echo was not called: the script's calls still running carry 1.8 KiB of arguments, and this call's 916 bytes would pass the 2500 bytes a script may have in flight at once. Await earlier calls before starting more.",
      );
      expect(host.calls.map((c) => (c.args as { i: number }).i)).toEqual([1, 2, 4]);
    } finally {
      await small.close();
    }
  });
});

describe("bad limits are the caller's bug, refused before anything runs", () => {
  it.each([
    [{ timeMs: 0 }, /timeMs must be an integer of at least 1; got 0/],
    [{ memoryBytes: 1.5 }, /memoryBytes must be an integer of at least 1048576; got 1.5/],
    [{ stackBytes: 8 * 1024 * 1024 }, /stackBytes must be an integer from 65536 to 4194304/],
    [
      { bogus: 1 } as Partial<SandboxLimits>,
      /Unknown sandbox limit "bogus"; the limits are timeMs, /,
    ],
  ])("%j", (limits, expected) => {
    expect(() => sandbox.run("return 1;", toolHost().options({ limits }))).toThrow(expected);
  });
});
