/**
 * Code mode in the built mcpx, as a user runs it: stdio, real upstream processes from npm
 * (server-memory, server-everything), the sandbox's built worker threads.
 */
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  eventually,
  isAlive,
  npmServer,
  startStdio,
  tempDir,
  text,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";

let running: Running | undefined;
afterEach(async () => {
  if (running && isAlive(running.pid)) process.kill(running.pid, "SIGKILL");
  await running?.close();
  running = undefined;
});

function config(extra: Record<string, unknown> = {}) {
  const dir = tempDir();
  return writeConfig(
    {
      mcpServers: {
        memory: {
          ...npmServer("@modelcontextprotocol/server-memory"),
          env: { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") },
          session: "shared",
        },
        everything: npmServer("@modelcontextprotocol/server-everything", "stdio"),
      },
      ...extra,
    },
    dir,
  );
}

it("a script joins two real upstreams' results in one call", async () => {
  running = await startStdio(config());
  const r = await running.client.callTool({
    name: "call",
    arguments: {
      script: `await servers.memory.create_entities({ entities: [
  { name: "alice", entityType: "person", observations: ["team core", "joined 2021"] },
  { name: "bob", entityType: "person", observations: ["team docs"] },
] });
const { entities } = await servers.memory.read_graph({});
const rows = [];
for (const e of entities) {
  const sum = await servers.everything["get-sum"]({ a: e.observations.length, b: 10 });
  rows.push({ name: e.name, team: e.observations[0].slice(5), sum: sum.text });
}
console.log("entities:", entities.length);
return rows;`,
    },
  });
  expect(r.isError).toBeFalsy();
  const [value, logs] = (r.content as { text: string }[]).map((b) => b.text);
  expect(value).toContain("alice");
  expect(logs).toBe("console:\nentities: 2");
  // TOON or JSON, whichever is cheaper: the values are there either way.
  for (const part of ["core", "docs", "The sum of 2 and 10 is 12.", "The sum of 1 and 10 is 11."]) {
    expect(value).toContain(part);
  }
});

it("SIGTERM while a script spins: the script is cancelled, its worker ends, mcpx exits", async () => {
  running = await startStdio(config({ shutdownGrace: 300 }));
  const spinning = running.client.callTool({
    name: "call",
    arguments: { script: `await servers.everything.echo({ message: "go" });\nfor (;;) {}` },
  });
  await eventually(
    () => running!.stderr().includes("call everything.echo by"),
    15_000,
    "the script's first call",
  );
  process.kill(running.pid, "SIGTERM");
  const answer = await spinning.then(text, (err: unknown) => String(err));
  expect(answer).toMatch(/shutting down|closed/i);
  await eventually(() => !isAlive(running!.pid), 10_000, "mcpx to exit");
  expect(running.stderr()).not.toContain("PROTOCOL ERROR");
});
