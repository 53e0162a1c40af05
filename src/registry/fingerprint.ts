import { createHash } from "node:crypto";
import type { ServerConfig } from "../config/load.js";
import { canonicalJson } from "../json.js";

/**
 * A stable identity for "the same upstream": same command/args/env/cwd (stdio) or url/headers
 * (remote), and the same session policy and start — whatever the entry is named. Entries with one
 * fingerprint share one pool and one discovery.
 */
export function fingerprint(server: ServerConfig): string {
  return (
    createHash("sha256")
      // Roots are what the server is told outside calls: servers told different ones differ.
      .update(
        canonicalJson({
          spec: server.spec,
          session: server.session,
          ...(server.roots && { roots: server.roots }),
          // A lazy server's pool closes when idle: it cannot be an eager one's.
          ...(server.start === "lazy" && { start: "lazy" }),
        }),
      )
      .digest("hex")
      .slice(0, 16)
  );
}
