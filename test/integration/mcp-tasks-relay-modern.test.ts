/**
 * MCP Tasks relayed to a 2026-07-28 upstream through the tasks extension (test/fixtures/
 * upstreams/tasks-modern.mjs: the SDK v2 server answering tools/call with `resultType: "task"`,
 * over stdio and streamable HTTP), through the built `mcpx`: mcpx declares the extension on the
 * call, catches the task answer before the SDK client decodes it, follows it with tasks/get,
 * answers its input requests through the calling client (tasks/update), takes the inlined
 * result or error, and cancels it upstream. Clients see mcpx's task ids only, per client, in
 * both eras downstream. The fixture logs what it saw (TASKS_LOG).
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as z from "zod";
import { askingClient, connectHttp } from "../helpers/asking.js";
import { newClient } from "../helpers/clients.js";
import { attr, otlpReceiver, type OtlpSpan } from "../helpers/otlp.js";
import { HttpRpc } from "../helpers/rpc.js";
import { modern, pollCompleted, rawTaskCall, Task, ToolResult } from "../helpers/tasks.js";
import {
  eventually,
  fixtureServer,
  startHttp,
  startHttpFixture,
  stop,
  tempDir,
  text,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

interface Logged {
  event: string;
  taskId?: string;
  text?: string;
  method?: string;
  traceparent?: string;
  header?: string;
  name?: string;
}

const dir = tempDir();
const LOG = path.join(dir, "tasks.log");
let remote: { url: string; child: ChildProcess };
let config: string;

function logged(): Logged[] {
  if (!existsSync(LOG)) return [];
  return readFileSync(LOG, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Logged);
}

/** What the upstream saw of the task it ran for `label`. */
function upstream(label: string): Logged[] {
  return logged().filter((e) => e.text === label);
}

/** The follow-up requests the upstream got for its task `taskId`. */
function followUps(taskId: string | undefined): Logged[] {
  return logged().filter((e) => e.event === "rpc" && e.taskId === taskId);
}

const call = (tool: string, args: Record<string, unknown>, server = "jobs") => ({
  name: "call",
  arguments: { method: `${server}.${tool}`, arguments: args },
});

beforeAll(async () => {
  remote = await startHttpFixture({ TASKS_HTTP: "1", TASKS_LOG: LOG }, "tasks-modern.mjs");
  config = writeConfig(
    {
      taskAfter: 1_000,
      mcpServers: {
        jobs: fixtureServer("tasks-modern.mjs", { TASKS_LOG: LOG }),
        remote: { url: remote.url },
      },
    },
    dir,
  );
});
afterAll(async () => {
  if (remote) await stop(remote.child);
});

