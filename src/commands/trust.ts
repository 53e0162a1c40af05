/**
 * `mcpx trust diff <config> [server[.tool]]` and `mcpx trust approve <config> <server[.tool]>`:
 * review and approve the tool and prompt definitions a running mcpx flagged (changed, new or
 * suspicious: src/registry/trust.ts). Both read the pin files only: a flagged definition is
 * pending there, so nothing is started, and approve pins exactly what diff showed. A running
 * mcpx watches the pin files and serves an approved definition at once.
 */
import type { TrustOptions } from "../cli.js";
import { ConfigError, loadConfig, type Config, type ServerConfig } from "../config/load.js";
import { SchemaCompiler } from "../compression/schema.js";
import { launchKey } from "../registry/catalog-cache.js";
import { parseToolRef } from "../registry/toolref.js";
import { approve } from "../registry/trust.js";
import { pendingChanges, plainWordDiff, statusText } from "../registry/trust-diff.js";
import {
  defaultStateDir,
  PinStore,
  type PinEntry,
  type PinnedDef,
} from "../registry/trust-store.js";
import { errorMessage } from "../errors.js";
import { createLogger } from "../logger.js";
import { SharedPins } from "../registry/trust-shared.js";
import { sessionKey } from "../server/session-token.js";
import { openShared } from "../shared/index.js";
import { loadOptions } from "./load.js";
import { fail, redactor } from "./output.js";

export async function trust(o: TrustOptions): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(o.file, process.env, loadOptions(o));
  } catch (err) {
    if (err instanceof ConfigError) {
      return fail(2, err.message, "Fix each key named above, then run mcpx trust again.");
    }
    throw err;
  }
  const target = resolveTarget(config, o.ref);
  if ("error" in target) return fail(1, target.error, target.fix);
  const store = new PinStore(defaultStateDir(process.env));
  const redact = redactor(config.secrets);
  // With Redis sign-ins and pins (redis.encryptionKey): Redis's pins first, approvals back there.
  const shared = sharedPinsOf(config, store);
  if (shared) await shared.pins.sync(target.servers.map((s) => launchKey(s)));
  const code = await review(o, config, store, target, redact);
  const unshared = await shared?.close();
  if (unshared) {
    return fail(
      1,
      `approved on this machine, but not shared with the other replicas: ${redact(unshared)}`,
      "Run mcpx trust approve again once Redis is back.",
    );
  }
  return code;
}

/** The Redis copy of the pins, when the config shares them; undefined: the local files only. */
function sharedPinsOf(config: Config, store: PinStore) {
  if (config.redis === undefined || config.redisKey === undefined) return undefined;
  const logger = createLogger({ level: "warn" });
  logger.addSecrets(config.secrets);
  const state = openShared({ redis: config.redis, deployment: sessionKey(config), logger });
  const pins = new SharedPins(store, state, config.redisKey, logger);
  const pushes: Promise<void>[] = [];
  store.onSave = (key) => pushes.push(pins.push(key));
  return {
    pins,
    /** Disconnect once every approval reached Redis; what failed, if one did not. */
    close: async (): Promise<string | undefined> => {
      const failed = (await Promise.allSettled(pushes)).find((r) => r.status === "rejected");
      await state.close();
      return failed && errorMessage(failed.reason);
    },
  };
}

async function review(
  o: TrustOptions,
  config: Config,
  store: PinStore,
  target: Exclude<Target, { error: string }>,
  redact: (text: string) => string,
): Promise<number> {
  const out: string[] = [];
  let approved = 0;
  for (const server of target.servers) {
    const read = store.load(launchKey(server));
    if ("missing" in read) {
      out.push(
        `${server.name}: no pins yet (mcpx pins its definitions the first time it starts it)`,
      );
      continue;
    }
    if ("corrupt" in read) {
      out.push(
        `${server.name}: pin file ${store.file(launchKey(server))} is corrupt (${read.corrupt}); the next start rebuilds it and lists every definition as new`,
      );
      continue;
    }
    if (o.action === "diff") {
      const defs = store.loadDefs(launchKey(server));
      out.push(...(await diffLines(server.name, read.entry, defs, target.name)));
    } else {
      const done = approve(read.entry, target.name);
      if (done.approved.length === 0) continue;
      store.save(read.entry);
      approved += done.approved.length;
      out.push(...done.approved.map((a) => `${server.name}: approved ${a}`));
    }
  }
  if (o.action === "approve" && approved === 0) {
    const what = o.ref ?? "";
    return fail(
      1,
      `nothing pending for ${what}: no changed, new or suspicious definition waits for approval.`,
      `mcpx trust diff ${o.file} lists what waits; a running mcpx writes a definition there when it first sees it change.`,
    );
  }
  if (o.action === "diff" && out.length === 0)
    out.push("Nothing pending: every definition matches its pin.");
  process.stdout.write(`${redact(out.join("\n"))}\n`);
  return 0;
}

type Target = { servers: ServerConfig[]; name?: string } | { error: string; fix: string };

/** `server` or `server.name` of the config (name: a tool or a prompt); none: every server. */
function resolveTarget(config: Config, ref: string | undefined): Target {
  if (ref === undefined) return { servers: config.servers };
  const parsed = parseToolRef(ref);
  const serverName = parsed?.server ?? ref;
  const server = config.servers.find((s) => s.name === serverName);
  if (!server) {
    return {
      error: `no server "${serverName}" in ${config.file}.`,
      fix: `Name one of: ${config.servers.map((s) => s.name).join(", ")} (or server.tool).`,
    };
  }
  return { servers: [server], ...(parsed && { name: parsed.tool }) };
}

/** What changed for each pending definition of `entry` (only `name` when given), as a word diff. */
async function diffLines(
  server: string,
  entry: PinEntry,
  defs: Record<string, PinnedDef>,
  name: string | undefined,
): Promise<string[]> {
  const compiler = new SchemaCompiler({ mode: "typescript" });
  const changes = await pendingChanges(
    entry,
    defs,
    name,
    async (schema, n) => (await compiler.compile(schema, n)).text,
  );
  return changes.flatMap((c) => [
    `=== ${c.kind} ${server}.${c.name}: ${statusText(c.status)}`,
    plainWordDiff(c.diff),
    "",
  ]);
}
