/**
 * Ends the HTTP answer stream of a request its client cancelled.
 *
 * Why this exists: on `notifications/cancelled` the SDK (1.32) aborts the handler and, as the
 * spec asks, sends no response; but the response was to end the request's SSE stream, so
 * nothing ever does. The open HTTP response, its socket and the transport's entries for the
 * request stayed until the session closed: every cancelled call of a long session leaked them.
 */
import type { ServerResponse } from "node:http";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

/** JSON-RPC "request cancelled" (MCP), only ever handed to the transport to release its entries. */
const REQUEST_CANCELLED = -32800;

/**
 * The requests of one downstream session whose answer stream is open, by JSON-RPC id. Only
 * POSTs that carry a single request are tracked: a batch shares one stream with requests that
 * were not cancelled, and ending it would cut their answers off.
 */
export class CancelledStreams {
  private readonly open = new Set<RequestId>();

  /** Note the request `body` carries, until `res` closes. Call before the SDK sees the body. */
  track(body: unknown, res: Pick<ServerResponse, "once">): void {
    const id = singleRequestId(body);
    if (id === undefined) return;
    this.open.add(id);
    res.once("close", () => this.open.delete(id));
  }

  /** Requests tracked now (their answer streams are open). */
  get size(): number {
    return this.open.size;
  }

  /**
   * After the SDK handled `body`: end the stream of every open request it cancels. The SDK
   * has aborted the handler by then, so nothing more is written to that stream.
   */
  endCancelled(body: unknown, transport: StreamableHTTPServerTransport): void {
    for (const id of cancelledIds(body)) {
      if (!this.open.delete(id)) continue;
      transport.closeSSEStream(id);
      // A response for a request whose stream is gone is written nowhere; handing one to the
      // transport is its only public way to drop its entries for the request (it then reports
      // the missing stream, which is the point).
      transport
        .send({ jsonrpc: "2.0", id, error: { code: REQUEST_CANCELLED, message: "cancelled" } })
        .catch(() => {
          /* expected: "No connection established", after the entries were dropped */
        });
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || typeof value === "number";
}

function singleRequestId(body: unknown): RequestId | undefined {
  if (!isRecord(body) || typeof body.method !== "string" || !isRequestId(body.id)) return undefined;
  return body.id;
}

function cancelledIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) =>
    isRecord(m) &&
    m.method === "notifications/cancelled" &&
    isRecord(m.params) &&
    isRequestId(m.params.requestId)
      ? [m.params.requestId]
      : [],
  );
}
