/**
 * The command line of a client's `--daemon` entry, read without the full CLI: the launcher
 * (`src/daemon/launch.ts`) attaches the shim from it and loads nothing else. Only the plain forms
 * `install` writes and a user types are read here; anything else (another option, a bad value,
 * a word that may be a command) is left to the full CLI, which explains what is wrong.
 */
import { parseArgs } from "node:util";
import { LOG_LEVELS } from "../logger.js";
import type { ShimOptions } from "./shim.js";

/** `DAEMON_IDLE_MS` of src/cli.ts (a test checks they agree). */
export const SHIM_DEFAULT_IDLE_MS = 600_000;
const LEVELS: readonly string[] = LOG_LEVELS;

/** The shim's options when `argv` is a plain `<config> --daemon [...]`, else undefined. */
export function shimOptions(argv: readonly string[]): ShimOptions | undefined {
  if (!argv.includes("--daemon")) return undefined;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        daemon: { type: "boolean" },
        "daemon-idle": { type: "string" },
        caller: { type: "string" },
        "log-level": { type: "string" },
        project: { type: "string" },
        untrusted: { type: "boolean" },
      },
    });
  } catch {
    return undefined;
  }
  const { values, positionals } = parsed;
  const [config] = positionals;
  // A config is a path; a bare word may be a (misspelled) command: the full CLI tells which.
  if (positionals.length !== 1 || config === undefined || !/[./\\]/.test(config)) return undefined;
  const idle = values["daemon-idle"] ?? String(SHIM_DEFAULT_IDLE_MS);
  const logLevel = values["log-level"] ?? "info";
  const caller = values.caller?.trim();
  if (!/^\d+$/.test(idle) || !LEVELS.includes(logLevel) || caller === "") return undefined;
  return {
    config,
    daemonIdleMs: Number(idle),
    logLevel,
    untrusted: values.untrusted === true,
    ...(caller !== undefined && { caller }),
    ...(values.project !== undefined && { project: values.project }),
  };
}
