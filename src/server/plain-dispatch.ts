/**
 * The SDK's dispatch tells a message's kind by trying its zod schemas in turn: a request first
 * fails the result and the error schema, and each failure builds a ZodError (a stack, a message
 * in JSON): ~10 µs of every call's ~0.3 ms on the main thread. Here a request the schemas
 * certainly accept (upstream/lines.ts `plainKind`) goes to the handler the SDK's dispatch would
 * pick, with the same arguments; anything else still goes through the SDK's own dispatch. Where
 * the SDK no longer has that handler, all of it does; an SDK whose dispatch does more for a
 * request fails test/unit/downstream-dispatch.test.ts, which holds that closure as written.
 */
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  Server,
  Transport,
} from "@modelcontextprotocol/server";
import { plainKind } from "../upstream/lines.js";

/** What this calls of the SDK's Protocol, which TypeScript keeps private. */
interface SdkInternals {
  _onrequest?: (request: JSONRPCMessage, extra?: MessageExtraInfo) => void;
}

/**
 * Wrap the dispatch `server.connect` set on `transport`; `previous` is the transport's handler
 * from before connect, which the SDK's dispatch calls first for every message.
 */
export function dispatchPlainRequests(
  server: Server,
  transport: Transport,
  previous: Transport["onmessage"],
): void {
  const dispatch = transport.onmessage;
  const onrequest = (server as unknown as SdkInternals)._onrequest;
  if (!dispatch || typeof onrequest !== "function") return;
  transport.onmessage = (message, extra) => {
    if (plainKind(message) !== "request") {
      dispatch(message, extra);
      return;
    }
    previous?.(message, extra);
    onrequest.call(server, message, extra);
  };
}
