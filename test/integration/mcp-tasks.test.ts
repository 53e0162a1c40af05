/**
 * MCP Tasks through the built `mcpx` over HTTP, both eras, the modern fixture's slow tool (a real
 * SDK v2 upstream) doing the work:
 *
 * - a 2025-11-25 client (the SDK v2 client; its task methods sent with schemas of the test's
 *   own, the SDK having only their wire vocabulary) runs `call` as a task: tasks/get,
 *   tasks/result, tasks/list, tasks/cancel; another client's session never reaches its tasks;
 * - a 2026-07-28 client declaring the tasks extension (raw JSON-RPC: the SDK client refuses a
 *   `resultType: "task"` answer) gets a task for a call outliving taskAfter, polls it with
 *   tasks/get until the result is inlined, cancels one; another caller never reaches it; without
 *   the extension the same call answers with the mcpx:// handle as before.
 */
import { describe, expect, it } from "vitest";
import {
  CreateTask,
  legacyTasksHttp,
  modern,
  modernTasksHttp,
  pollCompleted,
  rawTaskCall,
  recordStatuses,
  Task,
  taskRequest,
  TASKS_EXT,
  TaskList,
  ToolResult,
} from "../helpers/tasks.js";
import { eventually, fixtureServer, startStdio, text, writeConfig } from "../helpers/proxy.js";

const TASK_AFTER = 400;
const config = writeConfig({
  taskAfter: TASK_AFTER,
  mcpServers: { modern: fixtureServer("modern.mjs") },
});

const slowCall = (ms: number) => ({
  name: "call",
  arguments: { method: "modern.slow", arguments: { ms } },
});

