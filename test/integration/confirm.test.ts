/**
 * `confirm`: a profile's dangerous tools ask the person (through the client's elicitation)
 * before each call, through the built `mcpx` over stdio, for clients of both eras: accepted runs
 * the tool, declined does not, a client without elicitation gets a clear isError saying how to
 * allow the tool; every decision is logged, never the arguments.
 */
import { afterEach, describe, expect, it } from "vitest";
import { askingClient, callTool } from "../helpers/asking.js";
import {
  ERAS,
  eventually,
  fixtureServer,
  npmServer,
  startStdio,
  text,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";

const SECRET = "tok-5f1c0ffee9d";
const file = writeConfig({
  mcpServers: {
    // The env value is a secret: it must never show, even in a confirmation question.
    everything: { ...npmServer("@modelcontextprotocol/server-everything"), env: { TOKEN: SECRET } },
    modern: fixtureServer("modern.mjs"),
  },
  profiles: { default: { servers: ["*"], confirm: ["destructive", "everything.echo"] } },
});

let running: Running | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(era: "legacy" | "modern", answer?: "accept" | "decline" | "cancel") {
  const name = `person-${era}`;
  const { client, asked } = askingClient(era, name, {
    abilities: answer ? ["elicitation"] : [],
    elicit: () => ({ action: answer ?? "cancel" }),
  });
  const started = await startStdio(file, [], { era, client });
  running = started;
  return { client, asked, name, stderr: () => started.stderr() };
}

/** Waits until mcpx's stderr holds `line`: it may arrive after the answer on stdout. */
function logged(stderr: () => string, line: string | RegExp): Promise<void> {
  const has = () => (typeof line === "string" ? stderr().includes(line) : line.test(stderr()));
  return eventually(has, 10_000, `the log line ${String(line)}`);
}

describe.each(ERAS)("a %s client", (era) => {
  it("runs a confirmed tool once the person accepts, after asking with the call", async () => {
    const { client, asked, name, stderr } = await start(era, "accept");
    const result = await callTool(client, "everything.echo", { message: "hi" });
    expect(text(result)).toBe("Echo: hi");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.params.message).toBe('everything.echo with {"message":"hi"}: allow?');
    await logged(stderr, `confirm everything.echo by ${name}: accepted`);
    // Not under confirm: runs without a question.
    expect(text(await callTool(client, "modern.echo", { message: "x" }))).toBe("x (modern)");
    expect(asked).toHaveLength(1);
  });

  it.each(["decline", "cancel"] as const)(
    "does not run it when the person answers %s",
    async (answer) => {
      const { client, name, stderr } = await start(era, answer);
      const result = await callTool(client, "modern.drop", { id: "42" });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(
        /^The person (declined|dismissed the confirmation of) modern\.drop; it was not run\.$/,
      );
      const decision = answer === "decline" ? "declined" : "cancelled";
      await logged(stderr, `confirm modern.drop by ${name}: ${decision}`);
      await logged(stderr, /call modern\.drop by [^:]+: declined/);
    },
  );

  it("tells a client without elicitation that the tool needs confirmation and how to allow it", async () => {
    const { client, asked, stderr, name } = await start(era);
    const result = await callTool(client, "modern.drop", { id: "42" });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("modern.drop needs a person's confirmation");
    expect(text(result)).toContain(
      'To allow it without asking, remove "destructive" from profiles.default.confirm in the mcpx config.',
    );
    expect(asked).toEqual([]);
    await logged(stderr, `confirm modern.drop by ${name}: unsupported`);
  });
});

describe("the question", () => {
  it("redacts config secrets, cuts long arguments, and no argument reaches the log", async () => {
    const { client, asked, stderr } = await start("legacy", "accept");
    await callTool(client, "everything.echo", { message: `${SECRET} ${"x".repeat(500)}` });
    const question = String(asked[0]!.params.message);
    expect(question).not.toContain(SECRET);
    expect(question).toContain("***");
    expect(question.length).toBeLessThan(400);
    expect(question).toMatch(/…: allow\?$/);
    // Once the call's own line is in, every line it caused is.
    await logged(stderr, /call everything\.echo by [^:]+: ok/);
    expect(stderr()).not.toContain("xxxxxxxxxx");
  });
});
