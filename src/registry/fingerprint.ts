import { createHash } from "node:crypto";
import type { ServerConfig } from "../config/load.js";

/**
 * A stable identity for "the same upstream": same command/args/env/cwd (stdio) or url/headers
 * (remote), and the same session policy — whatever the entry is named. Entries with one
 * fingerprint share one pool and one discovery.
 */
export function fingerprint(server: ServerConfig): string {
  return createHash("sha256")
    .update(canonical({ spec: server.spec, session: server.session }))
    .digest("hex")
    .slice(0, 16);
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` hash alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