describe("tasks relayed to a 2026-07-28 upstream, 2025-11-25 client over HTTP", () => {
  let mcpx: RunningHttp;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let other: Client;

  beforeAll(async () => {
    mcpx = await startHttp(config, [], {}, { era: "legacy" });
    client = newClient("legacy", "tasks-client");
    transport = new StreamableHTTPClientTransport(new URL(mcpx.url));
    await client.connect(transport);
    other = newClient("legacy", "other-client");
    await other.connect(new StreamableHTTPClientTransport(new URL(mcpx.url)));
    // Each client's upstream session opens on its first call: not what these tests time.
    for (const c of [client, other]) {
      await c.callTool(call("slow", { ms: 1, text: `warm ${c === client}` }));
    }
    await client.callTool(call("slow", { ms: 1, text: "warm remote" }, "remote"));
  });
  afterAll(async () => {
    await other?.close();
    await client?.close();
    await mcpx?.close();
  });

  const get = (c: Client, taskId: string) =>
    c.request({ method: "tasks/get", params: { taskId } }, Task);

  it("follows the upstream's task: its status message, then its inlined result", async () => {
    const { task } = await rawTaskCall(mcpx.url, transport, {
      ...call("slow", { ms: 1_500, text: "m1" }),
      task: { ttl: 60_000 },
    });
    await eventually(() => upstream("m1").length > 0, 10_000, "created upstream");
    const upstreamId = upstream("m1")[0]?.taskId;
    expect(upstreamId).toBeDefined();
    expect(upstreamId).not.toBe(task.taskId);
    let seen: z.infer<typeof Task> | undefined;
    await eventually(
      async () => {
        seen = await get(client, task.taskId);
        return seen.statusMessage === "halfway" || seen.status !== "working";
      },
      10_000,
      "the upstream's status message",
      50,
    );
    expect(seen).toMatchObject({ status: "working", statusMessage: "halfway" });
    const result = await client.request(
      { method: "tasks/result", params: { taskId: task.taskId } },
      ToolResult,
    );
    expect(text(result)).toBe("m1");
    expect(JSON.stringify(result)).not.toContain(upstreamId);
    expect(upstream("m1").map((e) => e.event)).toEqual(["created", "halfway", "completed"]);
    // mcpx polled the upstream's task (2026: no tasks/result; the last get inlines the result).
    const methods = followUps(upstreamId).map((e) => e.method);
    expect(methods.length).toBeGreaterThanOrEqual(2);
    expect(new Set(methods)).toEqual(new Set(["tasks/get"]));
  });

  it("keeps the task from another client, and cancels it upstream on the owner's tasks/cancel", async () => {
    const { task } = await rawTaskCall(mcpx.url, transport, {
      ...call("slow", { ms: 20_000, text: "m2" }),
      task: {},
    });
    await eventually(() => upstream("m2").length > 0, 10_000, "created upstream");
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      await expect(
        other.request({ method, params: { taskId: task.taskId } }, Task),
      ).rejects.toThrow(/No task .* of this client/);
    }
    const upstreamId = upstream("m2")[0]!.taskId!;
    await expect(get(client, upstreamId)).rejects.toThrow(/No task .* of this client/);
    const cancelled = await client.request(
      { method: "tasks/cancel", params: { taskId: task.taskId } },
      Task,
    );
    expect(cancelled.status).toBe("cancelled");
    await eventually(
      () => upstream("m2").some((e) => e.event === "cancelled"),
      10_000,
      "the upstream task cancelled",
    );
    expect(followUps(upstreamId).some((e) => e.method === "tasks/cancel")).toBe(true);
  });

  it("runs a plain call through the upstream's task too", async () => {
    const result = await client.callTool(call("slow", { ms: 200, text: "m3" }));
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("m3");
    expect(upstream("m3").map((e) => e.event)).toEqual(["created", "halfway", "completed"]);
  });

  it("asks the calling client what the upstream's task waits for, and answers by tasks/update", async () => {
    const { client: asking, asked } = askingClient("legacy", "asking-client");
    await connectHttp(asking, mcpx.url);
    try {
      // Its upstream session opens on its first call.
      await asking.callTool(call("slow", { ms: 1, text: "warm asking" }));
      const result = await asking.callTool(call("ask", { text: "m4" }), { timeout: 30_000 });
      expect(result.isError).toBeFalsy();
      expect(text(result)).toBe('m4: accept {"answer":"asking-client"}');
      expect(asked.map((a) => [a.method, a.params.message])).toEqual([
        ["elicitation/create", "Confirm m4?"],
      ]);
      const upstreamId = upstream("m4")[0]?.taskId;
      expect(upstream("m4").map((e) => e.event)).toEqual(["created", "answered"]);
      expect(followUps(upstreamId).filter((e) => e.method === "tasks/update")).toHaveLength(1);
    } finally {
      await asking.close();
    }
  });

  it("says the upstream task's error as the call's failure", async () => {
    const result = await client.callTool(call("fail", { text: "m5 went wrong" }));
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("m5 went wrong");
    expect(upstream("m5 went wrong").map((e) => e.event)).toEqual(["created", "failed"]);
  });

  it("sends the follow-ups to an HTTP upstream with Mcp-Name naming its task", async () => {
    const result = await client.callTool(call("slow", { ms: 300, text: "m6" }, "remote"));
    expect(text(result)).toBe("m6");
    const upstreamId = upstream("m6")[0]?.taskId;
    const gets = followUps(upstreamId);
    expect(gets.length).toBeGreaterThan(0);
    for (const e of gets) expect(e.name).toBe(upstreamId);
  });
  it("cancels a task whose creation was on its way back when the client cancelled the call", async () => {
    // Over streamable HTTP the cancelled request's stream closes, and the task's answer with it;
    // over stdio it arrives after the cancel. Either way the task is cancelled upstream.
    for (const [server, label] of [
      ["remote", "m9"],
      ["jobs", "m10"],
    ] as const) {
      const gone = new AbortController();
      const cancelled = client.callTool(
        call("slow", { ms: 20_000, text: label, answerAfterMs: 300 }, server),
        { signal: gone.signal },
      );
      await eventually(() => upstream(label).length > 0, 10_000, `${label} created upstream`);
      gone.abort();
      await expect(cancelled).rejects.toThrow();
      await eventually(
        () => upstream(label).some((e) => e.event === "cancelled"),
        10_000,
        `${label}'s upstream task cancelled`,
      );
      expect(upstream(label).some((e) => e.event === "completed")).toBe(false);
    }
  });
});

