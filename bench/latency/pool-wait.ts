/**
 * The one latency case run in-process: isolated with pre-warm, each call made once the pool has
 * its spare back, which only the proxy's own state can tell.
 */
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/logger.js";
import { createProxy } from "../../src/proxy.js";
import { createClientFactory } from "../../src/upstream/factory.js";
import { connectClient } from "../../test/helpers/inmemory.js";
import { descendants } from "../../test/helpers/proxy.js";
import type { Reaper } from "../lib/processes.js";
import { ROOT } from "../upstreams.js";
import {
  DEFER_MS,
  EVERYTHING,
  mcpxEcho,
  measure,
  merge,
  SERVER,
  SETTLE_MS,
  SIZE,
  type CaseResult,
  type Timings,
} from "./harness.js";

/**
 * Isolated with pre-warm, in-process, each call made once the pool has its spare back. The
 * client factory is wrapped to see when a spare's spawn + initialize is over: `poolStats().spares`
 * counts a spare from the moment its spawn starts, so it alone cannot tell (see the report).
 *
 * Two arms, interleaved call by call so machine load hits both alike: (a) the pool as it is,
 * which spawns the replacement spare while the call runs; (b) the wrapper holds that spawn back
 * DEFER_MS, so it starts once the call is over (what refilling on release would do).
 */
export async function prewarmPoolWaitCase(
  reap: Reaper,
): Promise<{ asIs: CaseResult; deferred: CaseResult; refill: number[] }> {
  const config = parseConfig(
    { mcpServers: { [SERVER]: { ...EVERYTHING, session: "isolated", prewarm: 1 } } },
    path.join(ROOT, "bench/mcpx.bench.json"),
    {},
  );
  const logger = createLogger({ level: "warn" });
  let opening = 0;
  let deferNext = false;
  const refill: number[] = [];
  const proxy = createProxy(config, {
    logger,
    factoryFor: (server) => {
      const open = createClientFactory(server, {
        logger,
        connectTimeoutMs: config.discoveryTimeoutMs,
      });
      return async () => {
        opening += 1;
        try {
          if (deferNext) await sleep(DEFER_MS);
          const t0 = performance.now();
          const session = await open();
          refill.push(performance.now() - t0);
          return session;
        } finally {
          opening -= 1;
        }
      };
    },
  });
  const spareBack = async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const s = proxy.context.registry.poolStats()[SERVER];
      // Spare initialized, the used session closed, nothing leased.
      if (opening === 0 && s && s.spares === 1 && s.open === 1 && s.leased === 0) return;
      if (Date.now() > deadline) throw new Error(`spare never came back: ${JSON.stringify(s)}`);
      await sleep(5);
    }
  };
  const arms: [Timings[], Timings[]] = [[], []];
  let watched: number[] = [];
  let downstream: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    await proxy.start();
    if (proxy.context.registry.server(SERVER)?.status !== "ready") {
      throw new Error(`${SERVER} did not start: ${proxy.context.registry.server(SERVER)?.error}`);
    }
    downstream = await connectClient(proxy, { era: "legacy" });
    const call = mcpxEcho(downstream.client);
    const total = SIZE.spawnWarmup + 2 * SIZE.arm;
    for (let i = 0; i < total; i++) {
      await spareBack();
      // The same idle time before each call as the fresh direct sessions get.
      await sleep(SETTLE_MS / 3);
      deferNext = i % 2 === 1;
      const t = await measure(call, 1);
      // Warm-up calls count only their failures.
      (deferNext ? arms[1] : arms[0]).push(
        i >= SIZE.spawnWarmup ? t : { ms: [], failed: t.failed },
      );
    }
    deferNext = false;
  } finally {
    watched = descendants(process.pid);
    try {
      await downstream?.close();
    } finally {
      await proxy.close();
    }
  }
  const leaked = await reap(watched);
  const base = {
    downstream: "in-process" as const,
    backToBack: false,
    leaked,
  };
  return {
    asIs: {
      ...base,
      id: "spaced-inprocess",
      label: "mcpx isolated, pre-warm 1, spaced",
      timings: merge(arms[0]),
      note: `each call once the spare is initialized, + ${Math.round(SETTLE_MS / 3)} ms`,
    },
    deferred: {
      ...base,
      id: "spaced-inprocess-deferred",
      label: `same, refill spawn held back ${DEFER_MS} ms by the bench (experiment)`,
      timings: merge(arms[1]),
      leaked: 0, // one proxy for both arms: its leaks are counted once, on the row above
      note: `interleaved with the row above, call by call; not how mcpx behaves today`,
    },
    // The first open is discovery's session, at startup; the rest are refills.
    refill: refill.slice(1),
  };
}
