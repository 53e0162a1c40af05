/**
 * Escapes and abuse (issue 18's list): each is contained with a clear error while another
 * caller's script, on another worker, keeps finishing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  type RunOptions,
  type Sandbox,
  type ScriptOutcome,
} from "../../src/sandbox/index.js";
import { toolHost, type ToolHost } from "../helpers/sandbox.js";

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = createSandbox({ maxWorkers: 3 });
  // Start every worker now, so "another caller" never waits for a cold start.
  const host = toolHost();
  host.barrier(3);
  const warm = [1, 2, 3].map(() => sandbox.run("return servers.a.barrier();", host.options()));
  expect((await Promise.all(warm)).every((o) => o.ok)).toBe(true);
});
afterAll(() => sandbox.close());

/**
 * Runs an abusive script while another caller runs a normal one, and checks the normal one
 * succeeds. `started` resolves once the abuse is running (it called `servers.a.started()`);
 * with `outlasts`, the abuse must still be running when the normal script is done.
 */
async function contained(
  script: string,
  host: ToolHost,
  opts: { run?: Partial<RunOptions>; started?: boolean; outlasts?: boolean } = {},
): Promise<ScriptOutcome> {
  let settled = false;
  const abuse = sandbox.run(script, host.options(opts.run)).finally(() => (settled = true));
  if (opts.started) await host.started;
  const other = toolHost();
  const normal = await sandbox.run(
    "const r = await servers['other-server'].echo({ still: 'working' });\nreturn r.still;",
    other.options(),
  );
  expect(normal).toEqual({ ok: true, value: "working", logs: [], calls: 1 });
  if (opts.outlasts) expect(settled).toBe(false);
  return abuse;
}

function message(out: ScriptOutcome): string {
  return out.ok ? "(succeeded)" : out.error.message;
}

const BUILTINS = [
  ...["Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError"],
  ...["URIError", "InternalError", "AggregateError", "Array", "Object", "Function", "Iterator"],
  ...["parseInt", "parseFloat", "isNaN", "isFinite", "decodeURI", "decodeURIComponent"],
  ...["encodeURI", "encodeURIComponent", "escape", "unescape", "Infinity", "NaN", "undefined"],
  ...["eval", "Number", "Boolean", "String", "Math", "Reflect", "Symbol", "globalThis", "BigInt"],
  ...["Date", "RegExp", "JSON", "Proxy", "Map", "Set", "WeakMap", "WeakSet", "ArrayBuffer"],
  ...["SharedArrayBuffer", "Uint8ClampedArray", "Int8Array", "Uint8Array", "Int16Array"],
  ...["Uint16Array", "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array"],
  ...["Float16Array", "Float32Array", "Float64Array", "DataView", "Promise", "WeakRef"],
  "FinalizationRegistry",
];

describe("no way out to the host", () => {
  it("the global scope holds only JavaScript built-ins, servers and console", async () => {
    const out = await contained("return Object.getOwnPropertyNames(globalThis);", toolHost());
    expect(out).toMatchObject({ ok: true });
    expect(out.ok && (out.value as string[]).sort()).toEqual(
      [...BUILTINS, "servers", "console"].sort(),
    );
  });

  it("constructors and prototypes lead to the sandbox's own Function, never to process or require", async () => {
    const out = await contained(
      `const failed = await servers.a.fail().catch((e) => e);
const value = await servers.a.echo({});
const probe = (f) => f("return [typeof process, typeof require, typeof module, typeof Buffer, typeof fetch, typeof setTimeout]")();
return {
  viaThis: probe(this.constructor.constructor),
  viaTool: probe(servers.a.echo.constructor),
  viaConsole: probe(console.log.constructor),
  viaError: probe(failed.constructor.constructor),
  viaValue: probe(value.constructor.constructor),
  viaGenerator: (function* () {}).constructor("return typeof process")().next().value,
  viaAsync: await (async () => {}).constructor("return typeof require")(),
  sameGlobal: servers.a.echo.constructor("return globalThis")() === globalThis,
  serversProto: Object.getPrototypeOf(servers),
  toolProto: Object.getPrototypeOf(servers.a.echo) === Function.prototype,
  stackHook: (() => { Error.prepareStackTrace = (_, frames) => frames; return typeof new Error().stack; })(),
};`,
      toolHost(),
    );
    const none = ["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"];
    expect(out).toMatchObject({
      ok: true,
      value: {
        viaThis: none,
        viaTool: none,
        viaConsole: none,
        viaError: none,
        viaValue: none,
        viaGenerator: "undefined",
        viaAsync: "undefined",
        sameGlobal: true,
        serversProto: null,
        toolProto: true,
        stackHook: "string",
      },
    });
  });

  it("Function(...) builds functions over the sandbox's global only", async () => {
    const host = toolHost();
    const global = await contained('return Function("return this")() === globalThis;', host);
    expect(global).toMatchObject({ ok: true, value: true });
    const out = await contained('const p = Function("return process")();\nreturn p;', host);
    expect(out).toMatchObject({ ok: false, error: { kind: "runtime", line: 1 } });
    expect(message(out)).toMatch(/^ReferenceError at line 1, column \d+: 'process' is not defined/);
  });

  it("import() and require are not there", async () => {
    const host = toolHost();
    const dynamic = await contained('const fs = await import("node:fs");\nreturn fs;', host);
    expect(dynamic).toMatchObject({ ok: false, error: { kind: "runtime" } });
    expect(message(dynamic)).toMatch(/import\("node:fs"\) is not available in the sandbox/);
    const fixed = await contained('import fs from "node:fs";', host);
    expect(fixed).toMatchObject({ ok: false, error: { kind: "syntax", line: 1 } });
    const req = await contained('return require("node:child_process");', host);
    expect(message(req)).toMatch(/'require' is not defined/);
  });
});

