/**
 * The upstream connection: initialized SDK client sessions behind a small interface, so the
 * registry and executor never touch the SDK; the era each upstream speaks, learned once. Imports
 * the SDK (see eslint.config.js); the session itself is in session.ts.
 */
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UriTemplate,
  type PriorDiscovery,
  type Transport,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/load.js";
import type { Lookup } from "../config/trust.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type {
  CompleteParams,
  CompleteResult,
  Era,
  PromptDef,
  PromptResult,
  ReadResourceResult,
  ResourceDef,
  ResourceTemplateDef,
  ToolDef,
  ToolResult,
} from "../types.js";
import type { RelayHub } from "./asker.js";
import type { ClientChannel } from "./channel.js";
import type { StderrRing } from "./stderr.js";
import { remoteFailure, STDERR_LINES_IN_ERROR, stdioFailure } from "./failure.js";
import { publicOnlyFetch } from "./public-fetch.js";
import { openSession, type OpenOptions, type RelayOptions, type SdkSession } from "./session.js";
import {
  createRemoteTransport,
  ProcessTransport,
  type ChildTracker,
  type RemoteSpec,
} from "./transport.js";

export type ListKind = "tools" | "resources" | "prompts";

/** MCP log levels, least severe first. */
export type LogLevel =
  "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/** An upstream's notifications/message: its level, optional logger name, and data. */
export interface LogMessage {
  level: LogLevel;
  logger?: string;
  data: unknown;
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options forwarded on every proxied request: abort signal, timeout, progress, log level. */
export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /**
   * The least severe log level the caller wants from this request. Modern upstreams send log
   * messages only for requests that name one; legacy upstreams ignore it.
   */
  logLevel?: LogLevel;
  /**
   * The client the request is made for (tools/call, resources/read): what the upstream asks
   * meanwhile (roots, elicitation, sampling) is relayed to it; for a call, the timeout stops
   * while it is being asked.
   */
  client?: ClientChannel;
}

/** What an upstream said about itself at initialize (legacy) or server/discover (modern). */
export interface ServerIdentity {
  name?: string;
  version?: string;
  title?: string;
  instructions?: string;
  capabilities: Record<string, unknown>;
  /** Set by every session; optional for identities built by hand (tests, placeholders). */
  era?: Era;
  /** The protocol version negotiated with it. */
  protocolVersion?: string;
}

/** An open subscriptions/listen stream (modern upstreams): list changes arrive while it lasts. */
export interface ListSubscription {
  /** Settles when the stream ends: "local" when closed by us, else the upstream ended it. */
  readonly ended: Promise<"local" | "graceful" | "remote">;
  close(): Promise<void>;
}

/** One initialized MCP session with an upstream. */
export interface UpstreamSession {
  readonly identity: ServerIdentity;
  readonly era: Era;
  readonly protocolVersion: string | undefined;
  /**
   * True for a modern upstream over HTTP: no state on the server, opening and closing the
   * session cost nothing on the wire, every request stands alone.
   */
  readonly stateless: boolean;
  /** The child's pid for stdio upstreams. */
  readonly pid: number | undefined;
  readonly closed: boolean;
  listTools(options: RequestOptions): Promise<ToolDef[]>;
  listResources(options: RequestOptions): Promise<ResourceDef[]>;
  listResourceTemplates(options: RequestOptions): Promise<ResourceTemplateDef[]>;
  listPrompts(options: RequestOptions): Promise<PromptDef[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<ToolResult>;
  readResource(uri: string, options: RequestOptions): Promise<ReadResourceResult>;
  /** prompts/get with the upstream's own prompt name; the result passes through unchanged. */
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options: RequestOptions,
  ): Promise<PromptResult>;
  /** completion/complete with the upstream's own ref (prompt name or template). */
  complete(params: CompleteParams, options: RequestOptions): Promise<CompleteResult>;
  /** Legacy upstreams: resources/subscribe on this session (modern ones use listen). */
  subscribeResource(uri: string, options: RequestOptions): Promise<void>;
  unsubscribeResource(uri: string, options: RequestOptions): Promise<void>;
  /** Called with the URI of each notifications/resources/updated the upstream sends. */
  onResourceUpdated(handler: (uri: string) => void): void;
  /** A health round trip: ping (legacy) or server/discover (modern, which has no ping). */
  ping(options: RequestOptions): Promise<void>;
  /** Called when the upstream announces a changed list. */
  onListChanged(handler: (kind: ListKind) => void): void;
  /**
   * Modern upstreams announce list changes only on a subscriptions/listen stream: open one for
   * the lists the upstream says change, and for updates of `resources` when it offers resource
   * subscriptions, feeding the onListChanged and onResourceUpdated handlers. Undefined for legacy
   * upstreams (they announce unasked) and when there is nothing to listen for.
   */
  listen(
    options: RequestOptions,
    resources?: readonly string[],
  ): Promise<ListSubscription | undefined>;
  /** Receive the upstream's log messages until the returned function is called. */
  onLog(handler: (message: LogMessage) => void): () => void;
  /** Called once when the session ends, whoever ended it, unless the returned function was. */
  onClosed(handler: () => void): () => void;
  close(): Promise<void>;
}

