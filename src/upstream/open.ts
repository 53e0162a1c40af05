/**
 * Opening a session with an upstream over any SDK transport: the SDK client mcpx builds (its
 * capabilities, its handlers for what an upstream asks mid-call), the handshake or era probe,
 * cancellation, and the error a failed open reports. The open session is session.ts.
 */
import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type PriorDiscovery,
  type Transport,
} from "@modelcontextprotocol/client";
import { createLogger, type Logger } from "../logger.js";
import { VERSION } from "../version.js";
import { SessionAsker, type RelayHub, type UpstreamHabits } from "./asker.js";
import { RelayError, type RelayKind, type Root } from "./channel.js";
import { CLIENT_CAPABILITIES, SdkSession } from "./session.js";
import { catchTaskResults } from "./wire.js";

const CLIENT_INFO = { name: "mcpx", version: VERSION };

/** Which upstream a session serves, for relaying its requests to clients (see asker.ts). */
export interface RelayOptions {
  server: string;
  /** What the upstream's sessions showed so far (shared by them all). */
  habits: UpstreamHabits;
  /** The server's configured roots: the answer outside a call. */
  roots: readonly Root[];
  /** False for `shared` sessions: the upstream keeps what it read for every later caller. */
  clientRoots: boolean;
  logger: Logger;
  /** Where a client's roots/list_changed is fanned out to the sessions serving its calls. */
  hub?: RelayHub;
  /** Subscribes to the upstream's output besides MCP (a stdio server's stderr lines). */
  onOutput?: (listener: () => void) => void;
}

/** How a session is opened: bounds, cancellation, and the era learned earlier, if any. */
export interface OpenOptions {
  /** Bound on spawn + handshake (or probe). */
  timeoutMs: number;
  /** Bound on the `server/discover` probe when no `prior` verdict is given. */
  probeTimeoutMs?: number;
  signal?: AbortSignal;
  /** The era verdict of an earlier connect: skips the probe (modern: no round trip at all). */
  prior?: PriorDiscovery;
  /** Turns a connect failure into the error reported (once the transport is closed). */
  explain?: (err: unknown) => unknown;
  /** The upstream this session serves (default: an unnamed one with no configured roots). */
  relay?: RelayOptions;
  /** Client capabilities to declare instead of CLIENT_CAPABILITIES (a look without some). */
  capabilities?: Record<string, unknown>;
}

/**
 * The one place mcpx builds an SDK client for an upstream. Its handlers are in place before
 * connect: an upstream may ask for roots as soon as it is initialized.
 */
function newClient(
  probeTimeoutMs: number,
  asker: SessionAsker,
  capabilities: Record<string, unknown> = CLIENT_CAPABILITIES,
): Client {
  const client = new Client(CLIENT_INFO, {
    capabilities,
    // Without a prior verdict: probe with server/discover, fall back to initialize.
    versionNegotiation: { mode: "auto", probe: { timeoutMs: probeTimeoutMs } },
  });
  // Errors also surface as rejected requests; this only keeps the SDK from logging to console.
  client.onerror = () => {};
  const relay =
    (kind: RelayKind) =>
    async (
      request: { params?: Record<string, unknown> },
      ctx: { mcpReq: { signal: AbortSignal } },
    ) => {
      try {
        return await asker.answer(kind, request.params, ctx.mcpReq.signal);
      } catch (err) {
        if (err instanceof RelayError) throw new ProtocolError(err.code, err.message);
        throw err;
      }
    };
  // The SDK types each handler's result by method; the asker passes the client's answer through.
  // The SDK refuses a handler for a capability not declared (a look declares fewer).
  if (capabilities.roots) client.setRequestHandler("roots/list", relay("roots") as never);
  if (capabilities.elicitation)
    client.setRequestHandler("elicitation/create", relay("elicitation") as never);
  if (capabilities.sampling)
    client.setRequestHandler("sampling/createMessage", relay("sampling") as never);
  return client;
}

/**
 * Open a session over any SDK transport (in-memory pairs in tests). Aborting `signal` closes the
 * transport (killing a spawned process) and rejects. A failure is passed through `explain` once
 * the transport is closed (a child process has exited by then, and all it wrote to stderr has
 * been read).
 */
export async function openSession(transport: Transport, options: OpenOptions): Promise<SdkSession> {
  const { signal, explain = (err: unknown) => err } = options;
  const relay = options.relay ?? {
    server: "upstream",
    habits: { readsRoots: false },
    roots: [],
    clientRoots: true,
    logger: createLogger({ level: "silent", write: () => {} }),
  };
  const asker = new SessionAsker({
    ...relay,
    // Streamable HTTP: a request the upstream relates to one of ours arrives on that request's stream.
    relatedContext: transport instanceof StreamableHTTPClientTransport,
  });
  relay.onOutput?.(() => asker.noteActivity());
  const client = newClient(
    options.probeTimeoutMs ?? options.timeoutMs,
    asker,
    options.capabilities,
  );
  // 2026-07-28 task answers are caught before the SDK's decoder would refuse them.
  catchTaskResults(transport);
  // During the era probe the client does not own the transport yet: close both.
  const abort = () => {
    void client.close().catch(() => {});
    void transport.close().catch(() => {});
  };
  if (signal?.aborted) throw new Error("cancelled before the session started");
  signal?.addEventListener("abort", abort, { once: true });
  try {
    await client.connect(transport, {
      timeout: options.timeoutMs,
      ...(signal && { signal }),
      ...(options.prior && { prior: options.prior }),
    });
  } catch (err) {
    await client.close().catch(() => {
      /* the connect error is the one worth reporting */
    });
    // The SDK's own transports close themselves; ours must end its process in every case.
    await transport.close().catch(() => {});
    throw explain(err);
  } finally {
    signal?.removeEventListener("abort", abort);
  }
  return new SdkSession(
    client,
    transport,
    asker,
    relay.hub,
    options.capabilities ?? CLIENT_CAPABILITIES,
  );
}
