/**
 * MCP Tasks relayed to an upstream that runs tools as tasks itself (test/fixtures/upstreams/
 * tasks.mjs: the SDK v1 experimental tasks API over stdio, as the SDK's example server), through
 * the built `mcpx`: the upstream task is created, followed, its statuses shown in the client's
 * task, its result given by tasks/result (2025-11-25) or tasks/get (2026-07-28 extension), and
 * a client's tasks/cancel reaches it. mcpx's task ids are its own: the upstream's never show,
 * and another client never reaches a task. The fixture logs what it saw (TASKS_LOG).
 */
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import {
  CreateTask,
  legacyTasksHttp,
  modern,
  modernTasksHttp,
  pollCompleted,
  rawTaskCall,
  recordStatuses,
  statusClient,
  taskRequest,
  type TaskStatus,
  ToolResult,
} from "../helpers/tasks.js";
import {
  eventually,
  fixtureServer,
  startStdio,
  tempDir,
  text,
  writeConfig,
} from "../helpers/proxy.js";

interface Logged {
  event: "created" | "halfway" | "completed" | "cancelled";
  taskId: string;
  text: string;
}

const dir = tempDir();
const LOG = path.join(dir, "tasks.log");
const config = writeConfig(
  { taskAfter: 400, mcpServers: { jobs: fixtureServer("tasks.mjs", { TASKS_LOG: LOG }) } },
  dir,
);

/** What the upstream saw of the task it ran for `text`. */
function upstream(text: string): Logged[] {
  if (!existsSync(LOG)) return [];
  return readFileSync(LOG, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Logged)
    .filter((e) => e.text === text);
}

const slow = (ms: number, text: string) => ({
  name: "call",
  arguments: { method: "jobs.slow", arguments: { ms, text } },
});

