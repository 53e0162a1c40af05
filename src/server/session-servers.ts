/**
 * The SDK servers of the 2025-era sessions live on this replica, kept between requests: a
 * session's first request here builds its server, seeded from the signed session id
 * (seeded-transport.ts), and later requests reuse it instead of building, seeding and closing
 * one per request. Another replica, or this one after an eviction, builds its own from the id:
 * the cache only saves work, it holds nothing another replica would need.
 *
 * Each HTTP exchange still gets its own stateless SDK transport (it parses and answers that one
 * request); `SessionTransport`, the one transport the kept server is connected to, hands the
 * server each exchange's request and sends what the server answers back on that exchange.
 */
import {
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Server,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "./context.js";
import type { SessionState } from "./legacy-sessions.js";
import { createDownstream } from "./mcp-server.js";
import { isSeedAnswer, seedMessages, type ResponseRoutes } from "./seeded-transport.js";
import type { SessionClaims } from "./session-token.js";

type Id = string | number;

/** A verified 2025-era session of a request: its id, its claims, and its state here. */
export interface Session {
  sid: string;
  claims: SessionClaims;
  state: SessionState;
}

/** One request lent to a session's kept server. */
export interface Exchange {
  server: Server;
  /** The stateless transport that parses and answers this request. */
  transport: WebStandardStreamableHTTPServerTransport;
  /** The exchange is over: a handler still running is cancelled, its stream ends. */
  end: () => void;
}

/**
 * The transport a kept server is connected to, once: it replays the session's initialize, then
 * passes on each exchange's request and routes the server's answer, and the progress, logs and
 * requests related to it, to that exchange.
 */
class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Requests the server is answering, by JSON-RPC id: the exchange each came on. */
  private readonly exchanges = new Map<Id, Transport>();
  private nonce?: string;
  /** Wire ids of the server's requests to the client still waiting for an answer. */
  private readonly asked = new Set<string>();

  constructor(
    private readonly claims: SessionClaims,
    private readonly sid: string,
    private readonly routes: ResponseRoutes,
  ) {}

  /** Never one: the server must not treat this transport as a session of its own. */
  get sessionId(): undefined {
    return undefined;
  }

  /** Requests the server is answering now. */
  get inFlight(): number {
    return this.exchanges.size;
  }

  start(): Promise<void> {
    for (const message of seedMessages(this.claims)) this.onmessage?.(message);
    return Promise.resolve();
  }

  /** True when a request with this id is being answered (a client reusing an id). */
  busy(id: Id): boolean {
    return this.exchanges.has(id);
  }

  /** A message `exchange` received; a request is answered on it. */
  receive(exchange: Transport, message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    // Validated as a JSON-RPC message already (the SDK transport, or http-direct.ts).
    if (isRequest(message)) this.exchanges.set(message.id, exchange);
    this.onmessage?.(message, extra);
  }

  /** The exchange ended before the server answered `id`: the server stops that handler. */
  abandon(exchange: Transport, id: Id): void {
    if (this.exchanges.get(id) !== exchange) return;
    this.exchanges.delete(id);
    this.onmessage?.({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "The client went away." },
    });
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isSeedAnswer(message)) return Promise.resolve();
    // What the server sends is its own making: told apart by shape, not parsed again.
    if (isAnswer(message)) {
      const id = message.id as Id;
      const exchange = this.exchanges.get(id);
      this.exchanges.delete(id);
      return exchange?.send(message, options) ?? Promise.resolve();
    }
    const related = options?.relatedRequestId;
    const exchange = related === undefined ? undefined : this.exchanges.get(related);
    // Nothing open carries it: a stateless exchange drops such messages the same way.
    if (!exchange) return Promise.resolve();
    if (isRequest(message)) {
      const asked = this.ask(message);
      return this.routes.whenListening(() => exchange.send(asked, options));
    }
    return exchange.send(message, options);
  }

  close(): Promise<void> {
    for (const wireId of this.asked) this.routes.forget(this.sid, wireId);
    this.asked.clear();
    this.exchanges.clear();
    this.onclose?.();
    return Promise.resolve();
  }

  /** A request to the client under a wire id unique in the session; its answer comes back here. */
  private ask(message: JSONRPCRequest): JSONRPCRequest {
    const original = message.id;
    this.nonce ??= this.routes.nonce();
    const wireId = `${this.nonce}-${String(original)}`;
    this.asked.add(wireId);
    this.routes.expect(this.sid, wireId, (answer) => {
      this.routes.forget(this.sid, wireId);
      this.asked.delete(wireId);
      this.onmessage?.({ ...answer, id: original });
    });
    return { ...message, id: wireId };
  }
}

