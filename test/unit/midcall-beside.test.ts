/**
 * What an upstream asks while serving a request that is not a tool call (prompts/get,
 * completion, resources/read) is never taken for a call running beside it on the same session:
 * a `shared` session, alice's call waiting on it, bob's prompts/get whose upstream asks for
 * elicitation. Real SDK servers and clients over in-memory transports.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { errorMessage } from "../../src/errors.js";
import type { Proxy } from "../../src/proxy.js";
import { askingClient } from "../helpers/asking.js";
import { connectClient, memoryConfig, memoryProxy } from "../helpers/inmemory.js";
import { text } from "../helpers/proxy.js";
import { deferred } from "../helpers/sandbox.js";

let proxy: Proxy | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
  await proxy?.close();
  proxy = undefined;
});

describe("a request without a call, beside a call on a shared session", () => {
  it("gets the upstream's question refused; the call's client is never asked", async () => {
    const gate = deferred<void>();
    const holding = deferred<void>();
    const up = () => {
      const s = new McpServer({ name: "up", version: "1.0.0" });
      s.registerTool("hold", { description: "Waits for the test." }, async () => {
        holding.resolve();
        await gate.promise;
        return { content: [{ type: "text", text: "held" }] };
      });
      s.registerPrompt("ask", { description: "Asks its client first." }, async () => {
        let said: string;
        try {
          const answer = await s.server.elicitInput({
            message: "from the prompt",
            requestedSchema: { type: "object", properties: {} },
          });
          said = `answered ${answer.action}`;
        } catch (err) {
          said = `refused: ${errorMessage(err)}`;
        }
        return { messages: [{ role: "user", content: { type: "text", text: said } }] };
      });
      return s;
    };
    // One session serves every caller: the upstream's question could be anyone's.
    const config = memoryConfig(["up"], {
      mcpServers: { up: { command: "in-memory-up", session: "shared" } },
    });
    proxy = memoryProxy({ up }, { config });
    await proxy.start();
    const alice = askingClient("legacy", "alice", { abilities: ["elicitation"] });
    const bob = askingClient("legacy", "bob", { abilities: ["elicitation"] });
    const a = await connectClient(proxy, { client: alice.client });
    const b = await connectClient(proxy, { client: bob.client });
    closers.push(a.close, b.close);

    const call = alice.client.callTool({ name: "call", arguments: { method: "up.hold" } });
    await holding.promise;
    const prompt = await bob.client.getPrompt({ name: "up__ask" });
    const said = JSON.stringify(prompt.messages);
    expect(said).toContain("refused: ");
    expect(said).toContain("cannot tell which of the 2 calls");
    gate.resolve();
    expect(text(await call)).toBe("held");
    expect(alice.asked).toEqual([]);
    expect(bob.asked).toEqual([]);
  });
});
