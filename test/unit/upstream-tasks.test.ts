/**
 * callAsTask (src/upstream/tasks.ts) against a scripted upstream behind its TaskWire seam (the
 * SDK itself is exercised with a real task server in test/integration/mcp-tasks-relay.test.ts):
 * an answer at once, polling to the end, a status notification cutting the wait short, the
 * upstream's task id kept out of the result, and tasks/cancel when the caller gives up; and how
 * long the request that may create a task outlives its caller (lingering).
 */
import { describe, expect, it } from "vitest";
import {
  callAsTask,
  caughtTask,
  followTask,
  Leftovers,
  lingering,
  runsToolTasks,
  type TaskWire,
} from "../../src/upstream/tasks.js";
import type { UpstreamTaskStatus } from "../../src/upstream/types.js";
import { FakeClock } from "../helpers/clock.js";

const RELATED = "io.modelcontextprotocol/related-task";

/** An upstream answering each method from a script; every request it got, in order. */
function scripted(
  answers: Record<string, (() => Record<string, unknown>)[]>,
  era: "legacy" | "modern" = "legacy",
) {
  const sent: { method: string; params: Record<string, unknown> }[] = [];
  let listener: ((task: Record<string, unknown>) => void) | undefined;
  let following!: () => void;
  /** Settles once the task is followed (its status listener set). */
  const followed = new Promise<void>((resolve) => (following = resolve));
  /** Requests handed to the session to outlive their caller. */
  const outlived: Promise<unknown>[] = [];
  const wire: TaskWire = {
    era,
    answer: (requests) =>
      Promise.resolve(
        Object.fromEntries(Object.keys(requests).map((k) => [k, { action: "accept", key: k }])),
      ),
    request: (method, params) => {
      sent.push({ method, params });
      const next = answers[method]?.shift();
      return next ? Promise.resolve(next()) : Promise.reject(new Error(`unexpected ${method}`));
    },
    onStatus: (_taskId, fn) => {
      listener = fn;
      following();
      return () => (listener = undefined);
    },
    outlive: (request) => void outlived.push(request.catch(() => undefined)),
  };
  return {
    wire,
    sent,
    outlived,
    followed,
    notify: (task: Record<string, unknown>) => listener?.(task),
  };
}

const task = (status: string, extra: Record<string, unknown> = {}) => ({
  task: { taskId: "up-1", status, pollInterval: 10, ...extra },
});