/** A kept server reserved for one request answered on a transport of the caller's. */
export interface Reserved {
  /** Hand the server the request; what it sends for it goes to `exchange`. */
  receive(exchange: Transport, message: JSONRPCMessage, extra?: MessageExtraInfo): void;
  /** The exchange ended before the answer: the server stops that handler. */
  abandon(exchange: Transport): void;
}

/** A request (a method and an id), in a message known to be well-formed JSON-RPC. */
function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return "method" in message && "id" in message;
}

/** A result or error answer, in a message known to be well-formed JSON-RPC. */
function isAnswer(
  message: JSONRPCMessage,
): message is JSONRPCMessage & ({ result: unknown } | { error: unknown }) & { id: unknown } {
  return "result" in message || "error" in message;
}

interface Kept {
  server: Server;
  transport: SessionTransport;
}

/** A kept server, while it is built and after. */
interface Slot {
  ready: Promise<Kept>;
  kept?: Kept;
}

/**
 * The kept servers of one replica, least recently used first. Bounded: past `max`, the least
 * recently used one answering nothing is closed (its session is not ended: its next request
 * builds a server anew).
 */
export class SessionServers {
  private readonly kept = new Map<string, Slot>();

  constructor(
    private readonly ctx: ProxyContext,
    private readonly routes: ResponseRoutes,
    private readonly max: number,
  ) {}

  get size(): number {
    return this.kept.size;
  }

  /**
   * Lend the session's server a fresh stateless transport for the request `id`; undefined when
   * the server is already answering a request with that id (the caller serves it on a server
   * of its own).
   */
  async lend(session: Session, id: Id): Promise<Exchange | undefined> {
    const kept = await this.get(session);
    if (kept.transport.busy(id)) return undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
    });
    transport.onmessage = (message, extra) => kept.transport.receive(transport, message, extra);
    await transport.start();
    return {
      server: kept.server,
      transport,
      end: () => {
        kept.transport.abandon(transport, id);
        transport.close().catch((err: unknown) => this.closeFailed(err));
      },
    };
  }

  /**
   * The session's kept server, for the request `id` answered on a transport of the caller's
   * (http-direct.ts); undefined when the server is already answering a request with that id.
   */
  async reserve(session: Session, id: Id): Promise<Reserved | undefined> {
    const kept = await this.get(session);
    if (kept.transport.busy(id)) return undefined;
    return {
      receive: (exchange, message, extra) => kept.transport.receive(exchange, message, extra),
      abandon: (exchange) => kept.transport.abandon(exchange, id),
    };
  }

  /** Close the session's server (the session ended here). */
  drop(sid: string): void {
    const slot = this.kept.get(sid);
    if (!slot) return;
    this.kept.delete(sid);
    slot.ready.then((k) => k.server.close()).catch((err: unknown) => this.closeFailed(err));
  }

  closeAll(): void {
    for (const sid of [...this.kept.keys()]) this.drop(sid);
  }

  private get(session: Session): Promise<Kept> {
    let slot = this.kept.get(session.sid);
    if (slot) {
      // Most recently used last.
      this.kept.delete(session.sid);
    } else {
      this.makeRoom();
      const ready = this.build(session);
      const made: Slot = { ready };
      ready.then(
        (kept) => (made.kept = kept),
        () => {
          if (this.kept.get(session.sid) === made) this.kept.delete(session.sid);
        },
      );
      slot = made;
    }
    this.kept.set(session.sid, slot);
    return slot.ready;
  }

  private async build(session: Session): Promise<Kept> {
    const server = createDownstream(this.ctx, {
      era: "legacy",
      memory: session.state,
      clientId: session.sid,
    });
    const transport = new SessionTransport(session.claims, session.sid, this.routes);
    await server.connect(transport);
    return { server, transport };
  }

  /** At the bound, close the least recently used server that is answering nothing. */
  private makeRoom(): void {
    if (this.kept.size < this.max) return;
    for (const [sid, slot] of this.kept) {
      if (slot.kept?.transport.inFlight === 0) {
        this.drop(sid);
        return;
      }
    }
  }

  private closeFailed(err: unknown): void {
    this.ctx.logger.debug(`HTTP session server close: ${errorMessage(err)}`);
  }
}
