/**
 * A script driving a real upstream (server-everything over stdio, through the real SDK client),
 * with `call` mapping tool results the way the integration is meant to: structured content,
 * else JSON text parsed, else `{ text, content }`; an `isError` result becomes `{ error }`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox, type InnerCall, type Sandbox } from "../../src/sandbox/index.js";
import { npmServer } from "../helpers/proxy.js";

let client: Client;
let sandbox: Sandbox;

beforeAll(async () => {
  client = new Client({ name: "sandbox-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      ...npmServer("@modelcontextprotocol/server-everything", "stdio"),
      stderr: "ignore",
    }),
  );
  sandbox = createSandbox({ maxWorkers: 1 });
});
afterAll(async () => {
  await sandbox.close();
  await client.close();
});

interface Content {
  type: string;
  text?: string;
}

/** The mapping the integration owns, here so the test shows real results crossing. */
const call: InnerCall = async (_server, tool, args, signal) => {
  const result = await client.callTool(
    { name: tool, arguments: args as Record<string, unknown> },
    undefined,
    { signal },
  );
  const content = (result.content ?? []) as Content[];
  const text = content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
  if (result.isError) return { error: text };
  if (result.structuredContent !== undefined) return { value: result.structuredContent };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { value: { text, content } };
  }
};

it("calls real tools, filters their results in the script, and catches a real isError", async () => {
  const out = await sandbox.run(
    `const echo = await servers.everything.echo({ message: "hi" });
const weather = await servers.everything["get-structured-content"]({ location: "New York" });
let invalid;
try {
  await servers.everything["get-sum"]({ a: "two" });
} catch (e) {
  invalid = e.message.includes("Invalid arguments");
}
const sum = await servers.everything["get-sum"]({ a: 2, b: 3 });
console.log("sum said:", sum.text);
return { echo: echo.text, hasTemperature: typeof weather.temperature === "number", invalid };`,
    {
      servers: { everything: ["echo", "get-structured-content", "get-sum"] },
      call,
    },
  );
  expect(out).toEqual({
    ok: true,
    value: { echo: "Echo: hi", hasTemperature: true, invalid: true },
    logs: ["sum said: The sum of 2 and 3 is 5."],
    calls: 4,
  });
});
