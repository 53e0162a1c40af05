/**
 * Code mode through `call({ script })`: a whole proxy over in-memory SDK upstreams, SDK clients
 * in front. Every inner call is a real call: the caller's profile, validation, logging,
 * cancellation; the script's value is shaped like any result.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  ISSUES,
  SCREENSHOT,
  codeModeProxy,
  runScript,
  type CodeModeProxy,
} from "../helpers/codemode.js";
import { text } from "../helpers/proxy.js";

let setup: CodeModeProxy | undefined;
afterEach(async ({ task }) => {
  // A test that failed (or timed out) shows what the proxy logged: where a call stopped.
  if (task.result?.state === "fail") console.error(setup?.logs.slice(-80).join("\n"));
  await setup?.close();
  setup = undefined;
});

async function start(extra: Record<string, unknown> = {}): Promise<CodeModeProxy> {
  setup = await codeModeProxy(extra);
  return setup;
}

describe("call({ script })", () => {
  it("runs several calls in one round trip and answers only the script's value and its console lines", async () => {
    const { client, seen } = await start();
    const c = await client();
    const out = await runScript(
      c,
      `const open = await servers.github.list_issues({ state: "open" });
const bugs = open.filter((i) => i.labels.some((l) => l.name === "bug"));
console.log("bugs:", bugs.length);
const read = await Promise.all(bugs.slice(0, 2).map((i) => servers.github.get_issue({ number: i.number })));
return read.map((r) => r.title + " by " + r.author);`,
    );
    const bugs = ISSUES.filter((i) => i.state === "open" && i.labels.length > 0).slice(0, 2);
    expect(out.isError).toBe(false);
    expect(JSON.parse(out.texts[0]!)).toEqual(bugs.map((i) => `${i.title} by ${i.user.login}`));
    expect(out.texts[1]).toBe("console:\nbugs: 4");
    expect(out.meta["mcpx/script"]).toEqual({ calls: 3 });
    expect(seen.calls).toEqual(["github.list_issues", "github.get_issue", "github.get_issue"]);
  });

  it("gives the script structured content, else the JSON text parsed, else { text, content }", async () => {
    const { client } = await start();
    const out = await runScript(
      await client(),
      `const structured = await servers.github.get_issue({ number: 2 });
const parsed = await servers.github.list_issues({ state: "closed" });
const plain = await servers.github["get-me"]();
return { structured, closed: parsed.length, plain };`,
    );
    expect(JSON.parse(out.texts[0]!)).toEqual({
      structured: { number: 2, title: "Issue 2", author: "user1" },
      closed: ISSUES.filter((i) => i.state === "closed").length,
      plain: { text: "octocat", content: [{ type: "text", text: "octocat" }] },
    });
  });

  it("answers an inner call's image as an image block, never as base64 text", async () => {
    const { client } = await start();
    const c = await client();
    const whole = await runScript(c, `return await servers.github.screenshot({});`);
    expect(whole.isError).toBe(false);
    expect(whole.content.filter((b) => b.type === "image")).toEqual([
      { type: "image", data: SCREENSHOT, mimeType: "image/png" },
    ]);
    expect(whole.content.filter((b) => b.type === "resource_link")).toEqual([
      { type: "resource_link", uri: "file:///tmp/page.png", name: "page.png" },
    ]);
    // The text says where the image was; the base64 is not in it.
    expect(whole.text).not.toContain(SCREENSHOT.slice(0, 100));
    expect(whole.texts.join("").length).toBeLessThan(1_000);
    expect(whole.texts[0]).toContain('"media":"mcpx-media:1"');

    const only = await runScript(
      c,
      `const shot = await servers.github.screenshot({});
return shot.content.find((b) => b.type === "image");`,
    );
    expect(only.content).toEqual([{ type: "image", data: SCREENSHOT, mimeType: "image/png" }]);
  });

  it("hands the script a stand-in for an image, and sends a block the script builds as its kind", async () => {
    const { client } = await start();
    const c = await client();
    const seen = await runScript(
      c,
      `const [, image] = (await servers.github.screenshot({})).content;
return { keys: Object.keys(image).sort(), mimeType: image.mimeType };`,
    );
    expect(JSON.parse(seen.texts[0]!)).toEqual({
      keys: ["media", "mimeType", "type"],
      mimeType: "image/png",
    });
    const built = await runScript(
      c,
      `return { note: "recorded", clip: { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" } };`,
    );
    expect(built.content).toEqual([
      {
        type: "text",
        text: JSON.stringify({
          note: "recorded",
          clip: { type: "audio", mimeType: "audio/wav", media: "content block 1" },
        }),
      },
      { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" },
    ]);
  });

  it("runs TypeScript, its types stripped", async () => {
    const { client } = await start();
    const out = await runScript(
      await client(),
      `interface Issue { number: number; state: string }
const all: Issue[] = await servers.github.list_issues({});
return all.filter((i: Issue) => i.state === "closed").length as number;`,
    );
    expect(out).toMatchObject({ isError: false, texts: ["4"] });
  });

  it("a failed inner call throws the tool's isError text; argument errors read exactly as call's", async () => {
    const { client } = await start();
    const c = await client();
    const direct = text(
      await c.callTool({
        name: "call",
        arguments: { method: "github.get_issue", arguments: { number: "two" } },
      }),
    );
    const out = await runScript(
      c,
      `const messages = [];
for (const args of [{ number: "two" }, { number: 99 }]) {
  try { await servers.github.get_issue(args); } catch (e) { messages.push(e.message); }
}
return messages;`,
    );
    expect(JSON.parse(out.texts[0]!)).toEqual([direct, "No issue 99."]);
    expect(direct).toContain("Invalid arguments for github.get_issue");
  });

  it("an uncaught failure names the script's line and column, the inner call, and what to do", async () => {
    const { client } = await start();
    const out = await runScript(
      await client(),
      `const a = 1;\nconsole.log("before");\n  await servers.github.get_issue({ number: 99 });`,
    );
    expect(out.isError).toBe(true);
    expect(out.texts[0]).toBe(
      'servers.github.get_issue failed at line 3, column 33: No issue 99.\nCheck its arguments against describe("github.get_issue"), or catch the failure (try/catch) to handle it in the script.',
    );
    expect(out.texts[1]).toBe("console:\nbefore");
  });

  it("refuses script with method or arguments, and a script that is not text, saying why", async () => {
    const { client, seen } = await start();
    const c = await client();
    const both = await runScript(c, "return 1", { method: "github.get-me" });
    expect(both.isError).toBe(true);
    expect(both.text).toBe(
      'call({ script }) takes only script and select; remove "method". Give either method (one tool) or script (several calls in one), not both.',
    );
    const args = await runScript(c, "return 1", { arguments: { a: 1 } });
    expect(args.text).toContain('remove "arguments". A script writes each call\'s arguments');
    // Keys filled in only because the schema lists them are no conflict.
    const blank = await runScript(c, "return 1", { method: "", arguments: {} });
    expect(blank).toMatchObject({ isError: false, texts: ["1"] });
    const notText = await c.callTool({ name: "call", arguments: { script: 42 } });
    expect(notText.isError).toBe(true);
    expect(text(notText)).toMatch(/^"script" must be the script's text/);
    expect(seen.calls).toEqual([]);
  });

  it("logs each inner call with its caller and the script's id as parent", async () => {
    const { client, logs } = await start();
    await runScript(await client("bot"), `await servers.github["get-me"](); return 1;`);
    const fields = (l: string) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>;
    const script = logs.find((l) => / INFO script \S+ by bot: ok /.test(l));
    const inner = logs.find((l) => l.includes("call github.get-me by bot: ok"));
    expect(script && inner).toBeTruthy();
    expect(fields(script!)).toMatchObject({ caller: "bot", tool: "(script)", calls: 1 });
    expect(fields(inner!)).toMatchObject({
      caller: "bot",
      tool: "get-me",
      parent: fields(script!).callId,
    });
  });
});

describe("the script's value is a result like any other", () => {
  it("is cut to the top-level budget with a handle that pages the rest", async () => {
    const { client } = await start({ resultBudget: 500 });
    const c = await client();
    const out = await runScript(
      c,
      `return Array.from({ length: 400 }, (_, i) => ({ id: i, name: "row " + i }));`,
    );
    expect(out.isError).toBe(false);
    const uri = /mcpx:\/\/results\/[\w-]+/.exec(out.texts[0]!)?.[0];
    expect(out.texts[0]).toMatch(/^Result cut to fit the 500-token budget/);
    const page = await c.callTool({ name: "resources", arguments: { uri, offset: 390 } });
    expect(text(page)).toContain("row 399");
    // Only the caller whose script made the handle reads it.
    const other = await (await client("bot")).callTool({ name: "resources", arguments: { uri } });
    expect(other.isError).toBe(true);
  });

  it("inner calls are not cut: the script sees whole values, however small the budget", async () => {
    const { client } = await start({ resultBudget: 100 });
    const c = await client();
    const direct = await c.callTool({
      name: "call",
      arguments: { method: "github.list_issues", arguments: {} },
    });
    expect(text(direct)).toMatch(/^Result cut to fit the 100-token budget/);
    const out = await runScript(c, `return (await servers.github.list_issues({})).length;`);
    expect(out.texts).toEqual([String(ISSUES.length)]);
  });

  it("select applies to the value", async () => {
    const { client } = await start();
    const out = await runScript(await client(), `return await servers.github.list_issues({});`, {
      select: "[?state=='closed'].number",
    });
    expect(JSON.parse(out.texts[0]!)).toEqual(
      ISSUES.filter((i) => i.state === "closed").map((i) => i.number),
    );
  });
});

describe("limits and settings per profile", () => {
  it("a script past its profile's call limit is stopped, naming the limit and its setting", async () => {
    const { client, seen } = await start();
    const out = await runScript(
      await client("tight"),
      `for (let i = 0; i < 5; i++) await servers.github["get-me"]();`,
    );
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(
      /^Script stopped: it made more than 2 inner calls \(profiles\.tight\.codeMode\.calls\)\. .*raise profiles\.tight\.codeMode\.calls\. It was stopped at line 1/,
    );
    expect(seen.calls).toEqual(["github.get-me", "github.get-me"]);
  });

  it("a profile without code mode sees no script or api, and a script is refused", async () => {
    const { client, seen } = await start();
    const c = await client("nocode");
    const { tools } = await c.listTools();
    const call = tools.find((t) => t.name === "call")!;
    const describeTool = tools.find((t) => t.name === "describe")!;
    expect(Object.keys(call.inputSchema.properties ?? {})).toEqual([
      "method",
      "arguments",
      "select",
    ]);
    expect(call.description).not.toContain("script");
    expect(Object.keys(describeTool.inputSchema.properties ?? {})).not.toContain("api");
    const out = await runScript(c, `return await servers.github["get-me"]();`);
    expect(out).toMatchObject({ isError: true });
    expect(out.text).toMatch(/^Code mode is off for this caller \(profiles\.nocode\.codeMode/);
    const api = await c.callTool({ name: "describe", arguments: { method: "github", api: true } });
    expect(api.isError).toBe(true);
    expect(seen.calls).toEqual([]);
    // Others keep it.
    const other = (await (await client()).listTools()).tools.find((t) => t.name === "call")!;
    expect(Object.keys(other.inputSchema.properties ?? {})).toContain("script");
  });
});

describe("cancellation and shutdown", () => {
  it("cancelling the outer call cancels the script and its inner call upstream", async () => {
    const { client, seen, logs } = await start();
    const stop = new AbortController();
    const running = runScript(
      await client(),
      `await servers.github.wait(); return "never";`,
      {},
      {
        signal: stop.signal,
      },
    );
    await seen.waiting.promise;
    stop.abort("user pressed stop");
    await expect(running).rejects.toThrow();
    await expect.poll(() => seen.aborted, { timeout: 5_000, interval: 10 }).toBe(1);
    await expect
      .poll(() => logs.some((l) => / script \S+ by test-client: cancelled /.test(l)), {
        timeout: 5_000,
        interval: 10,
      })
      .toBe(true);
  });

  it("a script accepted before a drain may still make its inner calls during the grace period", async () => {
    const { client, seen, proxy } = await start();
    const running = runScript(
      await client(),
      `const first = await servers.github.gate();\nconst me = await servers.github["get-me"]();\nreturn [first, me.text];`,
    );
    await seen.atGate.promise;
    const drained = proxy.drain(30_000);
    // New calls are refused now; the script's next inner call is not.
    const refused = await (
      await client()
    ).callTool({
      name: "call",
      arguments: { method: "github.get-me" },
    });
    expect(text(refused)).toMatch(/^mcpx is shutting down/);
    seen.gate.resolve();
    const out = await running;
    expect(out).toMatchObject({ isError: false });
    expect(JSON.parse(out.texts[0]!)).toEqual(["through", "octocat"]);
    await drained;
  });
});

describe("describe({ method, api: true })", () => {
  it("declares the servers object a script sees, with argument and result types", async () => {
    const { client } = await start();
    const c = await client("bot");
    const r = await c.callTool({
      name: "describe",
      arguments: { method: ["github", "nope"], api: true },
    });
    const api = text(r);
    expect(r.isError).toBeFalsy();
    expect(api).toContain("declare const servers: {\n  github: {");
    expect(api).toContain("    /** Gets one issue. */\n    get_issue(args: {\n      number: int");
    expect(api).toMatch(
      /\}\): Promise<\{\n\s+number: number\n\s+title: string\n\s+author: string\n\s+\}>;/,
    );
    // No required argument: args may be left out.
    expect(api).toContain('    "get-me"(args?: {}): Promise<unknown>;');
    // The profile hides create_issue and the secret server, and an unknown name is said so.
    expect(api).not.toContain("create_issue");
    expect(api).toContain('Unknown server or tool "nope".');
    const one = text(
      await c.callTool({ name: "describe", arguments: { method: "github.get_issue", api: true } }),
    );
    expect(one).not.toContain("list_issues");
    expect(one).toContain("get_issue(args:");
  });
});
