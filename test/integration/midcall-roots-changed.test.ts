/**
 * A 2025-era client's `notifications/roots/list_changed` reaches the upstream sessions serving
 * its calls: while a long call of the client runs on server-everything (`caller` session), the
 * client changes its roots and says so; server-everything asks again at once, and is given the
 * new roots, before the call ends. Over stdio and HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool, connectHttp } from "../helpers/asking.js";
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
      let ended = false;
      const before = asked.length;
      const long = callTool(client, "everything.trigger-long-running-operation", {
        duration: 5,
        steps: 5,
      }).finally(() => (ended = true));
      // The call starts by fetching this client's roots once (the upstream has read roots before).
      await eventually(() => asked.length === before + 1, 10_000, "the call's roots fetch");
      roots = "file:///second";
      await client.sendRootsListChanged();
      // Only the forwarded notification makes the upstream ask again while the call runs.
      await eventually(() => asked.length === before + 2, 10_000, "the upstream to ask again");
      expect(ended).toBe(false);
      await long;
      expect(text(await callTool(client, "everything.get-roots-list"))).toContain("file:///second");
    } finally {
      await close();
    }
  });
});