describe("callAsTask", () => {
  it("reads the tasks capability for tools/call only", () => {
    expect(runsToolTasks({ tasks: { requests: { tools: { call: {} } } } })).toBe(true);
    expect(runsToolTasks({ tasks: { list: {}, cancel: {} } })).toBe(false);
    expect(runsToolTasks({})).toBe(false);
  });

  it("takes an answer given at once as the call's result", async () => {
    const { wire, sent } = scripted({
      "tools/call": [() => ({ content: [{ type: "text", text: "now" }] })],
    });
    const result = await callAsTask(wire, { name: "t", arguments: {} }, { timeoutMs: 1_000 });
    expect(result).toEqual({ content: [{ type: "text", text: "now" }] });
    expect(sent.map((s) => s.method)).toEqual(["tools/call"]);
    expect(sent[0]?.params.task).toEqual({});
  });

  it("polls to the end, reports statuses before it, and strips the upstream's task id", async () => {
    const { wire, sent } = scripted({
      "tools/call": [() => task("working")],
      "tasks/get": [
        () => ({ taskId: "up-1", status: "working", statusMessage: "halfway" }),
        () => ({ taskId: "up-1", status: "completed" }),
      ],
      "tasks/result": [
        () => ({
          content: [{ type: "text", text: "done" }],
          _meta: { [RELATED]: { taskId: "up-1" } },
        }),
      ],
    });
    const statuses: [UpstreamTaskStatus, string | undefined][] = [];
    const result = await callAsTask(
      wire,
      { name: "t", arguments: {} },
      {
        timeoutMs: 1_000,
        task: { toolRunsTasks: true, ttlMs: 5_000, onStatus: (s, m) => statuses.push([s, m]) },
      },
    );
    expect(result).toEqual({ content: [{ type: "text", text: "done" }] });
    expect(sent.map((s) => s.method)).toEqual([
      "tools/call",
      "tasks/get",
      "tasks/get",
      "tasks/result",
    ]);
    expect(sent[0]?.params.task).toEqual({ ttl: 5_000 });
    expect(statuses).toEqual([["working", "halfway"]]);
  });

  it("goes to tasks/result as soon as a status notification says the task ended", async () => {
    // A poll interval of an hour is held to 5 s: the notification must end the wait first.
    const { wire, sent, followed, notify } = scripted({
      "tools/call": [() => task("working", { pollInterval: 3_600_000 })],
      "tasks/result": [() => ({ content: [] })],
    });
    const done = callAsTask(wire, { name: "t", arguments: {} }, { timeoutMs: 1_000 });
    await followed;
    notify({ taskId: "up-1", status: "completed" });
    await done;
    expect(sent.map((s) => s.method)).toEqual(["tools/call", "tasks/result"]);
  });

  it("cancels the upstream task when the caller gives up", async () => {
    const abort = new AbortController();
    const { wire, sent, outlived, followed } = scripted({
      "tools/call": [() => task("working", { pollInterval: 60_000 })],
      "tasks/cancel": [() => ({})],
    });
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const call = callAsTask(
      wire,
      { name: "t", arguments: {} },
      { timeoutMs: 1_000, signal: abort.signal, traceparent },
    );
    await followed;
    abort.abort(new Error("client went away"));
    await expect(call).rejects.toThrow("client went away");
    expect(sent.map((s) => [s.method, s.params.taskId])).toEqual([
      ["tools/call", undefined],
      ["tasks/cancel", "up-1"],
    ]);
    // The follow-up carries the call's trace, as the tools/call did (session.ts sets its _meta).
    expect(sent[1]?.params._meta).toEqual({ traceparent });
    // The session is handed the tasks/cancel, to let it finish when it closes.
    expect(outlived).toHaveLength(1);
  });

  it("cancels a task whose creation arrives after the caller left, and drops a plain answer then", async () => {
    for (const answer of [task("working"), task("")]) {
      const abort = new AbortController();
      const { wire, sent } = scripted({
        // The caller leaves while the answer is on its way back.
        "tools/call": [
          () => {
            abort.abort(new Error("client went away"));
            return answer;
          },
        ],
        "tasks/cancel": [() => ({})],
      });
      const call = callAsTask(
        wire,
        { name: "t", arguments: {} },
        { timeoutMs: 1_000, signal: abort.signal },
      );
      // (A status-less task goes to tasks/result, which this script does not answer.)
      await expect(call).rejects.toThrow(answer.task.status ? "client went away" : "tasks/result");
      // A task without a status is not known to have ended: it is cancelled too.
      expect(sent[0]?.method).toBe("tools/call");
      expect(sent.at(-1)).toMatchObject({ method: "tasks/cancel", params: { taskId: "up-1" } });
    }
    const abort = new AbortController();
    const { wire } = scripted({
      "tools/call": [
        () => {
          abort.abort(new Error("client went away"));
          return { content: [{ type: "text", text: "late" }] };
        },
      ],
    });
    await expect(
      callAsTask(wire, { name: "t", arguments: {} }, { timeoutMs: 1_000, signal: abort.signal }),
    ).rejects.toThrow("client went away");
  });
});

/** A 2026-07-28 CreateTaskResult as wire.ts catches it. */
const created = (extra: Record<string, unknown> = {}) => ({
  taskId: "up-2",
  status: "working",
  ttlMs: 60_000,
  pollIntervalMs: 10,
  ...extra,
});

