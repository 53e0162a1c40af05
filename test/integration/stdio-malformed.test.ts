/**
 * A stdio client that sends a line which is JSON but not a JSON-RPC message gets no answer (as
 * from the SDK's own stdio server: nothing in it can be answered), but mcpx says so on stderr at
 * the default log level, skips the line, and answers the next request.
 */
import { afterEach, expect, it } from "vitest";
import { eventually, fixtureServer, writeConfig } from "../helpers/proxy.js";
import { StdioRpc } from "../helpers/rpc.js";

let rpc: StdioRpc | undefined;
afterEach(async () => {
  await rpc?.close();
  rpc = undefined;
});

it("warns of a client's line that is not JSON-RPC, skips it, and answers the next request", async () => {
  rpc = await StdioRpc.start(writeConfig({ mcpServers: { f: fixtureServer("faulty.mjs") } }));
  rpc.sendRaw(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: 42 })}\n`);
  rpc.sendRaw(`${JSON.stringify({ a: 1 })}\n`);
  expect(await rpc.request("ping", undefined, 20_000)).toMatchObject({ result: {} });
  const warning =
    /WARN stdio: the client sent a line that is not a JSON-RPC message, skipped \(1 so far on this connection\)\. A request has "jsonrpc": "2\.0"/;
  // stderr is another pipe: its bytes may come after the answer on stdout.
  await eventually(() => warning.test(rpc!.stderr()), 10_000, "the warning on stderr");
  // Once per connection, and short: not the schema's kilobytes of detail.
  const warned = rpc
    .stderr()
    .split("\n")
    .filter((l) => l.includes("WARN stdio"));
  expect(warned).toHaveLength(1);
  expect(warned[0]!.length).toBeLessThan(400);
  expect(rpc.anomalies).toEqual({ duplicates: 0, strays: 0, garbage: 0 });
});
