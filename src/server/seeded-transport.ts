/**
 * A 2025-era session served by a fresh server per request: the server must know what the
 * session's `initialize` said (version, client info, capabilities) without having seen it. The
 * SDK has no public way to seed that, so this transport replays the initialize in-process when
 * the server connects, and swallows the server's answer to it.
 *
 * Requests the server sends the client (elicitation and the like, related to a call) ride the
 * call's response stream; the client POSTs its answer, which the endpoint hands back through
 * `ResponseRoutes` (or, when it lands on another replica, through Redis: http-legacy.ts). Every
 * fresh server numbers its requests from 0, so their ids get a nonce of this exchange on the wire.
 */
import { randomBytes } from "node:crypto";
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import type { SessionClaims } from "./session-token.js";

/** The id of the replayed initialize: a string no client request id of ours can collide with. */
export const SEED_ID = "mcpx-session-seed";

/** The initialize and initialized a session's client sent, rebuilt from its signed claims. */
export function seedMessages(session: SessionClaims): JSONRPCMessage[] {
  return [
    {
      jsonrpc: "2.0",
      id: SEED_ID,
      method: "initialize",
      params: {
        protocolVersion: session.v,
        capabilities: session.cc,
        clientInfo: session.ci,
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ];
}

/** The server's answer to the replayed initialize, which no client waits for. */
export function isSeedAnswer(message: JSONRPCMessage): boolean {
  // The id test first: the SDK's guards parse with zod, too dear for every message sent.
  return (
    (message as { id?: unknown }).id === SEED_ID &&
    (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))
  );
}

/**
 * This replica's exchanges waiting for a client's answer, by session id and wire id. Entries
 * leave when the answer comes or the exchange ends, so the table holds no more than the open
 * exchanges' pending requests.
 *
 * A wire id is `<replica>.<nonce>-<id>`: the replica that asked (so another replica that gets
 * the answer knows where to forward it, see http-legacy.ts), a random nonce of the asking server
 * (every server numbers its requests from 0; unguessable, so no client answers a request it was
 * not sent), and the server's own id.
 */
export class ResponseRoutes {
  private readonly waiting = new Map<string, (message: JSONRPCMessage) => void>();
  /** Names this replica in the wire ids it mints: 12 hex digits. */
  readonly replica: string;
  private readonly listening?: () => Promise<void>;

  constructor(
    options: {
      replica?: string;
      /**
       * Resolves once answers other replicas forward here reach this one; a request to a client
       * is sent only then, so its answer cannot be forwarded before anyone listens. Never rejects.
       */
      listening?: () => Promise<void>;
    } = {},
  ) {
    this.replica = options.replica ?? randomBytes(6).toString("hex");
    this.listening = options.listening;
  }

  /** The replica that asked the request with this wire id, when it is one of ours. */
  static replicaOf(wireId: unknown): string | undefined {
    if (typeof wireId !== "string") return undefined;
    return /^([0-9a-f]{12})\./.exec(wireId)?.[1];
  }

  /**
   * A prefix for the wire ids of one server's requests to the client, unique in the session;
   * made on first use, as most servers ask nothing.
   */
  nonce(): string {
    return `${this.replica}.${randomBytes(9).toString("base64url")}`;
  }

  /** Send a request to the client once answers forwarded here can reach this replica. */
  whenListening(send: () => Promise<void>): Promise<void> {
    return this.listening ? this.listening().then(send) : send();
  }

  /** Hand a client's answer to the exchange that asked; false when none here waits for it. */
  deliver(sid: string, message: JSONRPCMessage): boolean {
    if (!("id" in message) || message.id === undefined) return false;
    const deliver = this.waiting.get(key(sid, message.id));
    deliver?.(message);
    return deliver !== undefined;
  }

  /** Requests waiting for an answer now. */
  get size(): number {
    return this.waiting.size;
  }

  expect(sid: string, wireId: string, deliver: (message: JSONRPCMessage) => void): void {
    this.waiting.set(key(sid, wireId), deliver);
  }

  forget(sid: string, wireId: string): void {
    this.waiting.delete(key(sid, wireId));
  }
}

function key(sid: string, id: string | number): string {
  return `${sid}\n${String(id)}`;
}

/** Delegates to `inner` (a stateless streamable HTTP transport), replaying `session`'s initialize first. */
export class SeededTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private nonce?: string;
  /** Wire ids of this exchange's requests still waiting for the client. */
  private readonly asked = new Set<string>();

  constructor(
    private readonly inner: Transport,
    private readonly session: SessionClaims,
    private readonly route?: { sid: string; routes: ResponseRoutes },
  ) {
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      this.forgetAll();
      this.onclose?.();
    };
  }

  /** Never one: the server must not treat this per-request transport as a session. */
  get sessionId(): undefined {
    return undefined;
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  async start(): Promise<void> {
    await this.inner.start();
    for (const message of seedMessages(this.session)) this.onmessage?.(message);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isSeedAnswer(message)) return Promise.resolve();
    if (this.route && isJSONRPCRequest(message)) {
      const asked = this.ask(message);
      return this.route.routes.whenListening(() => this.inner.send(asked, options));
    }
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    this.forgetAll();
    return this.inner.close();
  }

  /** A request to the client under a wire id unique in the session; its answer finds its way back. */
  private ask(message: JSONRPCRequest): JSONRPCRequest {
    const { sid, routes } = this.route!;
    const original = message.id;
    this.nonce ??= routes.nonce();
    const wireId = `${this.nonce}-${String(original)}`;
    this.asked.add(wireId);
    routes.expect(sid, wireId, (answer) => {
      routes.forget(sid, wireId);
      this.asked.delete(wireId);
      this.onmessage?.({ ...answer, id: original });
    });
    return { ...message, id: wireId };
  }

  private forgetAll(): void {
    if (!this.route) return;
    for (const wireId of this.asked) this.route.routes.forget(this.route.sid, wireId);
    this.asked.clear();
  }
}