describe("runaway scripts", () => {
  it("an infinite loop is stopped at its wall time", async () => {
    const host = toolHost();
    const out = await contained("await servers.a.started();\nwhile (true) {}", host, {
      run: { limits: { timeMs: 3_000 } },
      started: true,
      outlasts: true,
    });
    expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "timeMs" } });
    expect(message(out)).toMatch(/wall-time limit of 3000 ms \(sandbox\.limits\.timeMs\)/);
  });

  it("a memory bomb is stopped at the memory limit", async () => {
    const host = toolHost();
    const out = await contained(
      "await servers.a.started();\nconst hoard = [];\nwhile (true) hoard.push({ n: hoard.length, s: 'x'.repeat(64) });",
      host,
      { started: true },
    );
    expect(out).toMatchObject({
      ok: false,
      error: { kind: "limit", limit: "memoryBytes", line: 3 },
    });
    expect(message(out)).toMatch(
      /ran out of memory: its limit is 64 MiB \(sandbox\.limits\.memoryBytes\)/,
    );
  });

  it("a 100 MB string is refused by the memory limit, however it is built", async () => {
    const host = toolHost();
    const repeat = await contained(
      'const s = "x".repeat(100 * 1024 * 1024);\nreturn s.length;',
      host,
    );
    expect(repeat).toMatchObject({
      ok: false,
      error: { kind: "limit", limit: "memoryBytes", line: 1 },
    });
    // QuickJS concatenates lazily (ropes): the memory is spent when the text is made flat.
    const doubling = await contained(
      'let s = "x";\nwhile (s.length < 100 * 1024 * 1024) s += s;\nreturn s.indexOf("y");',
      host,
    );
    expect(doubling).toMatchObject({ ok: false, error: { kind: "limit", limit: "memoryBytes" } });
  });

  it("10,000 inner calls are stopped at the 51st; the host sees 50", async () => {
    const host = toolHost();
    const out = await contained(
      "for (let i = 0; i < 10000; i++) servers.a.echo({ i });\nreturn 'unreachable';",
      host,
    );
    expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "calls" }, calls: 50 });
    expect(message(out)).toMatch(/made more than 50 inner calls \(sandbox\.limits\.calls\)/);
    expect(host.calls).toHaveLength(50);
  });

  it("a promise that never settles is answered at once, not after the wall time", async () => {
    const out = await contained("await new Promise(() => {});\nreturn 1;", toolHost());
    expect(out).toMatchObject({ ok: false, error: { kind: "runtime" } });
    expect(message(out)).toMatch(/awaits a promise that never settles: no inner call is pending/);
  });

  it("a call that never answers is stopped at the wall time, and the call is cancelled", async () => {
    const host = toolHost();
    const out = await contained("await servers.a.hang();", host, {
      run: { limits: { timeMs: 2_000 } },
      outlasts: true,
    });
    expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "timeMs" } });
    await expect.poll(() => host.aborted).toEqual(["hang"]);
  });

  it("a built-in that never polls for interrupts is ended by terminating its worker, which is replaced", async () => {
    const host = toolHost();
    // Array#join walks all 2^32-1 slots in C without checking the interrupt flag.
    const out = await contained(
      'await servers.a.started();\nreturn new Array(2 ** 32 - 1).join("").length;',
      host,
      { run: { limits: { timeMs: 1_000 } }, started: true, outlasts: true },
    );
    expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "timeMs" } });
    expect(await sandbox.run("return 'replaced';", host.options())).toMatchObject({
      value: "replaced",
    });
  });

  it("deep recursion is stopped at the stack limit", async () => {
    const out = await contained(
      "function down(n) {\n  return down(n + 1) + 1;\n}\nreturn down(0);",
      toolHost(),
    );
    expect(out).toMatchObject({
      ok: false,
      error: { kind: "limit", limit: "stackBytes", line: 2 },
    });
    expect(message(out)).toMatch(
      /overflowed its stack: its limit is 512 KiB \(sandbox\.limits\.stackBytes\)/,
    );
  });

  it.each([
    ["the parser", 'return eval("[".repeat(1000000));'],
    ["JSON.parse", 'return JSON.parse("[".repeat(1000000));'],
    [
      "Array#toString",
      "let a = [];\nfor (let i = 0; i < 1000000; i++) a = [a];\nreturn String(a).length;",
    ],
  ])(
    "deep recursion inside %s, at the largest stack budget, is the same limit",
    async (_, script) => {
      const host = toolHost();
      const out = await contained(script, host, {
        run: { limits: { stackBytes: 4 * 1024 * 1024 } },
      });
      expect(out).toMatchObject({ ok: false, error: { kind: "limit", limit: "stackBytes" } });
      expect(message(out)).toMatch(/its limit is 4 MiB \(sandbox\.limits\.stackBytes\)/);
    },
  );
});

