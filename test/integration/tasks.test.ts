/**
 * Long-running calls through the built `mcpx` for clients without MCP Tasks: a call that
 * outlives `taskAfter` answers with a handle (`mcpx://tasks/<id>`) and goes on; polling the
 * handle with `resources` or `call` gives its result once there; progress reaches the client
 * meanwhile. The modern fixture's slow tool; a 2025-era and a 2026-07-28 client, stdio and HTTP.
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ERAS,
  eventually,
  fixtureServer,
  startHttp,
  startStdio,
  text,
  writeConfig,
  type Era,
  type Running,
} from "../helpers/proxy.js";

const TASK_AFTER = 500;
const config = writeConfig({
  taskAfter: TASK_AFTER,
  mcpServers: { modern: fixtureServer("modern.mjs") },
});

const starts = {
  stdio: (era: Era) => startStdio(config, [], { era }),
  http: (era: Era) => startHttp(config, [], {}, { era }),
};
const matrix = (["stdio", "http"] as const).flatMap((t) => ERAS.map((era) => [t, era] as const));

type TaskMeta = { uri: string; status: string } | undefined;
const taskOf = (result: unknown): TaskMeta =>
  (result as { _meta?: Record<string, unknown> })._meta?.["mcpx/task"] as TaskMeta;

describe.each(matrix)("long-running calls over %s, %s client", (transport, era) => {
  let proxy: Running;
  let client: Client;

  beforeAll(async () => {
    proxy = await starts[transport](era);
    client = proxy.client;
    // The first call opens the client's upstream session, which may itself outlive taskAfter.
    const first = await client.callTool({
      name: "call",
      arguments: { method: "modern.slow", arguments: { ms: 1 } },
    });
    const task = taskOf(first);
    if (task) {
      await eventually(async () => {
        const polled = await client.callTool({ name: "resources", arguments: { uri: task.uri } });
        return taskOf(polled)?.status === "completed";
      }, 15_000);
    }
  });
  afterAll(async () => {
    await proxy?.close();
  });

  const slow = (ms: number, onprogress?: (p: { progress: number; message?: string }) => void) =>
    client.callTool(
      { name: "call", arguments: { method: "modern.slow", arguments: { ms } } },
      onprogress ? { onprogress } : {},
    );

  it("answers a call that ends within taskAfter as always, without a handle", async () => {
    const result = await slow(20);
    expect(text(result)).toBe("done");
    expect(taskOf(result)).toBeUndefined();
  });

  it("hands off a call that outlives taskAfter, with heartbeats first, and gives its result when polled", async () => {
    const progress: { progress: number; message?: string }[] = [];
    const handed = await slow(2_000, (p) => progress.push(p));
    // Answered at taskAfter, before the tool's 2 s: its task is still working (below).
    expect(handed.isError).toBeFalsy();
    const task = taskOf(handed);
    expect(task?.status).toBe("working");
    expect(task?.uri).toMatch(/^mcpx:\/\/tasks\/[0-9a-f-]{36}$/);
    expect(text(handed)).toContain(`resources({ uri: "${task!.uri}" })`);
    // Heartbeats while the client waited, increasing as the spec requires.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]!.message).toMatch(/modern\.slow still running/);
    progress.forEach(
      (p, i) => i > 0 && expect(p.progress).toBeGreaterThan(progress[i - 1]!.progress),
    );
    // Polling waits up to taskAfter for the result; until then it says the call still runs.
    let polled: unknown;
    await eventually(async () => {
      polled = await client.callTool({ name: "resources", arguments: { uri: task!.uri } });
      return taskOf(polled)?.status === "completed";
    }, 15_000);
    expect(text(polled)).toBe("done");
    // Kept for a while: polling again gives it again, also through call.
    const again = await client.callTool({ name: "call", arguments: { method: task!.uri } });
    expect(text(again)).toBe("done");
    expect(taskOf(again)?.status).toBe("completed");
  });

  it("says when a poll finds the call still running", async () => {
    const handed = await slow(3_000);
    const task = taskOf(handed)!;
    const polled = await client.callTool({ name: "resources", arguments: { uri: task.uri } });
    expect(taskOf(polled)?.status).toBe("working");
    expect(text(polled)).toMatch(/modern\.slow is still running \(.* so far\)\. Poll again/);
  });

  it("answers an unknown handle as an error naming why", async () => {
    const polled = await client.callTool({
      name: "resources",
      arguments: { uri: "mcpx://tasks/00000000-0000-0000-0000-000000000000" },
    });
    expect(polled.isError).toBe(true);
    expect(text(polled)).toMatch(/No task mcpx:\/\/tasks\/0+-.*only their caller reads them/);
  });
});
