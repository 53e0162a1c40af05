/**
 * Code mode's sandbox, end to end through real worker threads and the real QuickJS engine:
 * the servers API, console, values, TypeScript, errors at the script's own position, a fresh
 * context per script, cancellation and shutdown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { quietLogger } from "../helpers/inmemory.js";
import { lateReadies } from "../helpers/late-ready.js";
import { SERVERS, threadCount, toolHost } from "../helpers/sandbox.js";

let sandbox: Sandbox;
beforeAll(() => {
  sandbox = createSandbox({ maxWorkers: 2 });
});
afterAll(() => sandbox.close());

describe("the servers API", () => {
  it("calls a tool and resolves to its value; only the final value comes back", async () => {
    const host = toolHost();
    const out = await sandbox.run(
      "const r = await servers.a.echo({ n: 2 });\nreturn { doubled: r.n * 2 };",
      host.options(),
    );
    expect(out).toEqual({ ok: true, value: { doubled: 4 }, logs: [], calls: 1 });
    expect(host.calls).toEqual([{ server: "a", tool: "echo", args: { n: 2 } }]);
  });

  it("reaches dashed names with brackets, on servers and tools alike", async () => {
    const host = toolHost();
    const out = await sandbox.run(
      'const items = await servers.a["list-items"]();\nconst e = await servers["other-server"].echo({ x: 1 });\nreturn [items, e];',
      host.options(),
    );
    expect(out).toMatchObject({ ok: true, value: [[1, 2, 3], { x: 1 }], calls: 2 });
    // No args means {}.
    expect(host.calls[0]).toEqual({ server: "a", tool: "list-items", args: {} });
  });

  it("lets the script catch a failed call: a ToolCallError carrying the tool's error text", async () => {
    const out = await sandbox.run(
      `try {
  await servers.a.fail({ why: "nope" });
} catch (e) {
  return { name: e.name, message: e.message, server: e.server, tool: e.tool, isError: e instanceof Error };
}`,
      toolHost().options(),
    );
    expect(out).toMatchObject({
      ok: true,
      value: {
        name: "ToolCallError",
        message: 'the tool failed: {"why":"nope"}',
        server: "a",
        tool: "fail",
        isError: true,
      },
    });
  });

  it("answers a rejection of the host's call to the script like a failed call", async () => {
    const out = await sandbox.run(
      "try { await servers.a.throws(); } catch (e) { return e.message; }",
      toolHost().options(),
    );
    expect(out).toMatchObject({ ok: true, value: "the host's call rejected" });
  });

  it("runs inner calls concurrently with Promise.all", async () => {
    const host = toolHost();
    host.barrier(2); // each call answers only once both are in flight
    const out = await sandbox.run(
      "return await Promise.all([servers.a.barrier(), servers.a.barrier()]);",
      host.options(),
    );
    expect(out).toMatchObject({ ok: true, value: ["together", "together"], calls: 2 });
  });

  it("collects console output with the value", async () => {
    const out = await sandbox.run(
      `console.log("hello", 1, { a: [1] });
console.info("info");
console.warn("careful");
console.error(new TypeError("bad"));
return "done";`,
      toolHost().options(),
    );
    expect(out).toEqual({
      ok: true,
      value: "done",
      logs: ['hello 1 {"a":[1]}', "info", "[warn] careful", "[error] TypeError: bad"],
      calls: 0,
    });
  });

  it("answers undefined for a script that returns nothing, and plain data otherwise", async () => {
    const host = toolHost();
    expect(await sandbox.run("const x = 1;", host.options())).toMatchObject({
      ok: true,
      value: undefined,
    });
    expect(
      await sandbox.run(
        "return { d: new Date(0), n: null, u: undefined, f() {} };",
        host.options(),
      ),
    ).toMatchObject({ ok: true, value: { d: "1970-01-01T00:00:00.000Z", n: null } });
  });

  it("runs TypeScript: types are stripped, positions stay the script's own", async () => {
    const out = await sandbox.run(
      `interface Item { n: number }
const r: Item = (await servers.a.echo({ n: 5 })) as Item;
function twice<T extends number>(x: T): number { return x * 2; }
const value = r!.n satisfies number;
return twice(value);`,
      toolHost().options(),
    );
    expect(out).toMatchObject({ ok: true, value: 10 });
    const failed = await sandbox.run(
      "type T = { a: string };\nconst t: T = { a: 'x' };\nnull.boom;",
      toolHost().options(),
    );
    expect(failed).toMatchObject({ ok: false, error: { kind: "runtime", line: 3, column: 5 } });
  });
});

describe("errors name the script's own line and column, and what to do next", () => {
  it("a syntax error", async () => {
    const out = await sandbox.run("const a = 1;\nlet b = ;", toolHost().options());
    expect(out).toMatchObject({ ok: false, error: { kind: "syntax", line: 2, column: 9 } });
    expect(!out.ok && out.error.message).toMatch(
      /^SyntaxError at line 2, column 9: .+ async function/,
    );
  });

  it("TypeScript the stripper cannot remove (an enum), with the reason", async () => {
    const out = await sandbox.run("const x = 1;\nenum E { A }\nreturn E.A;", toolHost().options());
    expect(out).toMatchObject({ ok: false, error: { kind: "syntax", line: 2, column: 1 } });
    expect(!out.ok && out.error.message).toMatch(/enum.*no enum, namespace/s);
  });

  it("a runtime error", async () => {
    const out = await sandbox.run("const a = {};\n\n  a.b.c = 1;", toolHost().options());
    expect(out).toMatchObject({ ok: false, error: { kind: "runtime", line: 3, column: 6 } });
    expect(!out.ok && out.error.message).toBe(
      "TypeError at line 3, column 6: cannot set property 'c' of undefined. Fix the script there, or catch the error with try/catch.",
    );
  });

  it("an uncaught failed call names the call, the tool's text and the next step", async () => {
    const out = await sandbox.run(
      'const ok = await servers.a.echo({});\nconst r = await servers.a["fail"]({ id: 7 });',
      toolHost().options(),
    );
    expect(out).toMatchObject({
      ok: false,
      error: { kind: "runtime", line: 2, call: { server: "a", tool: "fail" } },
      calls: 2,
    });
    expect(!out.ok && out.error.message).toMatch(
      /^servers\.a\.fail failed at line 2, column \d+: the tool failed: \{"id":7\}\nCheck its arguments against describe\("a\.fail"\), or catch the failure/,
    );
  });

  it("a thrown non-Error, a value JSON cannot encode, and bad call arguments", async () => {
    const host = toolHost();
    const thrown = await sandbox.run("throw { code: 1 };", host.options());
    expect(!thrown.ok && thrown.error.message).toMatch(/threw \{"code":1\}, which is not an Error/);
    const cyclic = await sandbox.run("const a = {}; a.self = a; return a;", host.options());
    expect(!cyclic.ok && cyclic.error.message).toMatch(/cannot be encoded as JSON.*plain data/);
    const big = await sandbox.run("return 10n;", host.options());
    expect(big).toMatchObject({ ok: false, error: { kind: "runtime" } });
    const args = await sandbox.run(
      "const a = {}; a.a = a;\nawait servers.a.echo(a);",
      host.options(),
    );
    expect(args).toMatchObject({ ok: false, error: { kind: "runtime", line: 2 } });
    expect(!args.ok && args.error.message).toMatch(
      /servers\.a\.echo\(args\): args must be JSON data/,
    );
    expect(host.calls).toEqual([]);
  });
});

describe("isolation between scripts", () => {
  it("gives every script a fresh context: nothing one sets survives into the next", async () => {
    const one = createSandbox({ maxWorkers: 1 }); // the same worker runs both scripts
    try {
      const host = toolHost();
      const first = await one.run(
        "globalThis.leak = 42; Object.prototype.polluted = 1; Array.prototype.push = null; return 1;",
        host.options(),
      );
      expect(first).toMatchObject({ ok: true });
      const second = await one.run(
        "return [typeof leak, ({}).polluted, typeof [].push];",
        host.options(),
      );
      expect(second).toMatchObject({ ok: true, value: ["undefined", null, "function"] });
    } finally {
      await one.close();
    }
  });
});

describe("one worker, many scripts", () => {
  it("serves the next script after one that exhausted memory or stack, and after hundreds", async () => {
    const one = createSandbox({ maxWorkers: 1 });
    try {
      const host = toolHost();
      const bomb = await one.run(
        "const a = [];\nwhile (true) a.push([a]);",
        host.options({
          limits: { memoryBytes: 4 * 1024 * 1024 },
        }),
      );
      expect(bomb).toMatchObject({ ok: false, error: { limit: "memoryBytes" } });
      const deep = await one.run("const f = () => f();\nf();", host.options());
      expect(deep).toMatchObject({ ok: false, error: { limit: "stackBytes" } });
      // Past the number of scripts after which a worker renews its QuickJS instance.
      for (let i = 0; i < 300; i++) {
        const out = await one.run(
          `const prior = globalThis.seen ?? 0;\nglobalThis.seen = 1;\nreturn ${i} + prior;`,
          host.options(),
        );
        expect(out).toMatchObject({ ok: true, value: i });
      }
      expect(one.stats().workers).toBe(1);
    } finally {
      await one.close();
    }
  });
});

describe("cancellation", () => {
  it("stops a script waiting on a call and cancels that call", async () => {
    const host = toolHost();
    const controller = new AbortController();
    const run = sandbox.run("await servers.a.hang();", host.options({ signal: controller.signal }));
    await host.hanging;
    controller.abort();
    const out = await run;
    expect(out).toMatchObject({ ok: false, error: { kind: "cancelled" } });
    expect(!out.ok && out.error.message).toMatch(/cancelled by its caller/);
    await expect.poll(() => host.aborted).toEqual(["hang"]);
  });

  it("stops a script busy in a loop, and its worker takes the next script", async () => {
    const one = createSandbox({ maxWorkers: 1 });
    try {
      const host = toolHost();
      const controller = new AbortController();
      const run = one.run(
        "await servers.a.started();\nwhile (true) {}",
        host.options({ signal: controller.signal }),
      );
      await host.started;
      controller.abort();
      expect(await run).toMatchObject({ ok: false, error: { kind: "cancelled" } });
      expect(await one.run("return 'next';", host.options())).toMatchObject({ value: "next" });
      expect(one.stats().workers).toBe(1); // stopped by its interrupt handler, not terminated
    } finally {
      await one.close();
    }
  });

  it("drops a script still waiting for a worker without running it", async () => {
    const one = createSandbox({ maxWorkers: 1 });
    try {
      const host = toolHost();
      const busy = one.run("await servers.a.hang();", host.options());
      await host.hanging;
      const controller = new AbortController();
      const queued = one.run(
        "await servers.a.echo({ ran: true });",
        host.options({ signal: controller.signal }),
      );
      expect(one.stats()).toMatchObject({ busy: 1, queued: 1 });
      controller.abort();
      expect(await queued).toMatchObject({ ok: false, error: { kind: "cancelled" } });
      expect(host.calls.map((c) => c.tool)).toEqual(["hang"]);
      await one.close();
      expect(await busy).toMatchObject({ ok: false, error: { kind: "cancelled" } });
    } finally {
      await one.close();
    }
  });
});

describe("start", () => {
  it("replaces a worker that does not start within startMs; after two misses in a row the script fails saying so", async () => {
    const logs: string[] = [];
    // No engine loads in 1 ms: every worker misses its start.
    const slow = createSandbox({ maxWorkers: 1, startMs: 1, logger: quietLogger(logs) });
    try {
      const out = await slow.run("return 1;", toolHost().options());
      expect(out).toMatchObject({
        ok: false,
        error: {
          kind: "internal",
          message:
            "The script did not run: no sandbox worker thread started within 1 ms, twice in a row (the machine may be overloaded). Running it again may work.",
        },
      });
      const warned = logs.filter((l) => l.includes("did not start within 1 ms"));
      expect(warned).toHaveLength(2);
      expect(warned[0]).toContain("starting another");
      expect(warned[1]).toContain("failing the script that waits for it");
      expect(slow.stats()).toEqual({ workers: 0, busy: 0, queued: 0 });
    } finally {
      await slow.close();
    }
  });

  it("a worker heard from after it was ended for a missed start does not count as started", async () => {
    const late = lateReadies();
    const pool = createSandbox({ maxWorkers: 1, startMs: 200, logger: late.logger });
    try {
      const out = await late.begin(() => pool.run("return 1;", toolHost().options()));
      // Both workers missed their start; the first one's late "ready" did not make the second
      // miss a first one again (which would start a third, and run the script).
      expect(await out.value).toMatchObject({
        ok: false,
        error: { message: expect.stringContaining("twice in a row") as unknown },
      });
      expect(late.logs.filter((l) => l.includes("did not start within 200 ms"))).toHaveLength(2);
    } finally {
      await pool.close();
    }
  });
});

describe("close", () => {
  it("ends idle workers after idleMs, keeping one warm", async () => {
    const pool = createSandbox({ maxWorkers: 2, idleMs: 50 });
    try {
      const host = toolHost();
      host.barrier(2);
      const both = [1, 2].map(() => pool.run("return servers.a.barrier();", host.options()));
      expect((await Promise.all(both)).every((o) => o.ok)).toBe(true);
      expect(pool.stats().workers).toBe(2);
      await expect.poll(() => pool.stats().workers, { timeout: 5_000 }).toBe(1);
      expect(await pool.run("return 'warm';", host.options())).toMatchObject({ value: "warm" });
    } finally {
      await pool.close();
    }
  });

  it("cancels running scripts, ends every worker thread, and refuses new scripts", async () => {
    const before = threadCount();
    const pool = createSandbox({ maxWorkers: 3 });
    const host = toolHost();
    host.barrier(3);
    const done = await Promise.all(
      [1, 2, 3].map(() => pool.run("return await servers.a.barrier();", host.options())),
    );
    expect(done.every((o) => o.ok)).toBe(true);
    expect(pool.stats().workers).toBe(3);
    const running = pool.run("await servers.a.hang();", host.options());
    await host.hanging;

    await pool.close();
    const out = await running;
    expect(out).toMatchObject({ ok: false, error: { kind: "cancelled" } });
    expect(!out.ok && out.error.message).toMatch(/shutting down its sandbox/);
    expect(pool.stats()).toEqual({ workers: 0, busy: 0, queued: 0 });
    // At most as many as before: the file's shared sandbox may end an idle worker meanwhile (its
    // idleMs is 30 s, which a slow run of this file passes), never this pool's three.
    if (before !== undefined) await expect.poll(threadCount).toBeLessThanOrEqual(before);
    expect(await pool.run("return 1;", host.options())).toMatchObject({
      ok: false,
      error: { kind: "cancelled" },
    });
  });
});

it("SERVERS in the helper is what scripts see (guards the other tests' assumptions)", async () => {
  const out = await sandbox.run(
    "return Object.fromEntries(Object.keys(servers).map((s) => [s, Object.keys(servers[s])]));",
    toolHost().options(),
  );
  expect(out).toMatchObject({ ok: true, value: SERVERS });
});
