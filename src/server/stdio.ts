/**
 * MCP over one connection, both eras: stdio, or any SDK transport (in-memory in tests). The SDK
 * entry picks the era from what the client sends first: `server/discover` or an enveloped
 * request pins 2026-07-28, `initialize` (or anything without the envelope) the 2025 revisions.
 */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import type { EarlyStdio } from "./early.js";
import { ClientSubscriptions } from "./client-subscriptions.js";
import type { ProxyContext, SessionMemory } from "./context.js";
import {
  listenedResources,
  serverSink,
  subscribeListen,
  watchClient,
} from "./handlers/subscriptions.js";
import { watchCatalog } from "./list-changed.js";
import { serveByOpening } from "./stdio-opening.js";
import { LineTransport } from "./stdio-transport.js";
import { isInvalidMessage } from "../upstream/lines.js";
import { JSON_RPC_SHAPES } from "../json.js";
import { createDownstream, DEFAULT_CALLER, envelopeClientName } from "./mcp-server.js";

export interface StdioHandle {
  /** Resolves when the client goes away (stdin ends) or the connection breaks (stdout gone). */
  readonly ended: Promise<void>;
  /** Resolves once the first message to the client (the answer to its `initialize`) is written. */
  readonly answered: Promise<void>;
  close(): Promise<void>;
}

export interface ConnectionOptions {
  /** A caller fixed for the whole connection (`--caller`). */
  caller?: string;
}

/**
 * Serve one client on `transport`. Each server instance the entry builds (a discarded
 * `server/discover` probe, then the pinned one) keeps its own logging level and list_changed
 * watch, dropped when the instance closes.
 */
export function serveConnection(
  ctx: ProxyContext,
  transport: Transport,
  options: ConnectionOptions = {},
): { close(): Promise<void> } {
  // Names this connection's client: its roots/list_changed reaches the sessions of its calls.
  const clientId = `stdio:${randomUUID()}`;
  /** Lines of this connection that were not JSON-RPC messages. */
  let invalid = 0;
  // The connection's resource subscriptions, whichever instance (era) made them.
  const subs = new ClientSubscriptions(ctx);
  /** The caller the last listen stream was opened by (a 2026-07-28 connection's envelope). */
  let listener: string | undefined;
  const wire = tapInbound(transport, {
    // A 2026-07-28 listen stream is served by the entry, never by an instance: its filter is
    // read here, so the URIs it names are subscribed upstream (before it is acknowledged)
    // while it lasts.
    message: (message) => {
      const cancelled = cancelledId(message);
      if (cancelled !== undefined) subs.remove(`listen:${cancelled}`);
      const listen = listenedResources(message);
      if (!listen) return undefined;
      const meta = (message as { params?: { _meta?: unknown } }).params?._meta;
      const caller = options.caller ?? envelopeClientName(meta) ?? DEFAULT_CALLER;
      listener = caller;
      return subscribeListen(ctx, subs, listen, ctx.views.forCaller(caller));
    },
    closed: () => {
      subs.clear();
      // The client left: the upstream sessions it held (the `client` policy) close.
      ctx.registry.clientLeft(clientId);
    },
  });
  return serveByOpening(
    wire,
    ({ era }) => {
      const memory: SessionMemory = { subscriptions: subs };
      const server = createDownstream(ctx, {
        era,
        memory,
        clientId,
        localClient: true,
        ...(options.caller !== undefined && { caller: options.caller }),
      });
      const callerOf = () => options.caller ?? memory.caller ?? listener ?? DEFAULT_CALLER;
      // A modern connection's list_changed and resources/updated go to its subscriptions/listen
      // streams (the entry reroutes them, and drops those no stream asked for); a legacy one
      // gets them unsolicited.
      const unsubscribe = watchCatalog(ctx, memory, () => server.sendToolListChanged(), callerOf);
      const unwatch = watchClient(ctx, memory, serverSink(server), callerOf);
      const previous = server.onclose;
      server.onclose = () => {
        unsubscribe();
        unwatch();
        previous?.();
      };
      return server;
    },
    (err) => {
      // Routine: a broken pipe as the client leaves, a send after close.
      if (!isInvalidMessage(err)) return ctx.logger.debug(`stdio: ${errorMessage(err)}`);
      // A client's malformed message is worth a warning (nothing answers it), once per
      // connection: a client that keeps sending them does not fill the log. The schema's own
      // words go to debug (they run to kilobytes).
      invalid += 1;
      const text = `stdio: the client sent a line that is not a JSON-RPC message, skipped (${invalid} so far on this connection). ${JSON_RPC_SHAPES}`;
      if (invalid === 1) ctx.logger.warn(text);
      else ctx.logger.debug(text);
      ctx.logger.debug(`stdio: ${errorMessage(err)}`);
    },
  );
}

