/**
 * The downstream end of mid-call requests: the `ClientChannel` a tools/call request gives its
 * call, per protocol era. A 2025-era client is sent real requests related to its tools/call (on
 * stdio its connection; over HTTP the call's response stream, and its answer comes back as a
 * POST, see http-legacy.ts). A 2026-07-28 client gets `input_required` answers and retries with
 * its input (pending.ts).
 */
import { randomUUID } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { abilitiesOf, type AskOptions, type ClientChannel } from "../upstream/channel.js";
import type { Era, ToolResult } from "../types.js";
import type { ProxyContext } from "./context.js";

type Params = Record<string, unknown>;

/** Who is asking, and which client connection or session the request came on. */
export interface CallIdentity {
  era: Era;
  caller: string;
  /** Names the client's connection (stdio) or session (HTTP); absent for modern requests. */
  clientId?: string;
  /** Its roots are held within each server's configured roots (see ClientChannel.confined). */
  confined: boolean;
}

/**
 * Run one tools/call with the channel of its era. A modern request carrying a `requestState`
 * is a retry of a call that waits on this replica (or not: then it says so).
 */
export async function callWithChannel(
  ctx: ProxyContext,
  server: Server,
  req: ServerContext,
  who: CallIdentity,
  run: (client: ClientChannel, signal: AbortSignal) => Promise<ToolResult>,
): Promise<ToolResult | InputRequiredResult> {
  if (who.era === "legacy") {
    return run(legacyChannel(server, req, who), req.mcpReq.signal);
  }
  const state = req.mcpReq.requestState();
  if (state !== undefined) {
    return ctx.pending.resume(state, req.mcpReq.inputResponses, who.caller, req.mcpReq.signal);
  }
  const envelope = req.mcpReq.envelope as Record<string, unknown> | undefined;
  return ctx.pending.start(
    {
      caller: who.caller,
      abilities: abilitiesOf(envelope?.[CLIENT_CAPABILITIES_META_KEY]),
      confined: who.confined,
      signal: req.mcpReq.signal,
    },
    run,
  );
}

/**
 * A 2025-era client's channel: requests related to its tools/call, so they travel where the
 * call's answer does, with the client's capabilities from its initialize.
 */
function legacyChannel(server: Server, req: ServerContext, who: CallIdentity): ClientChannel {
  const send = async (method: string, params: Params | undefined, o: AskOptions) =>
    (await req.mcpReq.send({ method, ...(params !== undefined && { params }) } as never, {
      timeout: o.timeoutMs,
      ...(o.signal && { signal: o.signal }),
    })) as Record<string, unknown>;
  return {
    caller: who.caller,
    clientId: who.clientId ?? `legacy:${randomUUID()}`,
    abilities: abilitiesOf(server.getClientCapabilities()),
    confined: who.confined,
    roots: (o) => send("roots/list", undefined, o),
    elicit: (p, o) => send("elicitation/create", withElicitationId(p), o),
    sample: (p, o) => send("sampling/createMessage", p, o),
  };
}

/** A 2025-era URL elicitation needs an id; a modern upstream's in-band one has none. */
function withElicitationId(params: Params): Params {
  if (params.mode !== "url" || typeof params.elicitationId === "string") return params;
  return { ...params, elicitationId: randomUUID() };
}
