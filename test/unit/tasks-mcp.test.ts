/**
 * The MCP Tasks store (src/executor/tasks-mcp.ts) on a fake clock: owners kept apart, the
 * spec's status rules (cancelled stays cancelled; isError fails a 2025 task, completes a 2026
 * one), the per-owner bound, and expiry `ttl` after creation cancelling work still running.
 */
import { describe, expect, it } from "vitest";
import { McpTasks } from "../../src/executor/tasks-mcp.js";
import type { ToolResult } from "../../src/types.js";
import { FakeClock } from "../helpers/clock.js";

const ok: ToolResult = { content: [{ type: "text", text: "fine" }] };
const bad: ToolResult = { content: [{ type: "text", text: "upstream said no" }], isError: true };

/** Work that ends when told, and tells whether it was aborted. */
function gate() {
  let finish!: (r: ToolResult) => void;
  let signal!: AbortSignal;
  const work = (s: AbortSignal) => {
    signal = s;
    return new Promise<ToolResult>((resolve) => (finish = resolve));
  };
  return { work, finish: (r: ToolResult) => finish(r), aborted: () => signal.aborted };
}

function started(store: McpTasks, owner: string, work: (s: AbortSignal) => Promise<ToolResult>) {
  const start = store.start(owner, work, { isErrorFails: true });
  if ("refused" in start) throw new Error(start.refused);
  return start.task;
}

describe("McpTasks", () => {
  it("keeps each owner's tasks from every other owner", async () => {
    const store = new McpTasks(new FakeClock());
    const g = gate();
    const task = started(store, "a", g.work);
    expect(store.get("a", task.taskId)?.status).toBe("working");
    expect(store.get("b", task.taskId)).toBeUndefined();
    expect(store.list("b")).toEqual([]);
    expect(store.cancel("b", task.taskId)).toBeUndefined();
    expect(await store.outcome("b", task.taskId)).toBeUndefined();
    expect(g.aborted()).toBe(false);
    g.finish(ok);
    const outcome = await store.outcome("a", task.taskId);
    expect(outcome?.task.status).toBe("completed");
    expect(outcome?.result).toBe(ok);
  });

  it("fails a 2025 task on isError, with the text as its status message; a 2026 one completes", async () => {
    const store = new McpTasks(new FakeClock());
    const legacy = started(store, "a", () => Promise.resolve(bad));
    const modern = store.start("a", () => Promise.resolve(bad), { isErrorFails: false });
    const l = await store.outcome("a", legacy.taskId);
    expect(l?.task).toMatchObject({ status: "failed", statusMessage: "upstream said no" });
    if ("refused" in modern) throw new Error("refused");
    expect((await store.outcome("a", modern.task.taskId))?.task.status).toBe("completed");
  });

  it("cancels running work; cancelled stays cancelled when the work ends after", async () => {
    const statuses: string[] = [];
    const store = new McpTasks(new FakeClock());
    const g = gate();
    const start = store.start("a", g.work, { onStatus: (t) => statuses.push(t.status) });
    if ("refused" in start) throw new Error("refused");
    const id = start.task.taskId;
    expect(store.cancel("a", id)).toMatchObject({ status: "cancelled" });
    expect(g.aborted()).toBe(true);
    g.finish(ok);
    const outcome = await store.outcome("a", id);
    expect(outcome?.task.status).toBe("cancelled");
    expect(outcome?.result).toBeUndefined();
    expect(outcome?.error).toMatch(/cancelled/);
    expect(store.cancel("a", id)).toBe("terminal");
    expect(statuses).toEqual(["cancelled"]);
  });

  it("refuses a task past the per-owner bound, for that owner only", () => {
    const store = new McpTasks(new FakeClock(), { maxPerOwner: 2 });
    started(store, "a", gate().work);
    started(store, "a", gate().work);
    const third = store.start("a", gate().work);
    expect("refused" in third && third.refused).toMatch(/holds 2 tasks/);
    expect(() => started(store, "b", gate().work)).not.toThrow();
  });

  it("drops a task ttl after its creation (held within the limits), cancelling its work", async () => {
    const clock = new FakeClock();
    const store = new McpTasks(clock, { maxTtlMs: 10_000 });
    const g = gate();
    const start = store.start("a", g.work, { ttlMs: 60_000 });
    if ("refused" in start) throw new Error("refused");
    expect(start.task.ttlMs).toBe(10_000);
    await clock.advance(9_999);
    expect(store.get("a", start.task.taskId)).toBeDefined();
    await clock.advance(1);
    expect(store.get("a", start.task.taskId)).toBeUndefined();
    expect(g.aborted()).toBe(true);
  });

  it("answers within(ms) with the outcome only if the task ends in time", async () => {
    const clock = new FakeClock();
    const store = new McpTasks(clock);
    const g = gate();
    const task = started(store, "a", g.work);
    const waiting = store.within("a", task.taskId, 500);
    await clock.advance(500);
    expect(await waiting).toBeUndefined();
    const again = store.within("a", task.taskId, 500);
    g.finish(ok);
    expect((await again)?.result).toBe(ok);
  });
});