/**
 * Opens a fresh, initialized session with one upstream. Aborting `signal` while it opens tears
 * the attempt down (a spawned process is killed) and rejects. `forgetEra`, when present, drops
 * the era learned so far: the next session probes again (a server that was down may have been
 * upgraded or replaced).
 */
export type ClientFactory = ((signal?: AbortSignal) => Promise<UpstreamSession>) & {
  forgetEra?: () => void;
};

export interface ClientFactoryOptions {
  logger: Logger;
  /** Where a stdio upstream's stderr lines are kept (they are also logged, tagged). */
  stderr?: StderrRing;
  /** Tracks spawned children for a last-resort kill at exit. */
  tracker?: ChildTracker;
  /** Bound on spawn + initialize. */
  connectTimeoutMs: number;
  /** Seconds a stdio child gets between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** Bound on a stdio upstream's answer to the era probe (default STDIO_PROBE_TIMEOUT_MS). */
  stdioProbeTimeoutMs?: number;
  /** Where clients' roots/list_changed reach the sessions serving their calls. */
  hub?: RelayHub;
  /**
   * The server comes from an untrusted config: every connection must reach a public address,
   * the name resolved and checked again at each connect (src/upstream/public-fetch.ts).
   * `lookup` replaces DNS (tests).
   */
  publicOnly?: { lookup?: Lookup };
}

/**
 * How long a stdio upstream gets to answer the era probe (server/discover) before it is taken for
 * a legacy server and sent initialize on the same pipe. Only servers that ignore unknown requests
 * before initialize pay it, once per upstream (the verdict is kept until the server is found down).
 * The clock starts at spawn, so it also covers the server's own startup: a modern server slower
 * than this to start is served as legacy, which works.
 */
export const STDIO_PROBE_TIMEOUT_MS = 5_000;

const LEGACY: PriorDiscovery = { kind: "legacy" };

/** Build the client factory of one upstream from its config. */
export function createClientFactory(
  server: ServerConfig,
  options: ClientFactoryOptions,
): ClientFactory {
  const { spec } = server;
  const log = options.logger.child(server.name);
  const timeoutMs = options.connectTimeoutMs;
  const relay: RelayOptions = {
    server: server.name,
    habits: { readsRoots: false },
    roots: (server.roots ?? []).map((uri) => ({ uri })),
    clientRoots: server.session.policy !== "shared",
    logger: log,
    ...(options.hub && { hub: options.hub }),
  };
  // What the first connect learned: later ones pass it as `prior` and skip the probe.
  let verdict: PriorDiscovery | undefined;
  // http only, learned once per upstream: a server that speaks only the old SSE transport.
  let useSse = false;
  const remember = (session: SdkSession): SdkSession => {
    if (!verdict) {
      verdict = session.verdict;
      log.info(`speaks the ${session.era} protocol (${session.protocolVersion ?? "unknown"})`);
    }
    return session;
  };
  const factory = (open: (signal?: AbortSignal) => Promise<SdkSession>): ClientFactory =>
    Object.assign(async (signal?: AbortSignal) => remember(await open(signal)), {
      forgetEra: () => {
        verdict = undefined;
        useSse = false;
      },
    });
  const fetchImpl = options.publicOnly ? publicOnlyFetch(options.publicOnly.lookup) : undefined;
  // SSE is the legacy transport: its servers are legacy, no probe.
  const openSse = (remote: RemoteSpec, signal: AbortSignal | undefined) =>
    openSession(createRemoteTransport(remote, "sse", fetchImpl), {
      timeoutMs,
      relay,
      prior: LEGACY,
      ...(signal && { signal }),
    });

  switch (spec.transport) {
    case "stdio": {
      const spawnAndOpen = (signal: AbortSignal | undefined, prior: PriorDiscovery | undefined) => {
        // This process's own last lines: what a server that exits at once says about why.
        const recent: string[] = [];
        let onOutput: (() => void) | undefined;
        const transport = new ProcessTransport(spec, {
          onStderrLine: (line) => {
            options.stderr?.push(line);
            log.info(line);
            recent.push(line);
            if (recent.length > STDERR_LINES_IN_ERROR) recent.shift();
            onOutput?.();
          },
          ...(options.killGraceMs !== undefined && { killGraceMs: options.killGraceMs }),
          ...(options.tracker && { tracker: options.tracker }),
        });
        const opening = openSession(transport, {
          timeoutMs,
          relay: { ...relay, onOutput: (listener) => (onOutput = listener) },
          probeTimeoutMs: Math.min(
            options.stdioProbeTimeoutMs ?? STDIO_PROBE_TIMEOUT_MS,
            timeoutMs,
          ),
          ...(signal && { signal }),
          ...(prior && { prior }),
          explain: (err) => stdioFailure(err, transport.exit, recent),
        });
        return { transport, opening };
      };
      return factory(async (signal) => {
        const prior = verdict;
        const first = spawnAndOpen(signal, prior);
        try {
          return await first.opening;
        } catch (err) {
          // Some legacy servers exit on any request before initialize, the era probe included:
          // the probe fails, or, when its timeout came first, the initialize after it.
          const ended = first.transport.exit !== undefined && !first.transport.exit.requested;
          if (prior || signal?.aborted || !ended) throw err;
          log.info("ended while its era was probed; starting it again as a legacy server");
          return spawnAndOpen(signal, LEGACY).opening;
        }
      });
    }
    case "sse":
      return factory(async (signal) => {
        try {
          return await openSse(spec, signal);
        } catch (err) {
          throw remoteFailure(err, spec.url);
        }
      });
    case "http": {
      const connect = async (signal: AbortSignal | undefined) => {
        if (useSse) return openSse(spec, signal);
        try {
          return await openSession(createRemoteTransport(spec, "http", fetchImpl), {
            timeoutMs,
            relay,
            ...(signal && { signal }),
            ...(verdict && { prior: verdict }),
          });
        } catch (err) {
          // The SDK's documented fallback: a 4xx to the streamable POST means "try SSE".
          if (!(err instanceof SdkHttpError) || !isClientError(err.status)) throw err;
          log.info(`streamable HTTP answered ${err.status}; falling back to SSE`);
          const session = await openSse(spec, signal);
          useSse = true;
          return session;
        }
      };
      return factory(async (signal) => {
        try {
          return await connect(signal);
        } catch (err) {
          throw remoteFailure(err, spec.url);
        }
      });
    }
    default: {
      const never: never = spec;
      throw new Error(`unknown transport ${JSON.stringify(never)}`);
    }
  }
}

