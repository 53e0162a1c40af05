/**
 * The client factory: opens fresh, initialized sessions with one upstream (stdio, streamable
 * HTTP, SSE) and learns the era it speaks once. The session itself is in session.ts.
 */
import {
  SdkHttpError,
  UnauthorizedError,
  type AuthProvider,
  type PriorDiscovery,
  type Transport,
} from "@modelcontextprotocol/client";
import { needsSignIn, ProxyError } from "../errors.js";
import type { ServerConfig } from "../config/load.js";
import type { Lookup } from "../config/trust.js";
import type { Logger } from "../logger.js";
import type { RelayHub } from "./asker.js";
import { publicOnlyFetch } from "./public-fetch.js";
import { remoteFailure, STDERR_LINES_IN_ERROR, stdioFailure } from "./sdk-errors.js";
import { openSession, type OpenOptions, type RelayOptions } from "./open.js";
import type { SdkSession } from "./session.js";
import type { StderrRing } from "./stderr.js";
import {
  createRemoteTransport,
  ProcessTransport,
  type ChildTracker,
  type RemoteSpec,
} from "./transport.js";
import type { ClientFactory, SessionDeclares, UpstreamSession } from "./types.js";
import { storedTokens } from "./oauth/bearer.js";
import { withStepUp } from "./oauth/step-up.js";
import type { SignInStore } from "./oauth/store.js";

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
  /**
   * OAuth sign-in of http/sse upstreams without an Authorization header: where tokens are
   * (none: a protected server needs sign-in) and the command that signs in to this server.
   */
  oauth?: { store?: SignInStore; command: string };
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
  const factory = (
    open: (signal?: AbortSignal, declares?: SessionDeclares) => Promise<SdkSession>,
  ): ClientFactory =>
    Object.assign(
      async (signal?: AbortSignal, declares?: SessionDeclares) =>
        remember(await open(signal, declares)),
      {
        forgetEra: () => {
          verdict = undefined;
          useSse = false;
        },
        declares: true as const,
      },
    );
  const fetchImpl = options.publicOnly ? publicOnlyFetch(options.publicOnly.lookup) : undefined;
  const oauth = options.oauth;
  // Untrusted configs send no credentials upstream: no stored sign-in either.
  const bearer: AuthProvider | undefined =
    oauth && spec.transport !== "stdio" && !options.publicOnly
      ? storedTokens({
          resource: spec.url,
          store: oauth.store,
          command: oauth.command,
          logger: log,
          ...(fetchImpl && { fetchImpl }),
        })
      : undefined;
  // A 403 insufficient_scope: needs sign-in with the wider scope (oauth/step-up.ts).
  const stepUp = <T extends Transport>(transport: T, url: string): T =>
    bearer && oauth
      ? withStepUp(transport, {
          resource: url,
          store: oauth.store,
          command: oauth.command,
          logger: log,
        })
      : transport;
  // An entry with its own credentials (a header, user:pass in the URL) is not signed in by mcpx.
  const ownCredentials =
    spec.transport === "stdio" ||
    Object.keys(spec.headers ?? {}).some((h) => h.toLowerCase() === "authorization") ||
    /^[a-z]+:\/\/[^/]*@/i.test(spec.url);
  /** A 401 (or the SDK's UnauthorizedError) means sign-in, never "down" nor "try SSE". */
  const signInFailure = (err: unknown): ProxyError | undefined => {
    for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
      if (e instanceof ProxyError && e.code === "NEEDS_SIGN_IN") return e;
      if (ownCredentials) continue;
      if (e instanceof UnauthorizedError || (e instanceof SdkHttpError && e.status === 401)) {
        return needsSignIn(oauth?.command ?? "mcpx login <config> <server>");
      }
    }
    return undefined;
  };
  // SSE is the legacy transport: its servers are legacy, no probe.
  const openSse = (
    remote: RemoteSpec,
    signal: AbortSignal | undefined,
    declares: SessionDeclares | undefined,
  ) =>
    openSession(stepUp(createRemoteTransport(remote, "sse", fetchImpl, bearer), remote.url), {
      timeoutMs,
      relay,
      prior: LEGACY,
      ...(signal && { signal }),
      ...declares,
    });

  switch (spec.transport) {
    case "stdio": {
      const spawnAndOpen = (
        signal: AbortSignal | undefined,
        prior: PriorDiscovery | undefined,
        declares: SessionDeclares | undefined,
      ) => {
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
          ...declares,
          explain: (err) => stdioFailure(err, transport.exit, recent),
        });
        return { transport, opening };
      };
      return factory(async (signal, declares) => {
        const prior = verdict;
        const first = spawnAndOpen(signal, prior, declares);
        try {
          return await first.opening;
        } catch (err) {
          // Some legacy servers exit on any request before initialize, the era probe included:
          // the probe fails, or, when its timeout came first, the initialize after it.
          const ended = first.transport.exit !== undefined && !first.transport.exit.requested;
          if (prior || signal?.aborted || !ended) throw err;
          log.info("ended while its era was probed; starting it again as a legacy server");
          return spawnAndOpen(signal, LEGACY, declares).opening;
        }
      });
    }
    case "sse":
      return factory(async (signal, declares) => {
        try {
          return await openSse(spec, signal, declares);
        } catch (err) {
          throw signInFailure(err) ?? remoteFailure(err, spec.url);
        }
      });
    case "http": {
      const connect = async (
        signal: AbortSignal | undefined,
        declares: SessionDeclares | undefined,
      ) => {
        if (useSse) return openSse(spec, signal, declares);
        try {
          return await openSession(
            stepUp(createRemoteTransport(spec, "http", fetchImpl, bearer), spec.url),
            {
              timeoutMs,
              relay,
              ...(signal && { signal }),
              ...(verdict && { prior: verdict }),
              ...declares,
            },
          );
        } catch (err) {
          // The SDK's documented fallback: a 4xx to the streamable POST means "try SSE".
          if (!(err instanceof SdkHttpError) || !isClientError(err.status)) throw err;
          if (signInFailure(err)) throw err;
          log.info(`streamable HTTP answered ${err.status}; falling back to SSE`);
          const session = await openSse(spec, signal, declares);
          useSse = true;
          return session;
        }
      };
      return factory(async (signal, declares) => {
        try {
          return await connect(signal, declares);
        } catch (err) {
          throw signInFailure(err) ?? remoteFailure(err, spec.url);
        }
      });
    }
    default: {
      const never: never = spec;
      throw new Error(`unknown transport ${JSON.stringify(never)}`);
    }
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
