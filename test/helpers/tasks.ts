/**
 * MCP Tasks on the wire, for tests: the task shapes (the SDK v2 has the 2025-11-25 vocabulary
 * only), a raw task-augmented tools/call on an SDK client's 2025 session, and a raw 2026-07-28
 * request declaring the tasks extension; a 2025 client hearing its tasks' statuses on its GET
 * stream; and the setups the tasks tests share (mcpx over HTTP with two clients of one era).
 */
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, expect } from "vitest";
import * as z from "zod";
import { MODERN_VERSION, newClient } from "./clients.js";
import { eventually } from "./eventually.js";
import { serialFetch } from "./nginx.js";
import { startHttp, type RunningHttp } from "./proxy.js";
import { HttpRpc, parseMessages, type RpcAnswer } from "./rpc.js";

export const TASKS_EXT = "io.modelcontextprotocol/tasks";
export const LEGACY_VERSION = "2025-11-25";
export const Task = z.looseObject({
  taskId: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number().nullable(),
  pollInterval: z.number().optional(),
  statusMessage: z.string().optional(),
});
export const CreateTask = z.looseObject({ task: Task });
export const ToolResult = z.looseObject({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export const TaskList = z.looseObject({ tasks: z.array(Task) });

/**
 * A task-augmented tools/call on the SDK client's session, sent raw: the SDK v2 client refuses a
 * tools/call answer without `content` (a CreateTaskResult has none).
 */
export async function rawTaskCall(
  url: string,
  transport: StreamableHTTPClientTransport,
  params: Record<string, unknown>,
): Promise<z.infer<typeof CreateTask>> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": transport.sessionId!,
      "mcp-protocol-version": LEGACY_VERSION,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: "task-call", method: "tools/call", params }),
  });
  const messages = parseMessages(res.headers.get("content-type") ?? "", await res.text());
  const answer = messages.find((m) => m.id === "task-call") as { result?: unknown } | undefined;
  if (!answer?.result) throw new Error(`no task: ${JSON.stringify(messages)}`);
  return CreateTask.parse(answer.result);
}

/** A raw 2026-07-28 request, its client declaring `capabilities` (the tasks extension or not). */
export async function modern(
  rpc: HttpRpc,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { extensions: { [TASKS_EXT]: {} } },
): Promise<RpcAnswer> {
  const id = `${rpc.name}-${Math.random().toString(36).slice(2)}`;
  const name = params.name ?? params.taskId;
  const x = await rpc.post(
    {
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
          "io.modelcontextprotocol/clientInfo": { name: rpc.name, version: "1" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    },
    method,
    name,
  );
  const answer = x.messages.find((m) => m.id === id);
  if (!answer) throw new Error(`${method}: no answer (HTTP ${x.status}): ${x.body.slice(0, 300)}`);
  return answer as unknown as RpcAnswer;
}

export type TaskStatus = z.infer<typeof Task>;

/** A 2025 SDK client over HTTP with its GET stream open, recording each notifications/tasks/status. */
export interface StatusClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  statuses: TaskStatus[];
  /** Every request it made, with the replica (`X-Replica`) that answered. */
  served: ReturnType<typeof serialFetch>["served"];
}

export async function statusClient(url: string, name: string): Promise<StatusClient> {
  const lb = serialFetch();
  const client = newClient("legacy", name);
  const statuses = recordStatuses(client);
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: lb.fetch });
  await client.connect(transport);
  await eventually(
    () => lb.served.some((s) => s.http === "GET" && s.status === 200),
    10_000,
    "the GET stream to open",
  );
  return { client, transport, statuses, served: lb.served };
}

/** tasks/<method> of `taskId` on an SDK client's 2025 session, its answer read by `schema`. */
export function taskRequest<S extends z.ZodType = typeof Task>(
  client: Client,
  method: "get" | "result" | "cancel",
  taskId: string,
  schema?: S,
): Promise<z.infer<S>> {
  return client.request(
    { method: `tasks/${method}`, params: { taskId } },
    schema ?? Task,
  ) as Promise<z.infer<S>>;
}

/** mcpx over HTTP in the 2025 era, with two SDK clients (sessions): the tasks' owner and another. */
export interface LegacyTasksHttp {
  mcpx: RunningHttp;
  client: Client;
  /** `client`'s transport (its session id, for rawTaskCall). */
  transport: StreamableHTTPClientTransport;
  other: Client;
}

/**
 * Start a {@link LegacyTasksHttp} in this describe block's beforeAll (each client then runs
 * `warm`: its upstream session's start is not what the tests time), closed in its afterAll.
 * Its fields are set once beforeAll has run.
 */
export function legacyTasksHttp(
  config: string,
  warm: (client: Client, name: string) => Promise<unknown>,
): LegacyTasksHttp {
  const env = {} as LegacyTasksHttp;
  beforeAll(async () => {
    env.mcpx = await startHttp(config, [], {}, { era: "legacy" });
    env.client = newClient("legacy", "tasks-client");
    env.transport = new StreamableHTTPClientTransport(new URL(env.mcpx.url));
    await env.client.connect(env.transport);
    expect(env.client.getNegotiatedProtocolVersion()).toBe(LEGACY_VERSION);
    env.other = newClient("legacy", "other-client");
    await env.other.connect(new StreamableHTTPClientTransport(new URL(env.mcpx.url)));
    await warm(env.client, "tasks-client");
    await warm(env.other, "other-client");
  });
  afterAll(async () => {
    await env.other?.close();
    await env.client?.close();
    await env.mcpx?.close();
  });
  return env;
}

/** mcpx over HTTP in the 2026-07-28 era, with two callers: the tasks' owner and a stranger. */
export interface ModernTasksHttp {
  mcpx: RunningHttp;
  rpc: HttpRpc;
  stranger: HttpRpc;
}

/** As {@link legacyTasksHttp}, for 2026-07-28 callers (`warm` runs for each). */
export function modernTasksHttp(
  config: string,
  warm: (rpc: HttpRpc) => Promise<unknown>,
): ModernTasksHttp {
  const env = {} as ModernTasksHttp;
  beforeAll(async () => {
    env.mcpx = await startHttp(config, [], {}, { era: "modern" });
    env.rpc = new HttpRpc(env.mcpx.url, "modern", "tasks-client");
    env.stranger = new HttpRpc(env.mcpx.url, "modern", "stranger");
    for (const c of [env.rpc, env.stranger]) await warm(c);
  });
  afterAll(async () => {
    await env.mcpx?.close();
  });
  return env;
}

/** Poll a 2026-07-28 task with tasks/get until it completes; its last answer. */
export async function pollCompleted(
  rpc: HttpRpc,
  taskId: string,
  everyMs: number,
): Promise<Record<string, unknown> | undefined> {
  let polled: Record<string, unknown> | undefined;
  await eventually(
    async () => {
      polled = (await modern(rpc, "tasks/get", { taskId })).result;
      return polled?.status === "completed";
    },
    15_000,
    "the task completed",
    everyMs,
  );
  return polled;
}

/** Record every notifications/tasks/status `client` hears. */
export function recordStatuses(client: Client): TaskStatus[] {
  const statuses: TaskStatus[] = [];
  client.setNotificationHandler(
    "notifications/tasks/status",
    { params: Task },
    (params) => void statuses.push(params),
  );
  return statuses;
}