/**
 * `transport`, with every inbound message shown to `tap.message` first and its close to
 * `tap.closed`. When `tap.message` returns a promise, that message and every later one (and
 * the close) wait for it: messages keep their order.
 */
function tapInbound(
  transport: Transport,
  tap: { message: (message: JSONRPCMessage) => Promise<void> | undefined; closed: () => void },
): Transport {
  const wire: Transport = {
    start: () => transport.start(),
    send: (message, sendOptions) => transport.send(message, sendOptions),
    close: () => transport.close(),
    setProtocolVersion: (version) => transport.setProtocolVersion?.(version),
  };
  /** Settles when every message received so far was delivered; unset when none waits. */
  let tail: Promise<void> | undefined;
  const inOrder = (step: () => Promise<void> | void) => {
    const previous = tail;
    const waiting = previous ? previous.then(step) : step();
    if (!waiting) return;
    const current: Promise<void> = waiting
      .catch((err: unknown) => wire.onerror?.(err instanceof Error ? err : new Error(String(err))))
      .then(() => {
        if (tail === current) tail = undefined;
      });
    tail = current;
  };
  transport.onmessage = (message, extra) =>
    inOrder(() => {
      const waiting = tap.message(message);
      if (!waiting) return wire.onmessage?.(message, extra);
      return waiting.then(() => wire.onmessage?.(message, extra));
    });
  transport.onerror = (err) => wire.onerror?.(err);
  transport.onclose = () =>
    inOrder(() => {
      tap.closed();
      wire.onclose?.();
    });
  return wire;
}

/** The request id a notifications/cancelled names, if it is one. */
function cancelledId(message: JSONRPCMessage): string | number | undefined {
  if (!("method" in message) || message.method !== "notifications/cancelled") return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/**
 * Serve MCP on this process's stdin/stdout. stdout carries JSON-RPC only. The caller is
 * `options.caller` (`--caller`), else the client's clientInfo.name, else "default".
 */
export function serveStdio(
  ctx: ProxyContext,
  options: ConnectionOptions = {},
  early?: EarlyStdio,
): StdioHandle {
  // With an early answer to initialize (src/server/early.ts), it hands over what it read.
  const transport = new LineTransport(process.stdin, process.stdout, early);
  // The client leaving is our cue to shut down: stdin ended (perhaps while mcpx loaded: then once
  // what it sent was read), or the connection broke (stdout gone, an overlong line).
  const ended = transport.ended;
  let first = true;
  let firstSent!: () => void;
  const answered = new Promise<void>((resolve) => (firstSent = resolve));
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    try {
      await send(message);
    } finally {
      if (first) ctx.logger.debug("stdio: first answer sent");
      first = false;
      firstSent();
    }
  };
  const served = serveConnection(ctx, transport, options);
  if (early) void early.answered.then(() => ctx.logger.debug("stdio: initialize answered early"));
  return {
    ended,
    answered: early ? Promise.race([early.answered, answered]) : answered,
    close: () => served.close(),
  };
}