describe("tasks relayed to a 2026-07-28 upstream, 2026-07-28 client (tasks extension)", () => {
  let mcpx: RunningHttp;
  let rpc: HttpRpc;
  let stranger: HttpRpc;

  beforeAll(async () => {
    mcpx = await startHttp(config, [], {}, { era: "modern" });
    rpc = new HttpRpc(mcpx.url, "modern", "tasks-client");
    stranger = new HttpRpc(mcpx.url, "modern", "stranger");
    for (const c of [rpc, stranger]) {
      await modern(c, "tools/call", call("slow", { ms: 1, text: `warm modern ${c.name}` }), {});
    }
  });
  afterAll(async () => {
    await mcpx?.close();
  });

  it("polls its own task to the upstream task's result; a stranger never reaches it", async () => {
    const answer = await modern(rpc, "tools/call", call("slow", { ms: 2_000, text: "m7" }));
    expect(answer.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = answer.result?.taskId as string;
    expect((await modern(stranger, "tasks/get", { taskId })).error?.code).toBe(-32602);
    expect((await modern(stranger, "tasks/cancel", { taskId })).error?.code).toBe(-32602);
    const polled = await pollCompleted(rpc, taskId, 100);
    expect(text(polled?.result)).toBe("m7");
    expect(upstream("m7").map((e) => e.event)).toEqual(["created", "halfway", "completed"]);
    expect(upstream("m7")[0]?.taskId).not.toBe(taskId);
  });

  it("cancels the upstream task on tasks/cancel", async () => {
    const answer = await modern(rpc, "tools/call", call("slow", { ms: 20_000, text: "m8" }));
    const taskId = answer.result?.taskId as string;
    expect(answer.result?.resultType).toBe("task");
    expect((await modern(rpc, "tasks/cancel", { taskId })).error).toBeUndefined();
    await eventually(
      () => upstream("m8").some((e) => e.event === "cancelled"),
      10_000,
      "the upstream task cancelled",
    );
  });
});

describe("a span per task follow-up toward the upstream", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const TRACEPARENT = `00-${TRACE}-00f067aa0ba902b7-01`;

  it("tasks/get, tasks/result and tasks/cancel are children of the call's upstream span, their traceparent sent", async () => {
    const otlp = await otlpReceiver();
    // tasks/cancel answered 400 ms after the task is cancelled: mcpx, shut down meanwhile,
    // waits for the answer (its span ends "ok", not cut off as "failed").
    const slowCancel = await startHttpFixture(
      { TASKS_HTTP: "1", TASKS_LOG: LOG, TASKS_CANCEL_ANSWER_MS: "400" },
      "tasks-modern.mjs",
    );
    let spans: OtlpSpan[] = [];
    try {
      const traced = writeConfig(
        {
          taskAfter: 5_000,
          tracing: { otlp: otlp.url },
          mcpServers: {
            remote: { url: slowCancel.url },
            // 2025-11-25 relay: tasks/result.
            legacy: fixtureServer("tasks.mjs"),
          },
        },
        tempDir(),
      );
      const mcpx = await startHttp(
        traced,
        [],
        { traceparent: TRACEPARENT },
        { era: "legacy", client: newClient("legacy", "traced-client") },
      );
      try {
        expect(
          text(await mcpx.client.callTool(call("slow", { ms: 300, text: "s1" }, "remote"))),
        ).toBe("s1");
        expect(
          text(await mcpx.client.callTool(call("slow", { ms: 300, text: "s2" }, "legacy"))),
        ).toBe("s2");
        // Cancelled by its client once the upstream runs it: tasks/cancel follows.
        const gone = new AbortController();
        const cancelled = mcpx.client.callTool(call("slow", { ms: 20_000, text: "s3" }, "remote"), {
          signal: gone.signal,
        });
        await eventually(() => upstream("s3").length > 0, 10_000, "created upstream");
        gone.abort();
        await expect(cancelled).rejects.toThrow();
        await eventually(
          () => upstream("s3").some((e) => e.event === "cancelled"),
          10_000,
          "the upstream task cancelled",
        );
      } finally {
        // Spans are exported at the latest when mcpx shuts down.
        await mcpx.close();
        await otlp.close();
        spans = otlp.spans;
      }
    } finally {
      await stop(slowCancel.child);
    }
    const byId = new Map(spans.map((sp) => [sp.spanId, sp]));
    const parentOf = (sp: OtlpSpan) => byId.get(sp.parentSpanId ?? "")?.name;
    const named = (name: string) => spans.filter((sp) => sp.name === name);

    // Each follow-up: a client span under its call's tools/call span, in the client's trace.
    const gets = named("tasks/get remote");
    expect(gets.length).toBeGreaterThan(0);
    const followUpSpans = [
      ...gets,
      ...named("tasks/get legacy"),
      ...named("tasks/result legacy"),
      ...named("tasks/cancel remote"),
    ];
    expect(named("tasks/result legacy")).toHaveLength(1);
    expect(named("tasks/cancel remote")).toHaveLength(1);
    for (const sp of followUpSpans) {
      expect(sp).toMatchObject({ traceId: TRACE, kind: 3 });
      const server = sp.name.split(" ")[1];
      expect(parentOf(sp)).toBe(`tools/call ${server}.slow`);
      expect(attr(sp, "mcp.method.name")).toBe(sp.name.split(" ")[0]);
      expect(attr(sp, "mcpx.server")).toBe(server);
    }
    expect(attr(named("tasks/cancel remote")[0]!, "mcpx.outcome")).toBe("ok");

    // The upstream received each follow-up's own span as its traceparent, in _meta and header.
    for (const label of ["s1", "s3"]) {
      const sent = followUps(upstream(label)[0]?.taskId);
      expect(sent.length).toBeGreaterThan(0);
      for (const e of sent) {
        expect(e.header).toBe(e.traceparent);
        const [, trace, spanId] = (e.traceparent ?? "").split("-");
        expect(trace).toBe(TRACE);
        const span = byId.get(spanId ?? "");
        expect(span?.name).toBe(`${e.method} remote`);
      }
    }
  }, 60_000);
});