/** What a failed upstream request means for the caller, without SDK error codes leaking out. */
export interface UpstreamFailure {
  /** timeout: no answer in time; closed: the connection or process ended; other: anything else. */
  kind: "timeout" | "closed" | "other";
  message: string;
  /** The JSON-RPC error the upstream answered with, when it answered with one. */
  rpc?: { code: number; data?: unknown };
}

/**
 * Classify an error from an UpstreamSession request. The SDK reports its own timeouts (and
 * aborts) and closed connections as SdkError codes; a request on a closed client is a plain
 * "Not connected"; an HTTP upstream that went away is fetch's TypeError("fetch failed").
 */
export function classifyFailure(err: unknown): UpstreamFailure {
  const rpc =
    err instanceof ProtocolError
      ? { code: err.code, ...(err.data !== undefined && { data: err.data }) }
      : undefined;
  return { kind: failureKind(err), message: errorMessage(err), ...(rpc && { rpc }) };
}

function failureKind(err: unknown): UpstreamFailure["kind"] {
  switch (sdkCode(err)) {
    case SdkErrorCode.RequestTimeout:
      return "timeout";
    case SdkErrorCode.ConnectionClosed:
    case SdkErrorCode.NotConnected:
    case SdkErrorCode.SendFailed:
      return "closed";
    default:
      break;
  }
  if (!(err instanceof Error)) return "other";
  if (err.message === "Not connected") return "closed";
  if (err instanceof TypeError && err.message === "fetch failed") return "closed";
  return "other";
}

/** The SdkError code of `err` or of an error it wraps (our startup errors keep the SDK's as cause). */
function sdkCode(err: unknown): SdkErrorCode | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SdkError) return e.code;
  }
  return undefined;
}

/**
 * Whether `uri` matches an RFC 6570 resource template (`file:///{path}`, `users/{id}{?page}`),
 * per the SDK's matcher, which is what SDK servers route reads with. A template that does not
 * parse matches nothing.
 */
export function matchesUriTemplate(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

function isClientError(status: number): boolean {
  return status >= 400 && status < 500;
}

/**
 * Open a session over any SDK transport (in-memory pairs in tests), probing the upstream's era.
 * Aborting `signal` closes the transport and rejects the connect.
 */
export async function connectTransport(
  transport: Transport,
  options: Pick<OpenOptions, "timeoutMs" | "signal" | "probeTimeoutMs">,
): Promise<UpstreamSession> {
  return openSession(transport, options);
}
