/**
 * A 2025-era session served by a fresh server per request: the server must know what the
 * session's `initialize` said (version, client info, capabilities) without having seen it. The
 * SDK has no public way to seed that, so this transport replays the initialize in-process when
 * the server connects, and swallows the server's answer to it.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import type { SessionClaims } from "./session-token.js";

/** The id of the replayed initialize: a string no client request id of ours can collide with. */
const SEED_ID = "mcpx-session-seed";

/** Delegates to `inner` (a stateless streamable HTTP transport), replaying `session`'s initialize first. */
export class SeededTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly inner: Transport,
    private readonly session: SessionClaims,
  ) {
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => this.onclose?.();
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
    this.onmessage?.({
      jsonrpc: "2.0",
      id: SEED_ID,
      method: "initialize",
      params: {
        protocolVersion: this.session.v,
        capabilities: this.session.cc,
        clientInfo: this.session.ci,
      },
    });
    this.onmessage?.({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The id test first: the SDK's guards parse with zod, too dear for every message sent.
    if (
      (message as { id?: unknown }).id === SEED_ID &&
      (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))
    )
      return Promise.resolve();
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