describe("prototype pollution", () => {
  it("a tool's value with a __proto__ key stays data, in the sandbox and on the host", async () => {
    const out = await contained(
      `const v = await servers.a.pollute();
return { keys: Object.keys(v), plain: Object.getPrototypeOf(v) === Object.prototype, polluted: ({}).polluted ?? null, v };`,
      toolHost(),
    );
    expect(out).toMatchObject({
      ok: true,
      value: { keys: ["__proto__", "ok"], plain: true, polluted: null },
    });
    const v = out.ok ? (out.value as { v: object }).v : {};
    expect(Object.hasOwn(v, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("args going out with __proto__ keys reach the tool as data; the sandbox's own pollution stays inside", async () => {
    const host = toolHost();
    const out = await contained(
      `await servers.a.echo(JSON.parse('{"__proto__": {"polluted": "json"}}'));
await servers.a.echo({ ["__proto__"]: { polluted: "computed" } });
Object.prototype.polluted = "sandbox";
Object.prototype.toString = () => "hijacked";
return await servers.a.echo({});`,
      host,
    );
    expect(out).toMatchObject({ ok: true, value: {} });
    expect(out.ok && Object.keys(out.value as object)).toEqual([]);
    for (const { args } of host.calls.slice(0, 2)) {
      expect(Object.hasOwn(args as object, "__proto__")).toBe(true);
      expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.toString.call([])).toBe("[object Array]");
  });
});

describe("another caller's tools", () => {
  it("are not in the script's servers, by any name trick", async () => {
    const host = toolHost();
    const aliceSees = { servers: { secret: ["read_all"] }, call: host.call };
    // Alice's script runs first; Bob's may well get the same worker.
    expect(await sandbox.run("return Object.keys(servers);", aliceSees)).toMatchObject({
      value: ["secret"],
    });
    const bob = { servers: { "other-server": ["echo"] }, call: host.call };
    const out = await sandbox.run(
      `"use strict";
const attempts = {};
const tryIt = (name, f) => { try { attempts[name] = f(); } catch (e) { attempts[name] = e.name; } };
tryIt("dot", () => typeof servers.secret);
tryIt("bracket", () => typeof servers["secret"]);
tryIt("in", () => "secret" in servers);
tryIt("keys", () => Reflect.ownKeys(servers));
tryIt("proto", () => servers.__proto__ === undefined && servers["__proto__"] === undefined);
tryIt("ctor", () => typeof servers.constructor);
tryIt("toolProto", () => typeof servers["other-server"].hasOwnProperty);
tryIt("define", () => Object.defineProperty(servers, "secret", { value: {} }));
tryIt("assign", () => { globalThis.servers = { secret: {} }; });
tryIt("getter", () => typeof Object.getOwnPropertyDescriptor(servers, "other-server").get);
tryIt("call", () => servers.secret.read_all());
return attempts;`,
      bob,
    );
    expect(out).toMatchObject({
      ok: true,
      value: {
        dot: "undefined",
        bracket: "undefined",
        in: false,
        keys: ["other-server"],
        proto: true,
        ctor: "undefined",
        toolProto: "undefined",
        define: "TypeError",
        assign: "TypeError",
        getter: "undefined",
        call: "TypeError",
      },
    });
    expect(host.calls).toEqual([]);
  });
});
