/**
 * What the relay handlers (prompts, resources, completion, subscriptions) get from the server
 * factory: the proxy context, the request's caller and era, and the connection's memory. They
 * answer from the request's view only.
 */
import { ProtocolError, type ServerContext } from "@modelcontextprotocol/server";
import type { RelayFailure } from "../../executor/failures.js";
import type { CatalogView } from "../../registry/view.js";
import type { ProxyContext, SessionMemory } from "../context.js";
import type { Era } from "../../types.js";
import type { PageCursors } from "./pages.js";
import type { TraceInput } from "../../executor/context.js";
import { clientTraceparent } from "../../traceparent.js";

export interface HandlerEnv {
  ctx: ProxyContext;
  era: Era;
  /** The connection's or 2025-era session's memory; a fresh object per 2026-07-28 request. */
  memory: SessionMemory;
  /** Who is asking (see mcp-server.ts for the order). */
  callerOf(req: ServerContext): string;
  /** The client's connection or 2025-era session, when it has one (see RequestContext). */
  clientId?: string;
  /** The cursors of this server's pages. */
  cursors(): PageCursors;
  /** Cache hints for a 2026-07-28 list answer (none for the 2025 era). */
  hints(view: CatalogView): Record<string, unknown>;
}

/** The caller of a request, its view and its client (see RequestContext.clientKey). */
export function requestView(env: HandlerEnv, req: ServerContext) {
  const caller = env.callerOf(req);
  const clientKey = env.clientId ?? `caller:${caller}`;
  return { caller, clientKey, view: env.ctx.views.forCaller(caller) };
}

/**
 * The caller and its view once none of the view's servers is still starting without a catalog
 * (bounded by startupWait; a cancelled request stops waiting). A client that asks once, right
 * after spawning mcpx — a CLI such as the MCP Inspector's — would otherwise get empty lists of
 * prompts and resources and never see the list_changed that follows.
 */
export async function startedView(env: HandlerEnv, req: ServerContext) {
  const { caller, clientKey, view } = requestView(env, req);
  const names = view.servers().map((s) => s.name);
  if (!names.some((n) => env.ctx.registry.awaitsFirstCatalog(n)))
    return { caller, clientKey, view };
  await env.ctx.registry.firstLook(names, req.mcpReq.signal);
  return { caller, clientKey, view: env.ctx.views.forCaller(caller) };
}

/** What a relayed request brings to its trace: the client's traceparent, era and profile. */
export function requestTrace(
  env: HandlerEnv,
  req: ServerContext,
  view: CatalogView,
  meta: unknown,
): TraceInput {
  // Read only while traces are on: nothing is parsed otherwise.
  if (!env.ctx.executor.tracer) return {};
  const traceparent = clientTraceparent(meta, req.http?.req?.headers.get("traceparent"));
  return {
    era: env.era,
    profile: view.profile.name,
    ...(traceparent !== undefined && { traceparent }),
  };
}

/**
 * JSON-RPC code of a relayed request the upstream did not answer (down, busy, timed out):
 * the implementation-defined server error of JSON-RPC, not -32603, which says mcpx failed.
 */
export const UPSTREAM_UNAVAILABLE = -32000;

/** The error a relayed request answers when the upstream did not give a result. */
export function relayError(failure: RelayFailure): ProtocolError {
  if (failure.rpc) return new ProtocolError(failure.rpc.code, failure.message, failure.rpc.data);
  return new ProtocolError(UPSTREAM_UNAVAILABLE, failure.message);
}

/** The versions list_changed compares: prompts, and resources with their templates. */
export function listVersions(view: CatalogView): { prompts: string; resources: string } {
  return {
    prompts: view.prompts().version,
    resources: `${view.resources().version}.${view.templates().version}`,
  };
}
