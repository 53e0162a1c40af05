/** Handles of calls that outlive taskAfter (src/executor/tasks.ts), on a fake clock. */
import { describe, expect, it } from "vitest";
import { SHUTTING_DOWN } from "../../src/executor/failures.js";
import { InFlight } from "../../src/executor/inflight.js";
import { quietLogger } from "../helpers/inmemory.js";
import { CallTasks, type SendProgress } from "../../src/executor/tasks.js";
import { textResult, type ToolResult } from "../../src/types.js";
import { FakeClock, settle } from "../helpers/clock.js";

/** A call the test ends by hand, with the signal and progress channel it was given. */
function pending() {
  let end!: (r: ToolResult) => void;
  const seen: { signal?: AbortSignal; progress?: SendProgress } = {};
  const work = (signal: AbortSignal, progress?: SendProgress) => {
    seen.signal = signal;
    if (progress) seen.progress = progress;
    return new Promise<ToolResult>((resolve) => (end = resolve));
  };
  return { work, end: (r: ToolResult) => end(r), seen };
}

const taskOf = (r: ToolResult) => r._meta?.["mcpx/task"] as { uri: string; status: string };

describe("CallTasks", () => {
  it("answers a call that ends in time as it is, and hands off one that does not", async () => {
    const clock = new FakeClock();
    const tasks = new CallTasks(clock);
    const fast = pending();
    const signal = new AbortController().signal;
    const quick = tasks.run({ caller: "a", source: "s.t", afterMs: 1_000, signal }, fast.work);
    fast.end(textResult("ok"));
    expect(await quick).toEqual(textResult("ok"));

    const slow = pending();
    const handed = tasks.run({ caller: "a", source: "s.t", afterMs: 1_000, signal }, slow.work);
    await clock.advance(1_000);
    const answer = await handed;
    const { uri, status } = taskOf(answer);
    expect(status).toBe("working");
    // Still running: a poll waits its time, then says so.
    const early = tasks.poll("a", uri, 500);
    await clock.advance(500);
    expect(taskOf(await early).status).toBe("working");
    // Another caller never reads it.
    expect((await tasks.poll("b", uri, 0)).isError).toBe(true);
    // A poll under way gets the result as soon as it lands.
    const waiting = tasks.poll("a", uri, 5_000);
    slow.end(textResult("late"));
    const done = await waiting;
    expect(done.content).toEqual([{ type: "text", text: "late" }]);
    expect(taskOf(done)).toEqual({ uri, status: "completed" });
  });

  it("cancels with the client's request only until the handle is sent", async () => {
    const clock = new FakeClock();
    const tasks = new CallTasks(clock);
    const request = new AbortController();
    const before = pending();
    void tasks.run(
      { caller: "a", source: "s.t", afterMs: 100, signal: request.signal },
      before.work,
    );
    request.abort();
    expect(before.seen.signal?.aborted).toBe(true);

    const request2 = new AbortController();
    const after = pending();
    const handed = tasks.run(
      { caller: "a", source: "s.t", afterMs: 100, signal: request2.signal },
      after.work,
    );
    await clock.advance(100);
    await handed;
    request2.abort();
    expect(after.seen.signal?.aborted).toBe(false);
  });

  it("runs the work on the request's own controller when it is given one (no second signal)", async () => {
    const clock = new FakeClock();
    const tasks = new CallTasks(clock);
    const owner = new AbortController();
    let given: { signal?: AbortSignal; controller?: AbortController } = {};
    const ran = tasks.run(
      { caller: "a", source: "s.t", afterMs: 100, signal: owner.signal, owner },
      (signal, _progress, controller) => {
        given = { signal, controller };
        return Promise.resolve(textResult("ok"));
      },
    );
    expect(await ran).toEqual(textResult("ok"));
    expect(given.signal).toBe(owner.signal);
    expect(given.controller).toBe(owner);

    // An owner that is not the signal's is not taken: the work gets a signal of its own.
    const other = new AbortController();
    const request = new AbortController();
    const mismatched = pending();
    void tasks.run(
      { caller: "a", source: "s.t", afterMs: 100, signal: request.signal, owner: other },
      mismatched.work,
    );
    expect(mismatched.seen.signal).not.toBe(request.signal);
    expect(mismatched.seen.signal).not.toBe(other.signal);
    request.abort();
    expect(mismatched.seen.signal?.aborted).toBe(true);
  });

  it("sends increasing progress: the call's own, and heartbeats between, none after the handle", async () => {
    const clock = new FakeClock();
    const tasks = new CallTasks(clock, { heartbeatMs: 10_000 });
    const sent: { progress: number; message?: string }[] = [];
    const call = pending();
    const handed = tasks.run(
      {
        caller: "a",
        source: "s.t",
        afterMs: 60_000,
        signal: new AbortController().signal,
        sendProgress: (p) => sent.push(p),
      },
      call.work,
    );
    await clock.advance(10_000);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.message).toBe("s.t still running (10 s)");
    call.seen.progress!({ progress: 0.001 }); // not above the heartbeat's: dropped
    call.seen.progress!({ progress: 5, total: 10 });
    call.seen.progress!({ progress: 4, total: 10 }); // not above the last: dropped
    await clock.advance(10_000);
    expect(sent.map((p) => p.progress)).toEqual([0.001, 5, 5.001]);
    await clock.advance(40_000);
    await handed;
    const count = sent.length;
    call.seen.progress!({ progress: 9 });
    await clock.advance(30_000);
    expect(sent).toHaveLength(count);
  });

  it("hands off no more than maxPerCaller calls per caller, and forgets results after keepMs", async () => {
    const clock = new FakeClock();
    const tasks = new CallTasks(clock, { maxPerCaller: 1, keepMs: 1_000 });
    const signal = new AbortController().signal;
    const one = pending();
    const first = tasks.run({ caller: "a", source: "s.t", afterMs: 10, signal }, one.work);
    await clock.advance(10);
    const { uri } = taskOf(await first);
    // The second just runs to its end: no room for a handle.
    const two = pending();
    const second = tasks.run({ caller: "a", source: "s.t", afterMs: 10, signal }, two.work);
    await clock.advance(50);
    two.end(textResult("two"));
    expect(await second).toEqual(textResult("two"));
    one.end(textResult("one"));
    await settle();
    expect(taskOf(await tasks.poll("a", uri, 0)).status).toBe("completed");
    await clock.advance(1_000);
    expect((await tasks.poll("a", uri, 0)).isError).toBe(true);
  });

  it("passes a first progress of 0 on", () => {
    const clock = new FakeClock();
    const tasks = new CallTasks(clock);
    const sent: number[] = [];
    const call = pending();
    void tasks.run(
      {
        caller: "a",
        source: "s.t",
        afterMs: 1_000,
        signal: new AbortController().signal,
        sendProgress: (p) => sent.push(p.progress),
      },
      call.work,
    );
    call.seen.progress!({ progress: 0, total: 2 });
    call.seen.progress!({ progress: 1, total: 2 });
    expect(sent).toEqual([0, 1]);
    call.end(textResult("ok"));
  });
});

describe("InFlight", () => {
  it("tracks work on its own controller's signal, and the drain cancels through that controller", async () => {
    const inflight = new InFlight(quietLogger());
    const owner = new AbortController();
    let seen: AbortSignal | undefined;
    const work = inflight.track(
      owner.signal,
      (signal) => {
        seen = signal;
        return new Promise<string>((resolve) =>
          signal.addEventListener("abort", () => resolve(String(signal.reason))),
        );
      },
      owner,
    );
    // No second controller: the work sees the call's own signal.
    expect(seen).toBe(owner.signal);
    await inflight.drain(0);
    expect(await work).toContain(SHUTTING_DOWN);
    expect(owner.signal.aborted).toBe(true);
  });

  it("gives work a signal of its own when the controller is not the signal's", async () => {
    const inflight = new InFlight(quietLogger());
    const client = new AbortController();
    let seen: AbortSignal | undefined;
    const work = inflight.track(
      client.signal,
      (signal) => {
        seen = signal;
        return new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      },
      new AbortController(),
    );
    expect(seen).not.toBe(client.signal);
    // The client's cancel reaches it; the drain would too, without aborting the client's signal.
    client.abort();
    await work;
    expect(seen?.aborted).toBe(true);
  });
});
