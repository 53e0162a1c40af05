/**
 * An AbortSignal costs Node 20 several µs to make (its prototype is set per instance), a
 * sizeable share of what mcpx adds to a call (issue 30). A plain 2025-era tools/call over a
 * client connection, to a stdio upstream on a shared session, makes one in mcpx: its request's.
 * The call's task runs on that request's controller, and the upstream call's deadline is
 * watched without one. In-process proxy, real stdio fixture, real SDK client; the signals this
 * process makes are counted around the calls.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createProxy, type Proxy } from "../../src/proxy.js";
import { connectClient, quietLogger } from "../helpers/inmemory.js";
import { fixtureServer, tempDir, text } from "../helpers/proxy.js";
import { countSignals } from "../helpers/signals.js";

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe("a plain tools/call's abort signals", () => {
  it("makes one per call in mcpx (the request's): not one for its task and one for its deadline too", async () => {
    const dir = tempDir();
    const config = parseConfig(
      {
        mcpServers: { f: { ...fixtureServer("faulty.mjs"), session: "shared" } },
        // No health check meanwhile: its ping would be counted too.
        health: { interval: 3_600_000 },
      },
      path.join(dir, "mcpx.json"),
      {},
    );
    proxy = createProxy(config, { logger: quietLogger() });
    await proxy.start();
    const { client, close } = await connectClient(proxy, { era: "legacy" });
    try {
      const call = (message: string) =>
        client.callTool({ name: "call", arguments: { method: "f.echo", arguments: { message } } });
      // Warm: the session, the client's first requests.
      expect(text(await call("warm"))).toContain("warm");
      const calls = 20;
      const made = countSignals();
      try {
        for (let i = 0; i < calls; i++) expect(text(await call(`m${i}`))).toContain(`m${i}`);
      } finally {
        made.restore();
      }
      // The SDK client makes none for a request given no signal: every one counted is mcpx's.
      expect(made.count()).toBe(calls);
    } finally {
      await close();
    }
  });
});
