/**
 * A 2025-era client's `notifications/roots/list_changed` reaches the upstream sessions serving
 * its calls: while a long call of the client runs on server-everything (`caller` session), the
 * client changes its roots and says so; server-everything asks again at once, and is given the
 * new roots, before the call ends. Until it says so, the roots it gave are kept: a call costs
 * no roots/list round trip to it. Over stdio and HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool, connectHttp } from "../helpers/asking.js";
import { within } from "../helpers/eventually.js";
import {
  eventually,
  npmServer,
  startHttp,
  startStdio,
  text,
  untilStarted,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

const file = writeConfig({
  mcpServers: {
    // Over HTTP a caller's roots are held within the configured ones: file:///first is inside.
    everything: {
      ...npmServer("@modelcontextprotocol/server-everything"),
      session: "caller",
      roots: ["file:///"],
    },
  },
});
let http: RunningHttp;
beforeAll(async () => {
  http = await startHttp(file);
});
afterAll(async () => {
  await http?.close();
});

describe.each(["stdio", "http"] as const)("over %s", (transport) => {
  it("tells the upstream of a running call, which reads the new roots before the call ends", async () => {
    let roots = "file:///first";
    const { client, asked } = askingClient("legacy", `changer-${transport}`, {
      abilities: ["roots"],
      roots: () => [{ uri: roots }],
    });
    let close: () => Promise<void>;
    if (transport === "stdio") {
      const running = await startStdio(file, [], { era: "legacy", client });
      close = () => running.close();
    } else {
      await connectHttp(client, http.url);
      await untilStarted(client);
      close = () => client.close();
    }
    try {
      expect(text(await callTool(client, "everything.get-roots-list"))).toContain("file:///first");
      // The client says when its roots change (roots.listChanged): mcpx keeps the ones it gave,
      // and its later calls cost no roots/list round trip to it.
      const before = asked.length;
      expect(asked.filter((a) => a.method === "roots/list").length).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++)
        expect(text(await callTool(client, "everything.get-roots-list"))).toContain(
          "file:///first",
        );
      expect(asked.length).toBe(before);
      let ended = false;
      let running!: () => void;
      const started = new Promise<void>((resolve) => (running = resolve));
      const long = client
        .callTool(
          {
            name: "call",
            arguments: {
              method: "everything.trigger-long-running-operation",
              arguments: { duration: 5, steps: 5 },
            },
          },
          { timeout: 60_000, onprogress: () => running() },
        )
        .finally(() => (ended = true));
      await within(started, 10_000, "the long call's first progress");
      roots = "file:///second";
      await client.sendRootsListChanged();
      // Only the forwarded notification makes the upstream ask again while the call runs, and
      // mcpx asks the client, whose kept roots it forgot.
      await eventually(() => asked.length === before + 1, 10_000, "the upstream to ask again");
      expect(ended).toBe(false);
      await long;
      expect(text(await callTool(client, "everything.get-roots-list"))).toContain("file:///second");
      // The new roots are kept in turn.
      expect(asked.length).toBe(before + 1);
    } finally {
      await close();
    }
  });
});