describe("MCP Tasks, 2025-11-25 client over HTTP", () => {
  const env = legacyTasksHttp(config, (c) => c.callTool(slowCall(1)));

  const taskCall = (ms: number, ttl?: number) =>
    rawTaskCall(env.mcpx.url, env.transport, {
      ...slowCall(ms),
      task: ttl === undefined ? {} : { ttl },
    });

  it("declares the tasks capability and lists call with taskSupport optional", async () => {
    expect(env.client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await env.client.listTools();
    const call = tools.find((t) => t.name === "call") as { execution?: unknown };
    expect(call.execution).toEqual({ taskSupport: "optional" });
    const describe = tools.find((t) => t.name === "describe") as { execution?: unknown };
    expect(describe.execution).toBeUndefined();
  });

  it("answers a task-augmented call at once; tasks/get, tasks/list, then tasks/result gives the call's result", async () => {
    const { task } = await taskCall(1_500, 120_000);
    // Answered before the call ended: a timing bound would only add CI flakes.
    expect(task.status).toBe("working");
    expect(task.ttl).toBe(120_000);
    expect(Date.parse(task.createdAt)).not.toBeNaN();

    const got = await taskRequest(env.client, "get", task.taskId);
    expect(got).toMatchObject({ taskId: task.taskId, status: "working" });
    const listed = await env.client.request({ method: "tasks/list", params: {} }, TaskList);
    expect(listed.tasks.map((t) => t.taskId)).toContain(task.taskId);

    // Blocks until the call ends: its result as the call would have answered.
    const result = await taskRequest(env.client, "result", task.taskId, ToolResult);
    expect(text(result)).toBe("done");
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({
      taskId: task.taskId,
    });
    const after = await taskRequest(env.client, "get", task.taskId);
    expect(after.status).toBe("completed");
  });

  it("keeps a client's tasks from another client: unknown to its tasks/get, result, cancel and list", async () => {
    const { task } = await taskCall(1_000);
    for (const method of ["get", "result", "cancel"] as const) {
      await expect(taskRequest(env.other, method, task.taskId)).rejects.toThrow(
        /No task .* of this client/,
      );
    }
    const theirs = await env.other.request({ method: "tasks/list", params: {} }, TaskList);
    expect(theirs.tasks).toEqual([]);
    // Still the owner's, untouched.
    const mine = await taskRequest(env.client, "result", task.taskId, ToolResult);
    expect(text(mine)).toBe("done");
  });

  it("cancels a running task; cancelling it again is refused (-32602), its result is an error", async () => {
    const { task } = await taskCall(10_000);
    const cancelled = await taskRequest(env.client, "cancel", task.taskId);
    expect(cancelled.status).toBe("cancelled");
    await expect(taskRequest(env.client, "cancel", task.taskId)).rejects.toThrow(/already ended/);
    await expect(taskRequest(env.client, "result", task.taskId, ToolResult)).rejects.toThrow(
      /cancelled/,
    );
    const got = await taskRequest(env.client, "get", task.taskId);
    expect(got.status).toBe("cancelled");
  });

  it("fails a task whose call fails (isError), its result the call's error", async () => {
    const { task } = await rawTaskCall(env.mcpx.url, env.transport, {
      name: "call",
      arguments: { method: "modern.nope" },
      task: {},
    });
    const result = await taskRequest(env.client, "result", task.taskId, ToolResult);
    expect(result.isError).toBe(true);
    const got = await taskRequest(env.client, "get", task.taskId);
    expect(got.status).toBe("failed");
    expect(got.statusMessage).toContain("nope");
  });

  it("answers an unknown task id with -32602", async () => {
    await expect(
      env.client.request({ method: "tasks/get", params: { taskId: "no-such-task" } }, Task),
    ).rejects.toThrow(/No task "no-such-task"/);
  });
});

describe("MCP Tasks extension, 2026-07-28 client over HTTP", () => {
  // Each caller's first call opens its upstream session: not what these tests time.
  const env = modernTasksHttp(config, (c) => modern(c, "tools/call", slowCall(1), {}));

  it("declares the extension in server/discover", async () => {
    const answer = await modern(env.rpc, "server/discover", {});
    const caps = answer.result?.capabilities as { extensions?: Record<string, unknown> };
    expect(caps.extensions?.[TASKS_EXT]).toEqual({});
    expect(caps).not.toHaveProperty("tasks");
  });

  it("answers a call within taskAfter with its result, no task", async () => {
    const answer = await modern(env.rpc, "tools/call", slowCall(20));
    expect(answer.result?.resultType).toBe("complete");
    expect(text(answer.result)).toBe("done");
  });

  it("turns a call outliving taskAfter into a task; tasks/get inlines the result once completed", async () => {
    const answer = await modern(env.rpc, "tools/call", slowCall(1_500));
    // "working": answered at taskAfter, before the tool's 1.5 s.
    const created = answer.result!;
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    expect(created.ttlMs).toBeGreaterThan(0);
    expect(created.pollIntervalMs).toBeGreaterThan(0);
    const taskId = created.taskId as string;

    // Another caller never reaches it.
    const theirs = await modern(env.stranger, "tasks/get", { taskId });
    expect(theirs.error?.code).toBe(-32602);
    expect((await modern(env.stranger, "tasks/cancel", { taskId })).error?.code).toBe(-32602);

    const polled = await pollCompleted(env.rpc, taskId, 200);
    expect(polled?.resultType).toBe("complete");
    expect(text(polled?.result)).toBe("done");
  });

  it("cancels a task: acknowledged, then cancelled in tasks/get", async () => {
    const answer = await modern(env.rpc, "tools/call", slowCall(10_000));
    const taskId = answer.result?.taskId as string;
    expect(answer.result?.resultType).toBe("task");
    const ack = await modern(env.rpc, "tasks/cancel", { taskId });
    expect(ack.error).toBeUndefined();
    const got = await modern(env.rpc, "tasks/get", { taskId });
    expect(got.result?.status).toBe("cancelled");
    // tasks/update for a task of this client is acknowledged (mcpx's tasks never wait for input).
    expect((await modern(env.rpc, "tasks/update", { taskId, inputResponses: {} })).error).toBe(
      undefined,
    );
  });

  it("without the extension, the same call answers with the mcpx:// handle", async () => {
    const answer = await modern(env.rpc, "tools/call", slowCall(1_500), {});
    expect(answer.result?.resultType).toBe("complete");
    const meta = answer.result?._meta as Record<string, { uri?: string }> | undefined;
    expect(meta?.["mcpx/task"]?.uri).toMatch(/^mcpx:\/\/tasks\//);
  });
});

describe("MCP Tasks, 2025-11-25 client over stdio", () => {
  it("runs call as a task through the SDK client and sends notifications/tasks/status when it ends", async () => {
    const mcpx = await startStdio(config, [], { era: "legacy" });
    try {
      const statuses = recordStatuses(mcpx.client);
      // The CreateTaskResult carries a text block too, so the SDK client takes it as it is.
      const created = await mcpx.client.request(
        { method: "tools/call", params: { ...slowCall(300), task: {} } },
        CreateTask,
      );
      expect(created.task.status).toBe("working");
      await eventually(() => statuses.length > 0, 15_000, "the task's status");
      expect(statuses).toEqual([
        expect.objectContaining({ taskId: created.task.taskId, status: "completed" }),
      ]);
      const result = await taskRequest(mcpx.client, "result", created.task.taskId, ToolResult);
      expect(text(result)).toBe("done");
    } finally {
      await mcpx.close();
    }
  }, 60_000);
});
