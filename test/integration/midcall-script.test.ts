/**
 * Code mode and mid-call requests, through the built `mcpx` over stdio with the real sandbox:
 * each inner call of a script goes through `confirm` (the script's client is asked; a client
 * without elicitation makes the inner call fail with the clear error, which the script sees
 * thrown), and what an upstream asks during an inner call (elicitation from server-everything,
 * sampling through a modern upstream's input_required) reaches the script's client. Both eras.
 */
import { afterEach, describe, expect, it } from "vitest";
import { askingClient, type Ability, type Asked } from "../helpers/asking.js";
import {
  ERAS,
  eventually,
  fixtureServer,
  npmServer,
  startStdio,
  text,
  writeConfig,
  type Era,
  type Running,
} from "../helpers/proxy.js";

const file = writeConfig({
  mcpServers: {
    everything: npmServer("@modelcontextprotocol/server-everything"),
    modern: fixtureServer("modern.mjs"),
  },
  profiles: { default: { servers: ["*"], confirm: ["modern.drop"] } },
  // Scripts' values as they returned them.
  compression: { results: "off" },
});

let running: Running | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A client of `era` that answers every elicitation with `action` (none: no elicitation). */
async function start(
  era: Era,
  name: string,
  action?: "accept" | "decline",
): Promise<{ script: (source: string) => Promise<string>; asked: Asked[]; stderr: () => string }> {
  const abilities: Ability[] = action ? ["elicitation", "sampling"] : [];
  const { client, asked } = askingClient(era, name, {
    abilities,
    elicit: (params) =>
      action !== "accept"
        ? { action: action ?? "cancel" }
        : String(params.message).startsWith("Please provide inputs")
          ? { action, content: { name, check: true, email: "a@example.com", integer: 7 } }
          : { action },
  });
  const started = await startStdio(file, [], { era, client });
  running = started;
  const script = async (source: string) => {
    const result = await client.callTool(
      { name: "call", arguments: { script: source } },
      { timeout: 60_000 },
    );
    expect(result.isError, text(result)).toBeFalsy();
    return text(result);
  };
  return { script, asked, stderr: () => started.stderr() };
}

const CATCHING = (call: string) =>
  `try { return await ${call}; } catch (e) { return "thrown: " + e.message; }`;

/** Waits until mcpx's stderr holds `line`: it may arrive after the answer on stdout. */
function logged(stderr: () => string, line: string | RegExp): Promise<void> {
  const has = () => (typeof line === "string" ? stderr().includes(line) : line.test(stderr()));
  return eventually(has, 10_000, `the log line ${String(line)}`);
}

describe.each(ERAS)("a script of a %s client", (era) => {
  it("asks the script's client before an inner call of a confirmed tool, and runs it on accept", async () => {
    const name = `scripter-${era}`;
    const { script, asked, stderr } = await start(era, name, "accept");
    const value = await script(`return await servers.modern.drop({ id: "7" });`);
    expect(value).toContain("dropped 7");
    const questions = asked.filter((a) => a.method === "elicitation/create");
    expect(questions.map((q) => q.params.message)).toEqual(['modern.drop with {"id":"7"}: allow?']);
    await logged(stderr, `confirm modern.drop by ${name}: accepted`);
  });

  it("throws in the script when the person declines, and the tool does not run", async () => {
    const name = `decliner-${era}`;
    const { script, stderr } = await start(era, name, "decline");
    const value = await script(CATCHING(`servers.modern.drop({ id: "8" })`));
    expect(value).toContain("thrown: The person declined modern.drop; it was not run.");
    await logged(stderr, `confirm modern.drop by ${name}: declined`);
  });

  it("throws the clear confirmation error in the script of a client without elicitation", async () => {
    const name = `bare-${era}`;
    const { script, asked, stderr } = await start(era, name);
    const value = await script(CATCHING(`servers.modern.drop({ id: "9" })`));
    expect(value).toContain("thrown: ");
    expect(value).toContain("modern.drop needs a person's confirmation");
    expect(value).toContain("remove");
    expect(asked).toEqual([]);
    await logged(stderr, `confirm modern.drop by ${name}: unsupported`);
  });

  it("relays an upstream's elicitation and sampling during inner calls to the script's client", async () => {
    const name = `relayed-${era}`;
    const { script, asked } = await start(era, name, "accept");
    const value = await script(
      `const form = await servers.everything["trigger-elicitation-request"]({});
       const sampled = await servers.modern.ask({ kind: "sample" });
       return { form, sampled };`,
    );
    expect(value).toContain(`Name: ${name}`);
    expect(value).toContain(`sampled by ${name}`);
    expect(asked.map((a) => a.method)).toEqual(["elicitation/create", "sampling/createMessage"]);
  });
});
