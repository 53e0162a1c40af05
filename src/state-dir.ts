/**
 * mcpx's state folder (XDG base directories): `$XDG_STATE_HOME/mcpx`, default
 * `~/.local/state/mcpx`. It holds what mcpx must keep and may not rebuild: trust pins
 * (src/registry/trust-store.ts) and OAuth sign-ins (src/upstream/oauth/store.ts).
 */
import os from "node:os";
import path from "node:path";

export function defaultStateDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec: a relative value is invalid and must be ignored.
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "mcpx");
  return path.join(env.HOME || os.homedir(), ".local", "state", "mcpx");
}
