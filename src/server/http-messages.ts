/**
 * The HTTP endpoints' small message helpers: JSON-RPC error answers that name no request (one
 * for a request in the wrong era for its session), a response whose end is observed
 * (`whenEnded`), and reading request ids and cancellations out of a POST's messages.
 */
import { classifyInboundRequest } from "@modelcontextprotocol/server";
import { isRecord } from "../json.js";

/** A JSON-RPC error answer that names no request. */
export function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

/** The answer to a request with a 2025 session id that is not 2025-era traffic. */
export function notForLegacySession(httpMethod: string, body: unknown): Response {
  // A body that is no JSON-RPC message claims no era: say what is wrong with the body.
  const shape = classifyInboundRequest({ httpMethod, body });
  if (shape.kind === "reject" && shape.rung === "jsonrpc-shape")
    return rpcError(shape.httpStatus, shape.code, shape.message);
  return rpcError(
    400,
    -32600,
    "Bad Request: a 2026-07-28 request (it has the _meta envelope or MCP-Protocol-Version 2026-07-28) cannot use a 2025-era session. Send it without Mcp-Session-Id, or send 2025-era requests in that session.",
  );
}

export function isEventStream(response: Response): boolean {
  return response.headers.get("content-type")?.includes("text/event-stream") === true;
}

/**
 * `response` with `onEnd` called once when its body is fully read, fails, or is cancelled;
 * `first` (an SSE comment) goes out before the body.
 */
export function whenEnded(response: Response, onEnd: () => void, first?: string): Response {
  if (response.body === null) {
    onEnd();
    return response;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  let done = false;
  const finish = () => {
    if (!done) {
      done = true;
      onEnd();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first !== undefined) controller.enqueue(new TextEncoder().encode(first));
    },
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          finish();
          controller.close();
        } else controller.enqueue(chunk.value);
      } catch (err) {
        finish();
        controller.error(err);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

export function isRequest(message: unknown): boolean {
  return isRecord(message) && typeof message.method === "string" && message.id !== undefined;
}

export function requestId(message: unknown): string | number | undefined {
  if (!isRecord(message) || !isRequest(message)) return undefined;
  return typeof message.id === "string" || typeof message.id === "number" ? message.id : undefined;
}

export function cancelledIds(messages: unknown[]): (string | number)[] {
  return messages.flatMap((m) => {
    if (!isRecord(m) || m.method !== "notifications/cancelled" || !isRecord(m.params)) return [];
    const id = m.params.requestId;
    return typeof id === "string" || typeof id === "number" ? [id] : [];
  });
}