describe("tasks relayed to a task-capable upstream, 2025-11-25 client over HTTP", () => {
  // Each client's upstream session opens on its first call: not what these tests time.
  const env = legacyTasksHttp(config, (c, name) => c.callTool(slow(1, `warm ${name}`)));
  const get = (c: Client, taskId: string) => taskRequest(c, "get", taskId);

  it("creates the task upstream, shows its status message, and gives its result by tasks/result", async () => {
    const { task } = await rawTaskCall(env.mcpx.url, env.transport, {
      ...slow(1_500, "one"),
      task: { ttl: 60_000 },
    });
    expect(task.status).toBe("working");
    await eventually(() => upstream("one").some((e) => e.event === "created"), 10_000, "created");
    const [created] = upstream("one");
    // mcpx's id, not the upstream's.
    expect(created?.taskId).not.toBe(task.taskId);
    // The upstream's "halfway" status message shows in the client's task.
    let seen: TaskStatus | undefined;
    await eventually(
      async () => {
        seen = await get(env.client, task.taskId);
        return seen.statusMessage === "halfway" || seen.status !== "working";
      },
      10_000,
      "the upstream's status message",
      50,
    );
    expect(seen).toMatchObject({ status: "working", statusMessage: "halfway" });
    const result = await taskRequest(env.client, "result", task.taskId, ToolResult);
    expect(text(result)).toBe("one");
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({
      taskId: task.taskId,
    });
    expect(JSON.stringify(result)).not.toContain(created!.taskId);
    expect(upstream("one").map((e) => e.event)).toEqual(["created", "halfway", "completed"]);
    expect((await get(env.client, task.taskId)).status).toBe("completed");
  });

  it("sends the task's statuses on the session's GET stream, in order, with mcpx's id; another session never hears them", async () => {
    const owner = await statusClient(env.mcpx.url, "stream-owner");
    const stranger = await statusClient(env.mcpx.url, "stream-stranger");
    try {
      const { task } = await rawTaskCall(env.mcpx.url, owner.transport, {
        ...slow(600, "streamed"),
        task: {},
      });
      await eventually(
        () => owner.statuses.some((s) => s.status === "completed"),
        15_000,
        "the completed status on the GET stream",
      );
      expect(owner.statuses.map((s) => [s.taskId, s.status, s.statusMessage])).toEqual([
        [task.taskId, "working", "halfway"],
        [task.taskId, "completed", undefined],
      ]);
      // mcpx's id only: never the upstream's.
      expect(upstream("streamed")[0]?.taskId).not.toBe(task.taskId);
      // The stranger's own stream works (its own task's statuses arrive) and held none of the owner's.
      const theirs = await rawTaskCall(env.mcpx.url, stranger.transport, {
        ...slow(1, "stranger's"),
        task: {},
      });
      await eventually(
        () => stranger.statuses.some((s) => s.status === "completed"),
        15_000,
        "the stranger's own completed status",
      );
      expect(new Set(stranger.statuses.map((s) => s.taskId))).toEqual(
        new Set([theirs.task.taskId]),
      );
    } finally {
      await owner.client.close();
      await stranger.client.close();
    }
  });

  it("cancels a task whose creation was on its way back when the client cancelled the call", async () => {
    const gone = new AbortController();
    const cancelled = env.client.callTool(
      {
        name: "call",
        arguments: {
          method: "jobs.slow",
          arguments: { ms: 20_000, text: "late", answerAfterMs: 300 },
        },
      },
      { signal: gone.signal },
    );
    await eventually(() => upstream("late").length > 0, 10_000, "created upstream");
    gone.abort();
    await expect(cancelled).rejects.toThrow();
    // notifications/cancelled never cancels a task: mcpx follows the late answer to tasks/cancel.
    await eventually(
      () => upstream("late").some((e) => e.event === "cancelled"),
      10_000,
      "the upstream task cancelled",
    );
    expect(upstream("late").some((e) => e.event === "completed")).toBe(false);
  });

  it("keeps the task from another env.client, and cancels it upstream on the owner's tasks/cancel", async () => {
    const { task } = await rawTaskCall(env.mcpx.url, env.transport, {
      ...slow(20_000, "two"),
      task: {},
    });
    await eventually(() => upstream("two").length > 0, 10_000, "created upstream");
    for (const method of ["get", "result", "cancel"] as const) {
      await expect(taskRequest(env.other, method, task.taskId)).rejects.toThrow(
        /No task .* of this client/,
      );
    }
    // Nor by the upstream's own id.
    const upstreamId = upstream("two")[0]!.taskId;
    await expect(get(env.client, upstreamId)).rejects.toThrow(/No task .* of this client/);
    expect(upstream("two").map((e) => e.event)).toEqual(["created"]);

    const cancelled = await taskRequest(env.client, "cancel", task.taskId);
    expect(cancelled.status).toBe("cancelled");
    await eventually(
      () => upstream("two").some((e) => e.event === "cancelled"),
      10_000,
      "the upstream task cancelled",
    );
  });

  it("runs a tool that only runs as a task for a plain call (the handle's path)", async () => {
    const result = await env.client.callTool({
      name: "call",
      arguments: { method: "jobs.needs", arguments: { text: "three" } },
    });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("needs: three");
    expect(upstream("three").map((e) => e.event)).toEqual(["created", "completed"]);
  });

  it("for a plain call outliving taskAfter, the handle reads the upstream task's result", async () => {
    const first = await env.client.callTool(slow(1_200, "four"));
    const meta = first._meta as Record<string, { uri?: string }> | undefined;
    const uri = meta?.["mcpx/task"]?.uri;
    expect(uri).toMatch(/^mcpx:\/\/tasks\//);
    let polled = "";
    await eventually(
      async () => {
        polled = text(await env.client.callTool({ name: "resources", arguments: { uri } }));
        return !polled.includes("still running");
      },
      15_000,
      "the handle's result",
      100,
    );
    expect(polled).toBe("four");
    expect(upstream("four").map((e) => e.event)).toEqual(["created", "halfway", "completed"]);
  });
});

describe("tasks relayed to a task-capable upstream, 2026-07-28 client (tasks extension)", () => {
  const env = modernTasksHttp(config, (c) =>
    modern(c, "tools/call", slow(1, `warm modern ${c.name}`), {}),
  );

  it("polls the task to its inlined result; a stranger never reaches it", async () => {
    const answer = await modern(env.rpc, "tools/call", slow(1_500, "five"));
    expect(answer.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = answer.result?.taskId as string;
    expect((await modern(env.stranger, "tasks/get", { taskId })).error?.code).toBe(-32602);
    expect((await modern(env.stranger, "tasks/cancel", { taskId })).error?.code).toBe(-32602);
    const polled = await pollCompleted(env.rpc, taskId, 100);
    expect(text(polled?.result)).toBe("five");
    expect(upstream("five").map((e) => e.event)).toEqual(["created", "halfway", "completed"]);
    expect(upstream("five")[0]?.taskId).not.toBe(taskId);
  });

  it("cancels the upstream task on tasks/cancel", async () => {
    const answer = await modern(env.rpc, "tools/call", slow(20_000, "six"));
    const taskId = answer.result?.taskId as string;
    expect(answer.result?.resultType).toBe("task");
    expect((await modern(env.rpc, "tasks/cancel", { taskId })).error).toBeUndefined();
    expect((await modern(env.rpc, "tasks/get", { taskId })).result?.status).toBe("cancelled");
    await eventually(
      () => upstream("six").some((e) => e.event === "cancelled"),
      10_000,
      "the upstream task cancelled",
    );
  });
});

describe("tasks relayed to a task-capable upstream, 2025-11-25 client over stdio", () => {
  it("relays the upstream task's statuses as notifications/tasks/status", async () => {
    const mcpx = await startStdio(config, [], { era: "legacy" });
    try {
      const statuses = recordStatuses(mcpx.client);
      const created = await mcpx.client.request(
        { method: "tools/call", params: { ...slow(600, "seven"), task: {} } },
        CreateTask,
      );
      const taskId = created.task.taskId;
      await eventually(
        () => statuses.some((s) => s.status === "completed"),
        15_000,
        "the completed status",
      );
      expect(statuses.map((s) => [s.taskId, s.status, s.statusMessage])).toEqual([
        [taskId, "working", "halfway"],
        [taskId, "completed", undefined],
      ]);
    } finally {
      await mcpx.close();
    }
  }, 60_000);
});