describe("followTask, 2026-07-28 tasks extension", () => {
  it("finds the task wire.ts caught in a tools/call result, and nothing in a plain one", () => {
    expect(caughtTask({ content: [], "mcpx/upstream-task": created() })).toMatchObject({
      taskId: "up-2",
    });
    expect(caughtTask({ content: [{ type: "text", text: "x" }] })).toBeUndefined();
  });

  it("polls tasks/get to the end and takes the result it inlines", async () => {
    const { wire, sent } = scripted(
      {
        "tasks/get": [
          () => ({ taskId: "up-2", status: "working", statusMessage: "halfway" }),
          () => ({
            taskId: "up-2",
            status: "completed",
            result: {
              content: [{ type: "text", text: "done" }],
              _meta: { [RELATED]: { taskId: "up-2" } },
            },
          }),
        ],
      },
      "modern",
    );
    const statuses: [UpstreamTaskStatus, string | undefined][] = [];
    const result = await followTask(wire, created(), {
      timeoutMs: 1_000,
      task: { toolRunsTasks: false, onStatus: (st, m) => statuses.push([st, m]) },
    });
    expect(result).toEqual({ content: [{ type: "text", text: "done" }] });
    expect(sent.map((x) => x.method)).toEqual(["tasks/get", "tasks/get"]);
    expect(statuses).toEqual([["working", "halfway"]]);
  });

  it("answers a task waiting for input once per key, by tasks/update, with a span per follow-up", async () => {
    const asking = {
      taskId: "up-2",
      status: "input_required",
      inputRequests: { q1: { method: "elicitation/create", params: { message: "ok?" } } },
    };
    const { wire, sent } = scripted(
      {
        "tasks/get": [
          () => asking,
          // Still shown until the server takes the answer: never answered twice.
          () => asking,
          () => ({ taskId: "up-2", status: "completed", result: { content: [] } }),
        ],
        "tasks/update": [() => ({})],
      },
      "modern",
    );
    const spans: [string, string][] = [];
    await followTask(wire, created(), {
      timeoutMs: 1_000,
      task: {
        toolRunsTasks: false,
        trace: (method) => ({
          traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${String(spans.length).padStart(16, "0")}-01`,
          end: (outcome) => void spans.push([method, outcome]),
        }),
      },
    });
    expect(sent.map((x) => x.method)).toEqual([
      "tasks/get",
      "tasks/update",
      "tasks/get",
      "tasks/get",
    ]);
    expect(sent[1]?.params.inputResponses).toEqual({ q1: { action: "accept", key: "q1" } });
    expect(spans).toEqual([
      ["tasks/get", "ok"],
      ["tasks/update", "ok"],
      ["tasks/get", "ok"],
      ["tasks/get", "ok"],
    ]);
    // Each follow-up carries its own span's traceparent.
    expect(sent[1]?.params._meta).toEqual({
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000001-01",
    });
  });

  it("fails with the error a failed task inlines", async () => {
    const { wire } = scripted(
      {
        "tasks/get": [
          () => ({ taskId: "up-2", status: "failed", error: { code: -32603, message: "boom" } }),
        ],
      },
      "modern",
    );
    await expect(followTask(wire, created(), { timeoutMs: 1_000 })).rejects.toThrow(
      "the upstream's task failed: boom",
    );
  });
});

describe("lingering", () => {
  it("aborts the request that may create a task only lingerMs after its caller left", async () => {
    const clock = new FakeClock();
    const caller = new AbortController();
    const { options, done } = lingering({ timeoutMs: 60_000, signal: caller.signal }, 2_000, clock);
    expect(options.signal).not.toBe(caller.signal);
    caller.abort(new Error("the client cancelled"));
    // The caller left; the answer (perhaps a task to cancel) may still arrive.
    expect(options.signal?.aborted).toBe(false);
    await clock.advance(1_999);
    expect(options.signal?.aborted).toBe(false);
    await clock.advance(1);
    expect(options.signal?.aborted).toBe(true);
    expect((options.signal?.reason as Error).message).toBe("the client cancelled");
    done();
  });

  it("leaves nothing behind once the request settled, and passes a caller already gone as it is", () => {
    const clock = new FakeClock();
    const caller = new AbortController();
    const { options, done } = lingering({ timeoutMs: 1, signal: caller.signal }, 2_000, clock);
    done();
    caller.abort();
    expect(clock.pending).toBe(0);
    expect(options.signal?.aborted).toBe(false);
    const gone = lingering({ timeoutMs: 1, signal: caller.signal }, 2_000, clock);
    expect(gone.options.signal).toBe(caller.signal);
    const none = lingering({ timeoutMs: 1 }, 2_000, clock);
    expect(none.options.signal).toBeUndefined();
  });
});

describe("Leftovers", () => {
  it("waits for a request that outlived its caller, and at most the bound for one that hangs", async () => {
    const leftovers = new Leftovers();
    // Nothing pending: settles at once.
    await leftovers.settle(60_000);
    let answer!: () => void;
    let answered = false;
    leftovers.add(
      new Promise<void>((resolve) => (answer = resolve)).then(() => {
        answered = true;
      }),
    );
    // A failing one neither rejects settle() nor is waited for once failed.
    leftovers.add(Promise.reject(new Error("connection closed")));
    const settling = leftovers.settle(60_000);
    answer();
    await settling;
    expect(answered).toBe(true);
    // One that never answers holds the close only for the bound.
    leftovers.add(new Promise(() => undefined));
    expect(await Promise.race([leftovers.settle(10).then(() => "bounded"), never(5_000)])).toBe(
      "bounded",
    );
  });
});

/** A promise that settles only after `ms`, as the test's failure. */
function never(ms: number): Promise<string> {
  return new Promise((resolve) => setTimeout(() => resolve("unbounded"), ms).unref());
}
