/**
 * Abuse of code mode end to end, through `call` on a whole proxy: a script that loops or bombs
 * does not stop other clients; a script cannot reach tools its caller's profile hides, nor the
 * host; a script that floods calls is cut off at its limit before the upstream sees more.
 * The sandbox's own escape tests are in sandbox-abuse.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { codeModeProxy, runScript, type CodeModeProxy } from "../helpers/codemode.js";
import { text } from "../helpers/proxy.js";

let setup: CodeModeProxy | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

/** `n` plain calls and one script by the `bot` caller, each checked as it answers. */
async function otherClientWorks(setup: CodeModeProxy, n: number): Promise<void> {
  const bot = await setup.client("bot");
  for (let i = 0; i < n; i++) {
    const r = await bot.callTool({ name: "call", arguments: { method: "github.get-me" } });
    expect(text(r)).toBe("octocat");
  }
  const script = await runScript(bot, `return (await servers.github["get-me"]()).text;`);
  expect(script.texts).toEqual(["octocat"]);
}

describe("a runaway script does not stop anyone else", () => {
  it("while one client's script spins in a loop, another's calls and scripts keep succeeding", async () => {
    setup = await codeModeProxy();
    const stop = new AbortController();
    let settled = false;
    const spinning = runScript(
      await setup.client(),
      `await servers.github.list_issues({});\nfor (;;) {}`,
      {},
      { signal: stop.signal },
    ).finally(() => (settled = true));
    // The loop starts right after this call answers.
    await expect
      .poll(() => setup!.seen.calls.includes("github.list_issues"), { timeout: 10_000 })
      .toBe(true);
    await otherClientWorks(setup, 20);
    expect(settled).toBe(false);
    stop.abort("enough");
    await expect(spinning).rejects.toThrow();
  });

  it("four loops of one client leave a worker for another client's script (issue 24)", async () => {
    setup = await codeModeProxy();
    const stop = new AbortController();
    const c = await setup.client();
    const loops = Array.from({ length: 4 }, () =>
      runScript(
        c,
        `await servers.github.list_issues({});\nfor (;;) {}`,
        {},
        { signal: stop.signal },
      )
        .then(() => "answered")
        .catch(() => "cancelled"),
    );
    let settled = 0;
    for (const l of loops) void l.finally(() => (settled += 1));
    // A loop is running; the others wait in this client's line, not in everyone's.
    await expect
      .poll(() => setup!.seen.calls.includes("github.list_issues"), { timeout: 30_000 })
      .toBe(true);
    const bot = await setup.client("bot");
    const out = await runScript(bot, `return (await servers.github["get-me"]()).text;`);
    expect(out.texts).toEqual(["octocat"]);
    expect(settled).toBe(0);
    stop.abort("enough");
    expect(await Promise.all(loops)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled"]);
  });

  it("a memory bomb is stopped at its profile's memory limit; another client's calls succeed around it", async () => {
    setup = await codeModeProxy();
    const bomb = runScript(
      await setup.client("small"),
      `const keep = [];\nfor (let i = 0; ; i++) keep.push({ i, s: "x".repeat(64) });`,
    );
    await otherClientWorks(setup, 10);
    const out = await bomb;
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(
      /^Script stopped: it ran out of memory: its limit is 16 MiB \(profiles\.small\.codeMode\.memoryBytes\)/,
    );
    await otherClientWorks(setup, 1);
  });

  it("10,000 calls are cut off at the 51st: the upstream sees 50", async () => {
    setup = await codeModeProxy();
    const out = await runScript(
      await setup.client(),
      `for (let i = 0; i < 10000; i++) await servers.github["get-me"]();`,
    );
    expect(out.text).toMatch(/^Script stopped: it made more than 50 inner calls/);
    expect(setup.seen.calls.filter((c) => c === "github.get-me")).toHaveLength(50);
  });
});

describe("a script sees only what its caller may", () => {
  it("another caller's server and a denied tool do not exist in the script, by any name", async () => {
    setup = await codeModeProxy();
    const out = await runScript(
      await setup.client("bot"),
      `const found = {
  hidden: typeof servers.secret,
  bracket: typeof servers["secret"],
  inOperator: "secret" in servers,
  denied: typeof servers.github.create_issue,
  servers: Reflect.ownKeys(servers).map(String),
  tools: Object.getOwnPropertyNames(servers.github).sort(),
  proto: Object.getPrototypeOf(servers),
};
const attempts = [];
for (const attempt of [
  () => { servers.secret = { read_secrets: () => "x" }; },
  () => Object.defineProperty(servers.github, "create_issue", { value: () => "x" }),
  () => servers.secret.read_secrets(),
  () => servers.github.create_issue({ title: "x" }),
]) {
  try { await attempt(); attempts.push("ran"); } catch (e) { attempts.push(e.name); }
}
return { ...found, attempts, after: [typeof servers.secret, typeof servers.github.create_issue] };`,
    );
    expect(JSON.parse(out.texts[0]!)).toEqual({
      hidden: "undefined",
      bracket: "undefined",
      inOperator: false,
      denied: "undefined",
      servers: ["github"],
      tools: ["gate", "get-me", "get_issue", "list_issues", "screenshot", "wait"],
      proto: null,
      // Assigning to the frozen object is ignored (sloppy mode) or throws; it never sticks.
      attempts: [expect.stringMatching(/^(ran|TypeError)$/), "TypeError", "TypeError", "TypeError"],
      after: ["undefined", "undefined"],
    });
    expect(setup.seen.calls).toEqual([]);
    // The default caller, whose profile shows both, reaches them.
    const admin = await runScript(
      await setup.client(),
      `return [(await servers.secret.read_secrets()).text, typeof servers.github.create_issue];`,
    );
    expect(JSON.parse(admin.texts[0]!)).toEqual(["s3cr3t", "function"]);
  });

  it("nothing of the host is reachable: no process, require, fetch, timers or environment", async () => {
    setup = await codeModeProxy();
    const out = await runScript(
      await setup.client(),
      `const F = (async () => {}).constructor;
return [typeof process, typeof require, typeof fetch, typeof setTimeout, typeof globalThis.process,
  await F("return typeof process")(), Function("return typeof require")()];`,
    );
    expect(JSON.parse(out.texts[0]!)).toEqual(Array(7).fill("undefined"));
  });
});
