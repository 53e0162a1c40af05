/**
 * Calls of 2026-07-28 clients that wait for their client between requests (PendingCalls): the
 * input_required answer and its signed state, the retry that brings the answers, and what a
 * retry gets when the call is not (or no longer) waiting here. The SDK's codec and builders are
 * the real ones.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClientAbilities, ClientChannel } from "../../src/upstream/channel.js";
import { PendingCalls } from "../../src/server/pending.js";
import { textResult, type ToolResult } from "../../src/types.js";
import { quietLogger } from "../helpers/inmemory.js";

const ABLE: ClientAbilities = { roots: true, elicitForm: true, elicitUrl: false, sampling: true };
const KEY = randomBytes(32);

type Answer =
  | ToolResult
  | { resultType: "input_required"; inputRequests: Record<string, unknown>; requestState: string };

function isQuestion(a: unknown): a is Extract<Answer, { resultType: "input_required" }> {
  return (a as { resultType?: unknown }).resultType === "input_required";
}

/** A call that asks its client one question (for `timeoutMs`) and answers with the reply. */
function asking(timeoutMs = 5_000) {
  return async (client: ClientChannel) => {
    const reply = await client.elicit(
      { message: "ok?", requestedSchema: { type: "object", properties: {} } },
      { timeoutMs },
    );
    return textResult(`reply ${JSON.stringify(reply)}`);
  };
}

/** The state the verify hook hands the handler (as the SDK does before it runs). */
async function decoded(pending: PendingCalls, state: string): Promise<unknown> {
  return pending.verify(state, {} as never);
}

const live: PendingCalls[] = [];
function table(maxPending?: number): PendingCalls {
  const pending = new PendingCalls({
    key: KEY,
    logger: quietLogger(),
    ...(maxPending && { maxPending }),
  });
  live.push(pending);
  return pending;
}
afterEach(() => {
  for (const p of live.splice(0)) p.close();
  vi.useRealTimers();
});

const inputs = (caller = "alice") => ({
  caller,
  abilities: ABLE,
  confined: false,
  signal: new AbortController().signal,
});

describe("PendingCalls", () => {
  it("answers a call that asks nothing with its result, keeping nothing", async () => {
    const pending = table();
    const answer = await pending.start(inputs(), () => Promise.resolve(textResult("done")));
    expect(answer).toEqual(textResult("done"));
    expect(pending.size).toBe(0);
  });

  it("asks through input_required, then finishes the same call with the client's answer", async () => {
    const pending = table();
    const first = await pending.start(inputs(), asking());
    if (!isQuestion(first)) throw new Error("expected input_required");
    expect(Object.values(first.inputRequests)).toEqual([
      {
        method: "elicitation/create",
        params: { message: "ok?", requestedSchema: { type: "object", properties: {} } },
      },
    ]);
    expect(pending.size).toBe(1);
    const [key] = Object.keys(first.inputRequests);
    const state = await decoded(pending, first.requestState);
    const done = await pending.resume(
      state,
      { [key!]: { action: "accept", content: { ok: true } } },
      "alice",
      new AbortController().signal,
    );
    expect(done).toEqual(textResult('reply {"action":"accept","content":{"ok":true}}'));
    expect(pending.size).toBe(0);
  });

  it("asks again what the retry left unanswered", async () => {
    const pending = table();
    const first = await pending.start(inputs(), asking());
    if (!isQuestion(first)) throw new Error("expected input_required");
    const again = await pending.resume(
      await decoded(pending, first.requestState),
      {},
      "alice",
      new AbortController().signal,
    );
    if (!isQuestion(again)) throw new Error("expected input_required again");
    expect(Object.keys(again.inputRequests)).toEqual(Object.keys(first.inputRequests));
  });

  it("refuses a forged state before any handler runs", async () => {
    const pending = table();
    await expect(decoded(pending, "mcp-forged.state")).rejects.toThrow();
    const other = new PendingCalls({ key: randomBytes(32), logger: quietLogger() });
    live.push(other);
    const first = await other.start(inputs(), asking());
    if (!isQuestion(first)) throw new Error("expected input_required");
    await expect(decoded(pending, first.requestState)).rejects.toThrow();
  });

  it("tells a retry that reached another replica to call again", async () => {
    const [here, there] = [table(), table()];
    const first = await there.start(inputs(), asking());
    if (!isQuestion(first)) throw new Error("expected input_required");
    // Replicas share the key: the state verifies on either, and names the one holding the call.
    const result = await here.resume(
      await decoded(here, first.requestState),
      {},
      "alice",
      new AbortController().signal,
    );
    expect(result).toEqual(
      textResult(
        "This call's state is held by another mcpx replica, so this one cannot continue it (its answers were not used). Call the tool again.",
        true,
      ),
    );
  });

  it("does not let another caller continue the call", async () => {
    const pending = table();
    const first = await pending.start(inputs("alice"), asking());
    if (!isQuestion(first)) throw new Error("expected input_required");
    const result = await pending.resume(
      await decoded(pending, first.requestState),
      {},
      "mallory",
      new AbortController().signal,
    );
    expect((result as ToolResult).isError).toBe(true);
    expect(JSON.stringify(result)).toContain("no longer waiting for your answers");
  });

  it("stops waiting after the question's timeout: the question fails, the call is cancelled and forgotten", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const pending = table();
    let failure: unknown;
    let signal!: AbortSignal;
    const first = await pending.start(inputs(), async (client, s) => {
      signal = s;
      try {
        return await asking(1_000)(client);
      } catch (err) {
        failure = err;
        throw err;
      }
    });
    if (!isQuestion(first)) throw new Error("expected input_required");
    const state = await decoded(pending, first.requestState);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(String(failure)).toContain("the client did not answer within 1000 ms");
    expect(signal.aborted).toBe(true);
    expect(pending.size).toBe(0);
    const late = await pending.resume(state, {}, "alice", new AbortController().signal);
    expect(JSON.stringify(late)).toContain("expired");
  });

  it("cancels the call when the client gives up while waiting for it", async () => {
    const pending = table();
    let signal!: AbortSignal;
    const request = new AbortController();
    const answer = pending.start({ ...inputs(), signal: request.signal }, (_client, s) => {
      signal = s;
      return new Promise<ToolResult>((resolve) =>
        s.addEventListener("abort", () => resolve(textResult("cancelled", true))),
      );
    });
    request.abort(new Error("client went away"));
    expect(await answer).toEqual(textResult("cancelled", true));
    expect(signal.aborted).toBe(true);
  });

  it("is bounded: past maxPending, a call's question is refused instead of kept", async () => {
    const pending = table(1);
    const first = await pending.start(inputs(), asking());
    expect(isQuestion(first)).toBe(true);
    let refused: unknown;
    const second = await pending.start(inputs("bob"), async (client) => {
      try {
        return await asking()(client);
      } catch (err) {
        refused = err;
        return textResult("gave up", true);
      }
    });
    expect(String(refused)).toContain("1 calls waiting for their clients on this replica");
    expect(second).toEqual(textResult("gave up", true));
  });
});
