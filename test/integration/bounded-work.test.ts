/**
 * Issue 24's crashes, in the built mcpx over stdio with a real upstream (server-everything): a
 * 185-character select and a 243-byte script each took the proxy's heap past its limit. Now
 * mcpx stays up, answers the attacker with the limit it hit, keeps serving another request
 * within its normal latency, and its memory (from /proc) stays far below what the attack took.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { memoryOf } from "../helpers/procfs.js";
import {
  isAlive,
  npmServer,
  startStdio,
  tempDir,
  text,
  writeConfig,
  type Running,
} from "../helpers/proxy.js";

// Each test measures a normal latency, then serves calls for as long as an attack lasts.
vi.setConfig({ testTimeout: 120_000 });

/** What the attack took without the limits: 4.3 GB (select) and 2.6 GB (script) before crashing. */
const MEMORY_BOUND = 900 * 1024 * 1024;

let running: Running;
beforeAll(async () => {
  const dir = tempDir();
  const config = writeConfig(
    { mcpServers: { everything: npmServer("@modelcontextprotocol/server-everything", "stdio") } },
    dir,
  );
  running = await startStdio(config);
}, 60_000);
afterAll(async () => {
  if (isAlive(running.pid)) process.kill(running.pid, "SIGKILL");
  await running.close();
});

function call(args: Record<string, unknown>) {
  return running.client.callTool({ name: "call", arguments: args }, { timeout: 120_000 });
}

/** One get-sum, timed (ms); it must answer right. */
async function sum(): Promise<number> {
  const started = performance.now();
  const r = await call({ method: "everything.get-sum", arguments: { a: 2, b: 3 } });
  expect(text(r)).toContain("5");
  return performance.now() - started;
}

/** The median of `n` get-sum latencies. */
async function normalLatency(n = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await sum());
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

/**
 * While `attack` runs, get-sum keeps answering: each within a generous multiple of normal, and
 * at most 1.5 s (a select on the main thread would hold it for its whole run, ~40 s; a clean-clone
 * CI run once saw two calls of ~1.0 s on 2 busy cores as a stopped select's worker went).
 */
async function servedDuring(attack: Promise<unknown>, normal: number): Promise<number[]> {
  let over = false;
  void attack.finally(() => (over = true));
  const times: number[] = [];
  // At least three, and on while the attack lasts.
  while (times.length < 3 || (!over && times.length < 50)) times.push(await sum());
  const bound = Math.max(1_500, 20 * normal);
  expect(Math.max(...times), `get-sum took ${times.join(", ")} ms; normal ${normal}`).toBeLessThan(
    bound,
  );
  return times;
}

describe("issue 24: no caller takes mcpx down", () => {
  it("a select that doubles its value 23 times is refused with its limit; mcpx serves on", async () => {
    const normal = await normalLatency();
    const select = "@" + " | [@,@]".repeat(23);
    expect(select).toHaveLength(185);
    const attack = call({
      method: "everything.get-structured-content",
      arguments: { location: "Chicago" },
      select,
    });
    await servedDuring(attack, normal);
    const r = await attack;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(
      /^select "@ \| \[@,@\].*" failed: its value would be \d+ MB as JSON, more than the 4 MB a select may make/,
    );
    expect(isAlive(running.pid)).toBe(true);
    expect(memoryOf(running.pid)!.peak).toBeLessThan(MEMORY_BOUND);
  });

  it("a select that runs long is stopped at its time budget, off the main thread", async () => {
    const normal = await normalLatency();
    // 2^22 elements flattened 22 times: about 40 s on one thread, a few MB of output.
    const select = "@" + " | [@,@]".repeat(22) + " | []".repeat(22) + " | length(@)";
    const attack = call({
      method: "everything.get-structured-content",
      arguments: { location: "Chicago" },
      select,
    });
    await servedDuring(attack, normal);
    const r = await attack;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(
      /failed: it (ran longer than 2000 ms, the most mcpx gives one select|needed more than the 256 MB of memory a select may use), and was stopped\./,
    );
    expect(memoryOf(running.pid)!.peak).toBeLessThan(MEMORY_BOUND);
    // The worker was replaced: a plain select works.
    const ok = await call({
      method: "everything.get-structured-content",
      arguments: { location: "Chicago" },
      select: "conditions",
    });
    expect(ok.isError).toBeFalsy();
  });

  it("inner calls of 1.1 MB arguments are refused in the sandbox; mcpx serves on", async () => {
    const normal = await normalLatency();
    // Issue 24's script against server-everything's echo, with 3 calls of 400,000 elements
    // instead of 50 of 3,000,000 (30 MB a call): encoding those takes QuickJS more than its 30 s
    // on a loaded machine, and 1.1 MB is past the limit all the same. Before the limit, every
    // call's arguments were copied to the main thread and parsed there.
    const script =
      'const o={};const arr=new Array(400000).fill(o);const ps=[];for(let i=0;i<3;i++)ps.push(servers.everything.echo({message:"m",pad:arr}).then(()=>1,(e)=>e.message));return (await Promise.all(ps)).slice(0,2);';
    const attack = call({ script });
    await servedDuring(attack, normal);
    const r = await attack;
    expect(r.isError, text(r)).toBeFalsy();
    const [first] = JSON.parse(text(r).split("\n")[0]!) as string[];
    expect(first).toMatch(
      /^servers\.everything\.echo was not called: its arguments are 1\.1 MiB or more as JSON, more than the 1 MiB one inner call may send\./,
    );
    expect(isAlive(running.pid)).toBe(true);
    expect(memoryOf(running.pid)!.peak).toBeLessThan(MEMORY_BOUND);
  }, 120_000);
});
