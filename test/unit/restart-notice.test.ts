/** The lost-state notice inside code mode: an inner call learns it, the script's answer says it. */
import { afterEach, expect, it } from "vitest";
import { codeModeProxy, runScript, type CodeModeProxy } from "../helpers/codemode.js";

let cm: CodeModeProxy | undefined;
afterEach(async () => {
  await cm?.close();
  cm = undefined;
});

it("a script whose inner call got a replaced session says the server restarted, once", async () => {
  cm = await codeModeProxy();
  const client = await cm.client();
  const script = `const [first] = await servers.github.list_issues({}); return first.number;`;
  expect((await runScript(client, script)).texts).toEqual(["1"]);
  // A health reset drops the client's (idle) session: its state there is gone.
  await cm.proxy.context.registry.pool("github")!.reset();
  const after = await runScript(client, script);
  expect(after.isError).toBe(false);
  expect(after.texts[0]).toMatch(
    /^Note from mcpx: server "github" restarted since your last call \(mcpx reconnected it after it failed health checks\)/,
  );
  // The script's own value is intact after the line, and the next script is told nothing.
  expect(after.texts.slice(1)).toEqual(["1"]);
  expect((await runScript(client, script)).texts).toEqual(["1"]);
});
