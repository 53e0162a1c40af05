/**
 * Code-mode tests: in-memory SDK upstreams behind a whole proxy, SDK clients in front. `github`
 * has tools answering JSON text, structured content and plain text, one that waits until it is
 * cancelled and one that waits for the test; `secret` is a server only the default profile sees.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Client } from "@modelcontextprotocol/client";
import { z } from "zod";
import type { Proxy } from "../../src/proxy.js";
import { connectClient, memoryConfig, memoryProxy, quietLogger } from "./inmemory.js";
import { text } from "./proxy.js";
import { deferred, type Deferred } from "./sandbox.js";

/** What the upstreams saw, and switches the test holds. */
export interface Upstreams {
  /** Every tool call that reached an upstream, as `server.tool`. */
  calls: string[];
  /** `github.wait` calls whose request was cancelled. */
  aborted: number;
  /** Resolves when a `github.wait` call arrives. */
  waiting: Deferred<void>;
  /** `github.gate` answers once this resolves. */
  gate: Deferred<void>;
  /** Resolves when a `github.gate` call arrives. */
  atGate: Deferred<void>;
}

export const ISSUES = Array.from({ length: 12 }, (_, i) => ({
  number: i + 1,
  title: `Issue ${i + 1}`,
  state: i % 3 === 0 ? "closed" : "open",
  user: { login: `user${i % 4}` },
  labels: i % 2 === 0 ? [{ name: "bug" }] : [],
}));

/** A screenshot's base64: large enough that as JSON text it would take 20,000 characters. */
export const SCREENSHOT = Buffer.alloc(15_000, "mcpx").toString("base64");

export const ACCESS = {
  profiles: {
    default: { servers: ["*"] },
    bot: { servers: ["github"], tools: { deny: ["github.create_issue"] } },
    nocode: { servers: ["*"], codeMode: false },
    tight: { servers: ["*"], codeMode: { calls: 2 } },
    // A small heap and a long wall time: a bomb meets the memory limit first, however slow the machine.
    small: { servers: ["*"], codeMode: { memoryBytes: 16 * 1024 * 1024, timeMs: 300_000 } },
  },
  callers: { bot: "bot", nocode: "nocode", tight: "tight", small: "small" },
};

function github(seen: Upstreams): McpServer {
  const s = new McpServer({ name: "github", version: "1.0.0" });
  const record = (tool: string) => seen.calls.push(`github.${tool}`);
  s.registerTool(
    "list_issues",
    { description: "Lists issues. Newest first.", inputSchema: { state: z.string().optional() } },
    ({ state }) => {
      record("list_issues");
      const issues = ISSUES.filter((i) => state === undefined || i.state === state);
      return { content: [{ type: "text", text: JSON.stringify(issues) }] };
    },
  );
  s.registerTool(
    "get_issue",
    {
      description: "Gets one issue.",
      inputSchema: { number: z.number().int() },
      outputSchema: { number: z.number(), title: z.string(), author: z.string() },
    },
    ({ number }) => {
      record("get_issue");
      const issue = ISSUES.find((i) => i.number === number);
      if (!issue)
        return { content: [{ type: "text", text: `No issue ${number}.` }], isError: true };
      const value = { number, title: issue.title, author: issue.user.login };
      return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
    },
  );
  s.registerTool("get-me", { description: "Who am I." }, () => {
    record("get-me");
    return { content: [{ type: "text", text: "octocat" }] };
  });
  s.registerTool(
    "create_issue",
    { description: "Creates an issue.", inputSchema: { title: z.string() } },
    () => {
      record("create_issue");
      return { content: [{ type: "text", text: "created" }] };
    },
  );
  s.registerTool("screenshot", { description: "Takes a screenshot." }, () => {
    record("screenshot");
    return {
      content: [
        { type: "text", text: "Took a screenshot of the page." },
        { type: "image", data: SCREENSHOT, mimeType: "image/png" },
        { type: "resource_link", uri: "file:///tmp/page.png", name: "page.png" },
      ],
    };
  });
  s.registerTool("wait", { description: "Waits until cancelled." }, async (extra) => {
    record("wait");
    seen.waiting.resolve();
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    seen.aborted += 1;
    return { content: [{ type: "text", text: "stopped" }] };
  });
  s.registerTool("gate", { description: "Answers when the test opens the gate." }, async () => {
    record("gate");
    seen.atGate.resolve();
    await seen.gate.promise;
    return { content: [{ type: "text", text: '"through"' }] };
  });
  return s;
}

function secret(seen: Upstreams): McpServer {
  const s = new McpServer({ name: "secret", version: "1.0.0" });
  s.registerTool("read_secrets", { description: "Reads secrets." }, () => {
    seen.calls.push("secret.read_secrets");
    return { content: [{ type: "text", text: "s3cr3t" }] };
  });
  return s;
}

export interface CodeModeProxy {
  proxy: Proxy;
  seen: Upstreams;
  /** Log lines (JSON fields after the message). */
  logs: string[];
  /** A client for `caller` (stdio's --caller), closed by close(). */
  client: (caller?: string) => Promise<Client>;
  close: () => Promise<void>;
}

/** Start a proxy over `github` and `secret` with ACCESS (plus `extra` top-level config). */
export async function codeModeProxy(extra: Record<string, unknown> = {}): Promise<CodeModeProxy> {
  const seen: Upstreams = {
    calls: [],
    aborted: 0,
    waiting: deferred(),
    gate: deferred(),
    atGate: deferred(),
  };
  const logs: string[] = [];
  const proxy = memoryProxy(
    { github: () => github(seen), secret: () => secret(seen) },
    {
      config: memoryConfig(["github", "secret"], { ...ACCESS, ...extra }),
      logger: quietLogger(logs),
    },
  );
  await proxy.start();
  const sessions: { close(): Promise<void> }[] = [];
  return {
    proxy,
    seen,
    logs,
    async client(caller) {
      const session = await connectClient(proxy, caller === undefined ? {} : { caller });
      sessions.push(session);
      return session.client;
    },
    async close() {
      await Promise.all(sessions.map((s) => s.close()));
      await proxy.close();
    },
  };
}

/** Run a script through `call`: its isError flag, its text blocks, and its `_meta`. */
export async function runScript(
  client: Client,
  script: string,
  extra: Record<string, unknown> = {},
  options: { signal?: AbortSignal } = {},
): Promise<{
  isError: boolean;
  texts: string[];
  text: string;
  meta: Record<string, unknown>;
  content: { type: string; [key: string]: unknown }[];
}> {
  const r = await client.callTool({ name: "call", arguments: { script, ...extra } }, options);
  const content = r.content as { type: string; text?: string }[];
  const texts = content.flatMap((b) => (b.type === "text" && b.text !== undefined ? [b.text] : []));
  return { isError: r.isError === true, texts, text: text(r), meta: r._meta ?? {}, content };
}
