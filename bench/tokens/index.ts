/**
 * Token benchmark: what enters the model's context with mcpx (three meta-tools, describe on
 * demand, compressed results) versus every upstream tool exposed directly. Everything is measured
 * side by side in one run against real upstream processes.
 *
 * A tool definition costs its API form, `JSON.stringify({ name, description, inputSchema })`;
 * text costs its o200k_base tokens.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import path from "node:path";
import { startProxy } from "../proxy.js";
import { measureSchema } from "./schema.js";
import { measureEconomy } from "./economy.js";
import { OTHERS } from "./economy-measure.js";
import { measureBudget } from "./budget.js";
import { recordedTools, RECORDED } from "../../test/helpers/catalogs.js";
import type { BenchSection } from "../report.js";
import {
  connectDirect,
  createWorkspace,
  listAllTools,
  npmServer,
  replayServer,
  type DirectClient,
  ROOT,
  type StdioSpec,
} from "../upstreams.js";
import { CORPUS, measureInit, measureResults, measureTask, SMALL } from "./measure.js";
import { render } from "./render.js";

export async function runTokenBench(): Promise<BenchSection> {
  const started = performance.now();
  const ws = createWorkspace();
  const specs = {
    everything: npmServer("@modelcontextprotocol/server-everything", ["stdio"]),
    filesystem: npmServer("@modelcontextprotocol/server-filesystem", [ws.files]),
    memory: npmServer("@modelcontextprotocol/server-memory", [], {
      MEMORY_FILE_PATH: ws.memoryFile,
    }),
    [CORPUS]: replayServer(),
    // Only uniform_rows: kept out of the catalogs above so (b) is exactly the recorded corpus.
    replay: replayServer({ REPLAY_DIR: ws.emptyReplayDir, REPLAY_EXTRA: "1" }),
  } satisfies Record<string, StdioSpec>;
  // The other recorded catalogs, each served unchanged by the replay fixture.
  const recorded = Object.fromEntries(
    OTHERS.map((s) => [
      s,
      replayServer({
        REPLAY_DIR: path.join(ROOT, "test/fixtures/corpus", RECORDED[s as keyof typeof RECORDED]),
      }),
    ]),
  );
  const pick = (...names: (keyof typeof specs)[]) =>
    Object.fromEntries(names.map((n) => [n, specs[n]])) as Record<string, StdioSpec>;

  const closers: (() => Promise<void>)[] = [];
  try {
    // Direct sessions and the three proxies start in parallel; every one is closed in `finally`.
    const directs = Object.fromEntries(
      await allSettled(
        Object.entries(specs).map(async ([name, spec]) => {
          const d = await connectDirect(name, spec);
          closers.push(() => d.close());
          return [name, d] as const;
        }),
      ),
    ) as Record<keyof typeof specs, DirectClient>;
    const open = async (servers: Record<string, StdioSpec>) => {
      const p = await startProxy(servers);
      closers.push(() => p.close());
      return p;
    };
    const [proxySmall, proxyAll, proxyRows, proxyEvery] = await allSettled([
      open(pick(...SMALL)),
      open(pick(...SMALL, CORPUS)),
      open(pick("replay")),
      open({ ...pick(...SMALL, CORPUS), ...recorded }),
    ]);

    const defs = new Map<string, Tool[]>();
    for (const [name, d] of Object.entries(directs)) defs.set(name, await listAllTools(d.client));
    for (const s of OTHERS)
      defs.set(s, recordedTools(RECORDED[s as keyof typeof RECORDED]) as Tool[]);
    const toolsOf = (name: string) => defs.get(name) ?? [];

    const init = await measureInit(proxySmall, proxyAll, toolsOf);
    const schema = await measureSchema(proxyAll, [...SMALL, CORPUS], toolsOf);
    const results = await measureResults(proxyAll, proxyRows, directs, ws.files);
    const tree = ws.tree;
    const task = await measureTask(proxyAll, directs[CORPUS].client, init.allDefTokens);
    const economy = await measureEconomy({
      proxy: proxyEvery,
      toolsOf,
      schema,
      servers: [...SMALL, CORPUS],
    });
    const budget = await measureBudget({
      rows: proxyRows,
      direct: directs.replay.client,
      small: proxySmall,
      all: proxyAll,
    });

    const markdown = render({
      init,
      schema,
      results,
      task,
      tree,
      economy,
      budget,
      elapsedMs: performance.now() - started,
    });
    return { id: "tokens", title: "Tokens", markdown };
  } finally {
    // Reverse order: proxies (and their upstream processes) first, then the direct sessions.
    const failures: unknown[] = [];
    for (const close of closers.reverse())
      await close().catch((err: unknown) => failures.push(err));
    ws.remove();
    if (failures.length > 0) console.error("bench: some sessions failed to close:", failures);
  }
}

/**
 * Promise.all that waits for every promise before rejecting, so nothing is still starting (and
 * registering its closer) when the caller's `finally` closes what started.
 */
async function allSettled<T extends readonly unknown[]>(promises: {
  [K in keyof T]: Promise<T[K]>;
}): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
