/**
 * The opening of a stdio connection. The SDK's entry (`serveStdio` of
 * `@modelcontextprotocol/server/stdio`) picks the era from the first message and then relays every
 * message, both ways, through a channel of its own to the one server instance it pinned. A
 * connection that opens with a plain 2025-era `initialize` (no `_meta`: no envelope claim, so the
 * entry would pin the legacy era at once) needs none of that: its server is connected to the wire
 * directly, so no call pays for the entry's queue and its per-message checks. Every other
 * opening (`server/discover`, an enveloped request, anything unusual) goes to the SDK's entry as
 * before, its first message included.
 */
import type { JSONRPCMessage, Server, Transport } from "@modelcontextprotocol/server";
import { serveStdio as serveConnectionEntry } from "@modelcontextprotocol/server/stdio";

export type Era = "legacy" | "modern";

/** Whether the entry would pin the 2025 era on this first message, with nothing to check. */
export function opensLegacy(message: JSONRPCMessage): boolean {
  if (!("method" in message) || message.method !== "initialize" || !("id" in message)) return false;
  return message.params?._meta === undefined;
}

/**
 * Serve `wire` with instances from `factory`: pinned at once to a legacy instance when the first
 * message allows (see above), else through the SDK's entry.
 */
export function serveByOpening(
  wire: Transport,
  factory: (o: { era: Era }) => Server,
  onerror: (err: Error) => void,
): { close(): Promise<void> } {
  let close: () => Promise<void> = () => wire.close();
  /** What arrives while the legacy instance connects: delivered once it has, in order. */
  let held: Parameters<NonNullable<Transport["onmessage"]>>[] | undefined;
  /** The wire as the instance (or the entry) sees it: already started. */
  const inner: Transport = {
    start: () => Promise.resolve(),
    send: (message, options) => wire.send(message, options),
    close: () => wire.close(),
    setProtocolVersion: (version) => wire.setProtocolVersion?.(version),
  };
  const route = () => {
    wire.onmessage = (message, extra) => inner.onmessage?.(message, extra);
    wire.onerror = (err) => inner.onerror?.(err);
  };
  wire.onerror = onerror;
  wire.onclose = () => inner.onclose?.();
  wire.onmessage = (first, extra) => {
    if (held) {
      held.push([first, extra]);
      return;
    }
    if (!opensLegacy(first)) {
      const entry = serveConnectionEntry(factory, { legacy: "serve", transport: inner, onerror });
      close = () => entry.close();
      route();
      inner.onmessage?.(first, extra);
      return;
    }
    const server = factory({ era: "legacy" });
    server.onerror ??= onerror;
    close = () => server.close();
    held = [[first, extra]];
    void server.connect(inner).then(
      () => {
        const waiting = held ?? [];
        held = undefined;
        route();
        for (const [message, more] of waiting) {
          try {
            inner.onmessage?.(message, more);
          } catch (err) {
            onerror(err instanceof Error ? err : new Error(String(err)));
          }
        }
      },
      (err: unknown) => {
        // Nothing can answer this connection: end it (the client sees it close), never hold on.
        held = undefined;
        onerror(err instanceof Error ? err : new Error(String(err)));
        void wire.close();
      },
    );
  };
  void wire
    .start()
    .catch((err: unknown) => onerror(err instanceof Error ? err : new Error(String(err))));
  return { close: () => close() };
}
