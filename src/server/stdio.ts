/**
 * MCP over one connection, both eras: stdio, or any SDK transport (in-memory in tests). The SDK
 * entry picks the era from what the client sends first: `server/discover` or an enveloped
 * request pins 2026-07-28, `initialize` (or anything without the envelope) the 2025 revisions.
 */
import { randomUUID } from "node:crypto";
import type { Transport } from "@modelcontextprotocol/server";
import {
  serveStdio as serveConnectionEntry,
  StdioServerTransport,
} from "@modelcontextprotocol/server/stdio";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "./context.js";
import { watchCatalog } from "./list-changed.js";
import { createDownstream, type SessionMemory } from "./mcp-server.js";

export interface StdioHandle {
  /** Resolves when the client goes away (stdin ends). */
  readonly ended: Promise<void>;
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
  return serveConnectionEntry(
    ({ era }) => {
      const memory: SessionMemory = {};
      const server = createDownstream(ctx, {
        era,
        memory,
        clientId,
        ...(options.caller !== undefined && { caller: options.caller }),
      });
      // A modern connection's list_changed goes to its subscriptions/listen streams (the entry
      // reroutes it, and drops it when there is none); a legacy one gets it unsolicited.
      const unsubscribe = watchCatalog(
        ctx,
        memory,
        () => server.sendToolListChanged(),
        () => options.caller ?? memory.caller ?? "default",
      );
      const previous = server.onclose;
      server.onclose = () => {
        unsubscribe();
        previous?.();
      };
      return server;
    },
    {
      legacy: "serve",
      transport,
      onerror: (err) => ctx.logger.debug(`stdio: ${errorMessage(err)}`),
    },
  );
}

/**
 * Serve MCP on this process's stdin/stdout. stdout carries JSON-RPC only. The caller is
 * `options.caller` (`--caller`), else the client's clientInfo.name, else "default".
 */
export function serveStdio(ctx: ProxyContext, options: ConnectionOptions = {}): StdioHandle {
  // The client leaving is our cue to shut down.
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  const served = serveConnection(ctx, new StdioServerTransport(), options);
  return { ended, close: () => served.close() };
}
