/** Downstream clients of both protocol eras: the SDK v2 client, pinned to 2026-07-28 or in its default 2025 mode. */
import { Client, type McpSubscription } from "@modelcontextprotocol/client";

import type { Era } from "../../src/types.js";

export type { Era };

/** Both eras, for `describe.each`. */
export const ERAS: readonly Era[] = ["modern", "legacy"];

export const MODERN_VERSION = "2026-07-28";

/** A v2 SDK client of `era` (not connected). */
export function newClient(era: Era, name = "mcpx-test"): Client {
  return new Client(
    { name, version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {},
  );
}

/**
 * Call `onChange` on every notifications/tools/list_changed. A 2025 client gets them
 * unsolicited; a 2026-07-28 one opens a `subscriptions/listen` stream (resolved once the server
 * acknowledged it), closed with the client.
 */
export async function onToolsChanged(
  client: Client,
  onChange: () => void,
): Promise<McpSubscription | undefined> {
  client.setNotificationHandler("notifications/tools/list_changed", () => onChange());
  if (client.getProtocolEra() !== "modern") return undefined;
  return client.listen({ toolsListChanged: true });
}

/** The era the client negotiated. */
export function eraOf(client: Client): Era {
  return client.getProtocolEra() === "modern" ? "modern" : "legacy";
}
