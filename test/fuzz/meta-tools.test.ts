/**
 * Fuzz (fast-check): the meta-tools' inputs over stdio, to the built mcpx, as raw JSON-RPC lines —
 * method strings of every kind, argument shapes they do not take, huge strings, deep nesting,
 * `__proto__` / `constructor` keys, other tool names. Every request gets its one answer (a result,
 * maybe isError, or a JSON-RPC error other than -32603, mcpx's own bug), none shows a stack trace
 * or an internal path, stdout carries only JSON-RPC, mcpx stays up, and no upstream process
 * outlives it. `npm run fuzz` runs more cases (MCPX_FUZZ_RUNS).
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SeenProcesses } from "../helpers/procfs.js";
import {
  deepRawJson,
  fuzzRuns,
  fuzzTimeout,
  leaksInternals,
  nastyString,
  rawJson,
} from "../helpers/fuzz.js";
import { descendants, fixtureServer, writeConfig } from "../helpers/proxy.js";
import { StdioRpc, type RpcAnswer } from "../helpers/rpc.js";

const RUNS = fuzzRuns(150);
let rpc: StdioRpc;
const seen = new SeenProcesses();

beforeAll(async () => {
  const file = writeConfig({
    mcpServers: {
      fixture: { ...fixtureServer("faulty.mjs"), session: "shared" },
      spare: { ...fixtureServer("faulty.mjs"), session: "isolated" },
    },
  });
  rpc = await StdioRpc.start(file, { args: ["--log-level", "warn"] });
}, 60_000);

afterAll(async () => {
  seen.add(descendants(rpc.pid));
  await rpc?.close();
  expect(await seen.untilGone(15_000)).toEqual([]);
}, 60_000);

const str = (s: string) => JSON.stringify(s);

/** Arguments as JSON text: the shapes each meta-tool takes, filled with the wrong things. */
const argsJson: fc.Arbitrary<string> = fc.oneof(
  nastyString.map((m) => `{"method":${str(m)}}`),
  fc.tuple(nastyString, rawJson).map(([m, a]) => `{"method":${str(m)},"arguments":${a}}`),
  fc
    .tuple(fc.constantFrom("fixture.echo", "spare.echo", "fixture.slow"), rawJson)
    .map(([m, a]) => `{"method":${str(m)},"arguments":${a}}`),
  fc
    .tuple(fc.constantFrom("fixture.echo", "spare.echo"), nastyString, nastyString)
    .map(
      ([m, msg, select]) =>
        `{"method":${str(m)},"arguments":{"message":${str(msg)}},"select":${str(select)}}`,
    ),
  fc.array(nastyString, { maxLength: 120 }).map((ms) => `{"method":${JSON.stringify(ms)}}`),
  nastyString.map((q) => `{"query":${str(q)}}`),
  fc
    .tuple(nastyString, nastyString, rawJson)
    .map(([uri, server, a]) => `{"uri":${str(uri)},"server":${str(server)},"arguments":${a}}`),
  fc
    .tuple(rawJson, rawJson)
    .map(([o, l]) => `{"uri":"mcpx://results/x","offset":${o},"limit":${l}}`),
  nastyString.map((s) => `{"script":${str(s)}}`),
  rawJson,
  deepRawJson,
  deepRawJson.map((d) => `{"method":"fixture.echo","arguments":{"message":"m","x":${d}}}`),
);

const toolName = fc.oneof(
  { arbitrary: fc.constantFrom("describe", "call", "resources"), weight: 6 },
  { arbitrary: nastyString, weight: 1 },
);

function check(answer: RpcAnswer, line: string): void {
  const shown = line.slice(0, 300);
  if (answer.error) {
    expect(answer.error.code, `-32603 for ${shown}: ${answer.error.message}`).not.toBe(-32603);
    expect(
      leaksInternals(JSON.stringify(answer.error)),
      `${shown} → ${JSON.stringify(answer.error)}`,
    ).toBe(false);
    return;
  }
  const content = answer.result?.content;
  expect(Array.isArray(content), `${shown} → ${JSON.stringify(answer)}`).toBe(true);
  const text = JSON.stringify(content).slice(0, 100_000);
  expect(leaksInternals(text), `${shown} → ${text.slice(0, 2000)}`).toBe(false);
}

it(
  `answers ${RUNS} hostile meta-tool calls, each once, without -32603, stack traces or dying`,
  async () => {
    await fc.assert(
      fc.asyncProperty(toolName, argsJson, async (name, args) => {
        const id = rpc.id();
        const line = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${str(name)},"arguments":${args}}}\n`;
        const answer = rpc.expect(id, 30_000, `tools/call ${line.slice(0, 200)}`);
        rpc.sendRaw(line);
        check(await answer, line);
        expect(rpc.alive).toBe(true);
        seen.add(descendants(rpc.pid));
      }),
      { numRuns: RUNS },
    );
    expect(rpc.anomalies).toEqual({ duplicates: 0, strays: 0, garbage: 0 });
    // Still itself: an ordinary call works after all that.
    const after = await rpc.request("tools/call", {
      name: "call",
      arguments: { method: "fixture.echo", arguments: { message: "still here" } },
    });
    expect(JSON.stringify(after.result)).toContain("still here");
  },
  fuzzTimeout(RUNS, 400),
);
