/**
 * A 2026-07-28 retry that lands on the replica that does not hold its call (pending-remote.ts):
 * two PendingCalls tables of one deployment sharing a real redis-server. The retry is forwarded
 * to the holder, which continues the call and sends back the result or the next questions; the
 * holder checks the caller as for its own retries; the client going away cancels the call there;
 * a holder that stopped is said at once.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { PendingCalls } from "../../src/server/pending.js";
import { openShared } from "../../src/shared/index.js";
import type { SharedState } from "../../src/shared/types.js";
import { textResult } from "../../src/types.js";
import type { ClientAbilities, ClientChannel } from "../../src/upstream/channel.js";
import { eventually } from "../helpers/eventually.js";
import { quietLogger } from "../helpers/inmemory.js";
import { findRedis, startRedis, type RunningRedis } from "../helpers/redis.js";

const REDIS = findRedis();
const ABLE: ClientAbilities = { roots: true, elicitForm: true, elicitUrl: false, sampling: true };
const KEY = randomBytes(32);
let redis: RunningRedis | undefined;
const opened: { shared: SharedState; pending: PendingCalls }[] = [];

interface Question {
  resultType: "input_required";
  inputRequests: Record<string, unknown>;
  requestState: string;
}
function question(a: unknown): Question {
  if ((a as { resultType?: unknown }).resultType !== "input_required")
    throw new Error(`expected input_required, got ${JSON.stringify(a)}`);
  return a as Question;
}

/** A replica's table, its shared state in Redis, listening before it is used. */
async function replica(deployment: Buffer) {
  const shared = openShared({
    redis: redis!.url,
    deployment,
    logger: createLogger({ level: "error" }),
  });
  const pending = new PendingCalls({ key: KEY, shared, logger: quietLogger() });
  opened.push({ shared, pending });
  await eventually(
    () =>
      shared.listening(`pending-retries:${pending.replica}`).then(
        () => true,
        () => false,
      ),
    10_000,
    "the replica's subscription",
  );
  return { shared, pending };
}

/** A call asking `rounds` questions in turn, answering with every reply. */
function asking(rounds: number) {
  return async (client: ClientChannel, signal: AbortSignal) => {
    const replies: unknown[] = [];
    for (let i = 0; i < rounds; i++) {
      replies.push(
        await client.elicit(
          { message: `q${i}`, requestedSchema: { type: "object", properties: {} } },
          { timeoutMs: 10_000, signal },
        ),
      );
    }
    return textResult(`replies ${JSON.stringify(replies)}`);
  };
}

const inputs = (caller = "alice") => ({
  caller,
  abilities: ABLE,
  confined: false,
  signal: new AbortController().signal,
});
const accept = (q: Question, answer: string) => ({
  [Object.keys(q.inputRequests)[0]!]: { action: "accept", content: { answer } },
});

beforeAll(async () => {
  if (REDIS) redis = await startRedis(REDIS);
});
afterAll(async () => {
  for (const { pending, shared } of opened) {
    pending.close();
    await shared.close();
  }
  await redis?.stop();
});

describe.skipIf(!REDIS)("a retry forwarded to the replica holding its call", () => {
  it("continues the call there, round after round, and answers with its result", async () => {
    const deployment = randomBytes(8);
    const [a, b] = [await replica(deployment), await replica(deployment)];
    const first = question(await a.pending.start(inputs(), asking(2)));
    // Round one through B: the holder (A) answers with the next question, in a state naming A.
    const second = question(
      await b.pending.resume(
        await b.pending.verify(first.requestState, {} as never),
        accept(first, "one"),
        "alice",
        new AbortController().signal,
      ),
    );
    expect(Object.values(second.inputRequests)).toMatchObject([{ params: { message: "q1" } }]);
    expect(await a.pending.verify(second.requestState, {} as never)).toMatchObject({
      r: a.pending.replica,
    });
    expect(a.pending.size).toBe(1);
    // Round two through B again: the call's result.
    const done = await b.pending.resume(
      await b.pending.verify(second.requestState, {} as never),
      accept(second, "two"),
      "alice",
      new AbortController().signal,
    );
    expect(done).toEqual(
      textResult(
        'replies [{"action":"accept","content":{"answer":"one"}},{"action":"accept","content":{"answer":"two"}}]',
      ),
    );
    expect(a.pending.size).toBe(0);
  });

  it("is refused by the holder for another caller, whose answers never reach the call", async () => {
    const deployment = randomBytes(8);
    const [a, b] = [await replica(deployment), await replica(deployment)];
    const first = question(await a.pending.start(inputs("alice"), asking(1)));
    const state = await b.pending.verify(first.requestState, {} as never);
    const theirs = await b.pending.resume(
      state,
      accept(first, "bob's"),
      "bob",
      new AbortController().signal,
    );
    expect(theirs).toMatchObject({ isError: true });
    expect(JSON.stringify(theirs)).toContain("no longer waiting for your answers");
    // The call still waits for alice, and takes her answer.
    const done = await b.pending.resume(
      state,
      accept(first, "alice's"),
      "alice",
      new AbortController().signal,
    );
    expect(done).toEqual(
      textResult('replies [{"action":"accept","content":{"answer":"alice\'s"}}]'),
    );
  });

  it("cancels the call on the holder when the client goes away", async () => {
    const deployment = randomBytes(8);
    const [a, b] = [await replica(deployment), await replica(deployment)];
    let aborted = false;
    let answered = false;
    // Asks once, then works until cancelled.
    const first = question(
      await a.pending.start(inputs(), async (client, signal) => {
        await client.elicit(
          { message: "q0", requestedSchema: { type: "object", properties: {} } },
          { timeoutMs: 10_000, signal },
        );
        answered = true;
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        aborted = true;
        return textResult("cancelled");
      }),
    );
    const client = new AbortController();
    const waiting = b.pending
      .resume(
        await b.pending.verify(first.requestState, {} as never),
        accept(first, "one"),
        "alice",
        client.signal,
      )
      .catch((err: unknown) => err);
    // The retry reached the holder (the call took its answer and works), then the client leaves.
    await eventually(() => answered, 5_000, "the call to get its answer");
    client.abort(new Error("client gone"));
    expect(String(await waiting)).toMatch(/cancelled: client gone/);
    await eventually(() => aborted, 5_000, "the holder to cancel the call");
  });

  it("says at once when the holder no longer listens (it stopped)", async () => {
    const deployment = randomBytes(8);
    const [a, b] = [await replica(deployment), await replica(deployment)];
    const first = question(await a.pending.start(inputs(), asking(1)));
    a.pending.close();
    await a.shared.close();
    const gone = await b.pending.resume(
      await b.pending.verify(first.requestState, {} as never),
      accept(first, "one"),
      "alice",
      new AbortController().signal,
    );
    expect(gone).toMatchObject({ isError: true });
    expect(JSON.stringify(gone)).toContain(
      `The mcpx replica holding this call (${a.pending.replica}) no longer listens`,
    );
  });
});
