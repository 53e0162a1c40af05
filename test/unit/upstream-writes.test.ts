/**
 * How ProcessTransport (src/upstream/transport.ts) writes to a server's stdin: a request to a
 * server with nothing left to answer leaves at once (one client's call waits for nothing), while
 * messages sent in a turn when requests are outstanding leave together at its end (corked). Read
 * on the child's stdin (`writableCorked`), with a real child that answers each request.
 */
import type { ChildProcess } from "node:child_process";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { ProcessTransport } from "../../src/upstream/transport.js";
import { within } from "../helpers/eventually.js";

// Answers every request but "silent" ones, as soon as it reads it.
const SERVER = `
const rl = require("node:readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id !== undefined && m.method !== "silent")
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }) + "\\n");
});`;

const transports: ProcessTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

async function started() {
  const t = new ProcessTransport({
    transport: "stdio",
    command: process.execPath,
    args: ["-e", SERVER],
    env: {},
    inheritEnv: false,
  });
  transports.push(t);
  const answered = new Set<unknown>();
  let onAnswer: (() => void) | undefined;
  t.onmessage = (m) => {
    if ("id" in m) answered.add(m.id);
    onAnswer?.();
  };
  await t.start();
  const stdin = (t as unknown as { child: ChildProcess }).child.stdin!;
  const answer = (id: number) =>
    within(
      new Promise<void>((resolve) => {
        const check = () => answered.has(id) && resolve();
        onAnswer = check;
        check();
      }),
      5_000,
      `the answer to request ${id}`,
    );
  return { t, corked: () => stdin.writableCorked, answer };
}

const request = (id: number | string, method = "ping"): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method,
});

describe("writes to an upstream's stdin", () => {
  it("sends a request at once when nothing waits for an answer, and corks the rest of the turn", async () => {
    const { t, corked, answer } = await started();
    const first = t.send(request(1));
    expect(corked()).toBe(0);
    const second = t.send(request(2));
    expect(corked()).toBe(1);
    await Promise.all([first, second]);
    await answer(1);
    await answer(2);
    // Both answered: the next request leaves at once again.
    void t.send(request(3));
    expect(corked()).toBe(0);
    await answer(3);
  });

  it("corks while a request waits, until it is answered or cancelled", async () => {
    const { t, corked, answer } = await started();
    await t.send(request(1, "silent"));
    await t.send(request(2));
    await answer(2);
    // Request 1 is still unanswered: this turn's messages wait for its end.
    void t.send(request(3));
    expect(corked()).toBe(1);
    await answer(3);
    await t.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, reason: "gone" },
    });
    await new Promise((resolve) => setImmediate(resolve));
    void t.send(request(4));
    expect(corked()).toBe(0);
    await answer(4);
  });

  it("is not held up by a string id nobody answers (the SDK's era probe to a silent server)", async () => {
    const { t, corked, answer } = await started();
    await t.send(request("server-discover-probe-0", "silent"));
    await new Promise((resolve) => setImmediate(resolve));
    void t.send(request(1));
    expect(corked()).toBe(0);
    await answer(1);
  });
});
