/**
 * The downstream client as the registry sees it during a call: a `ClientChannel` to relay what
 * an upstream asks mid-call (roots, elicitation, sampling), what the client declared it can
 * answer, and the error an upstream gets when mcpx cannot relay. Built per request by
 * src/server/ (call-channel.ts); no SDK here.
 */

import { isRecord } from "../json.js";
import { UI_EXTENSION, UI_MIME_TYPE } from "../types.js";

/** A root as MCP lists it: a `file://` URI and an optional name. */
export interface Root {
  uri: string;
  name?: string;
}

/** The three kinds of request an upstream may send its client mid-call. */
export type RelayKind = "roots" | "elicitation" | "sampling";

/** What a downstream client declared it can answer. */
export interface ClientAbilities {
  roots: boolean;
  /** Form-mode elicitation (an empty `elicitation: {}` declares form mode only). */
  elicitForm: boolean;
  elicitUrl: boolean;
  sampling: boolean;
}

/** How long the client may take, and what cancels the wait. */
export interface AskOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

type Params = Record<string, unknown>;
type Answer = Record<string, unknown>;

/**
 * One downstream call's way back to its client. Built per request by src/server/ and carried in
 * the executor's CallContext; answers pass through unchanged.
 */
export interface ClientChannel {
  /** Who is calling (for logs). */
  readonly caller: string;
  /** The client connection or session: roots/list_changed from it reaches its calls' sessions. */
  readonly clientId: string;
  readonly abilities: ClientAbilities;
  /**
   * The client's roots are held within the server's configured roots (roots.ts): an HTTP
   * caller's, unless its profile says `clientRoots`. A stdio client (the local user) is not.
   */
  readonly confined: boolean;
  roots(options: AskOptions): Promise<Answer>;
  elicit(params: Params, options: AskOptions): Promise<Answer>;
  sample(params: Params, options: AskOptions): Promise<Answer>;
}

/**
 * The channel of a request no client can be asked about (a resource read made without a
 * client): it counts as a request running on the session, so nothing an upstream sends
 * meanwhile is attributed to another call by mistake.
 */
export const NO_CLIENT: ClientChannel = {
  caller: "(no client)",
  clientId: "",
  abilities: { roots: false, elicitForm: false, elicitUrl: false, sampling: false },
  confined: true,
  roots: () => Promise.reject(new Error("no client to ask")),
  elicit: () => Promise.reject(new Error("no client to ask")),
  sample: () => Promise.reject(new Error("no client to ask")),
};

/** JSON-RPC codes the upstream gets when mcpx cannot relay its request. */
export const RELAY_ERROR = {
  /** The client did not declare the capability: it has no such method. */
  methodNotFound: -32601,
  /** The client does not support this mode of the request. */
  invalidParams: -32602,
  /** No call (or more than one) the request can belong to; the client failed or timed out. */
  internal: -32603,
} as const;

/** Why a request could not be relayed; session.ts sends it upstream as a JSON-RPC error. */
export class RelayError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "RelayError";
  }
}

/** The abilities a client's declared capabilities (from initialize or the request's envelope) give. */
export function abilitiesOf(capabilities: unknown): ClientAbilities {
  const caps = isRecord(capabilities) ? capabilities : {};
  const elicitation = isRecord(caps.elicitation) ? caps.elicitation : undefined;
  // `elicitation: {}` (what clients sent before modes existed) means form mode only.
  const modes = elicitation && ("form" in elicitation || "url" in elicitation);
  return {
    roots: isRecord(caps.roots),
    elicitForm: elicitation !== undefined && (!modes || isRecord(elicitation.form)),
    elicitUrl: elicitation !== undefined && isRecord(elicitation.url),
    sampling: isRecord(caps.sampling),
  };
}

/** The client capabilities that declare `abilities` (what a modern upstream is told per request). */
export function capabilitiesOf(abilities: ClientAbilities): Record<string, unknown> {
  const elicitation = {
    ...(abilities.elicitForm && { form: {} }),
    ...(abilities.elicitUrl && { url: {} }),
  };
  return {
    ...(abilities.roots && { roots: { listChanged: true } }),
    ...(Object.keys(elicitation).length > 0 && { elicitation }),
    ...(abilities.sampling && { sampling: {} }),
    // MCP Apps: declared to every upstream, in both eras (as CLIENT_CAPABILITIES does): a host
    // that renders no UI still gets the tool's own content.
    extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } },
  };
}
