/**
 * A 2025-era upstream's tools/call over stdio, without the SDK client's request funnel: one
 * promise and one map entry per call, where the SDK adds a timer, an era codec, an async schema
 * check of the result and a few promise hops (~20 µs of the ~0.2 ms mcpx adds to a call). What
 * the SDK does for such a request is done here the same way, with the SDK's own pieces where it
 * has them:
 *
 * - the id is the SDK's next (`_requestMessageId`), so its requests and these never share one;
 * - progress is the SDK's: the token is the id, its handler sits in the SDK's `_progressHandlers`,
 *   so the SDK validates and delivers each notification as it does for its own requests;
 * - an abort sends notifications/cancelled and rejects with what the SDK rejects with;
 * - the answer: an error is the SDK's `ProtocolError`; a result is `ResultSchema`'s output (the
 *   result itself where that is certain: a plain object whose `_meta`, if any, names no server;
 *   else the schema's parse); a `resultType` is dropped, as the 2025 codec drops it;
 * - the transport closing rejects every call waiting, as the SDK's `_onclose` does.
 *
 * Calls through the SDK's `request` (mcpx's other requests, modern upstreams, remote ones) are
 * untouched. Where the SDK lacks the internals named above, `plainCalls` returns undefined and
 * every call goes through the SDK. test/unit/plain-call.test.ts holds this to the SDK's answers.
 */
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type Client,
  type JSONRPCMessage,
  type Transport,
} from "@modelcontextprotocol/client";
import { ResultSchema } from "@modelcontextprotocol/core";
import { isRecord } from "../json.js";
import type { AbortWatch } from "./deadline.js";
import { plainKind } from "./lines.js";
import type { Progress } from "./types.js";

/** What this reads of the SDK's Protocol, which TypeScript keeps private. */
interface SdkInternals {
  _requestMessageId: number;
  _progressHandlers: Map<number, (params: Progress) => void>;
}

interface Waiting {
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

export interface PlainCallOptions {
  /** An AbortSignal, or the call's deadline, which makes none (deadline.ts). */
  signal: AbortWatch;
  onProgress: (p: Progress) => void;
}

/** The plain caller of `client`'s session on `transport`, where the SDK has what it needs. */
export function plainCalls(client: Client, transport: Transport): PlainCalls | undefined {
  const sdk = client as unknown as Partial<SdkInternals>;
  if (typeof sdk._requestMessageId !== "number" || !(sdk._progressHandlers instanceof Map))
    return undefined;
  return new PlainCalls(sdk as SdkInternals, transport);
}

export class PlainCalls {
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly sdk: SdkInternals,
    private readonly transport: Transport,
  ) {
    // After connect: the SDK's handlers are in place, and these run first.
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.claimed(message)) onmessage?.(message, extra);
    };
    const onclose = transport.onclose;
    transport.onclose = () => {
      try {
        onclose?.();
      } finally {
        this.closed();
      }
    };
  }

  /** One tools/call with `params`: its result, or what the SDK's request would reject with. */
  call(params: Record<string, unknown>, o: PlainCallOptions): Promise<Record<string, unknown>> {
    const { signal } = o;
    if (signal.aborted) return Promise.reject(asSdkError(signal.reason));
    const id = this.sdk._requestMessageId++;
    const meta = isRecord(params._meta) ? params._meta : undefined;
    const request: JSONRPCMessage = {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { ...params, _meta: { ...meta, progressToken: id } },
    };
    const progress = this.sdk._progressHandlers;
    progress.set(id, o.onProgress);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () => {
        if (!this.settle(id)) return;
        this.transport
          .send({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: String(signal.reason) },
          })
          .catch(() => {});
        reject(asSdkError(signal.reason));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(id, {
        resolve: (result) => {
          signal.removeEventListener("abort", onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      this.transport.send(request).catch((error: unknown) => {
        // Through the waiting entry: its abort listener goes with it.
        const waiting = this.waiting.get(id);
        if (this.settle(id))
          waiting?.reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /** The answer to one of these calls, taken before the SDK sees it. */
  private claimed(message: JSONRPCMessage): boolean {
    if (!("id" in message) || "method" in message || this.waiting.size === 0) return false;
    // The SDK's own lookup: `Number(response.id)`.
    const id = Number(message.id);
    const waiting = this.waiting.get(id);
    if (!waiting) return false;
    this.settle(id);
    if ("error" in message) {
      const { code, message: text, data } = message.error;
      waiting.reject(ProtocolError.fromError(code, text, data));
      return true;
    }
    const raw = (message as { result: unknown }).result;
    const result = isRecord(raw) && "resultType" in raw ? withoutResultType(raw) : raw;
    if (isRecord(result) && plainKind({ jsonrpc: "2.0", id, result }) === "result") {
      waiting.resolve(result);
      return true;
    }
    const parsed = ResultSchema.safeParse(result);
    if (parsed.success) waiting.resolve(parsed.data);
    else
      waiting.reject(
        new SdkError(SdkErrorCode.InvalidResult, `Invalid result for tools/call: ${parsed.error}`),
      );
    return true;
  }

  /** Forget call `id`; false when it was already settled. */
  private settle(id: number): boolean {
    this.sdk._progressHandlers.delete(id);
    return this.waiting.delete(id);
  }

  private closed(): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    const error = new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed");
    for (const w of waiting) w.reject(error);
  }
}

/** What the SDK rejects an aborted request with. */
function asSdkError(reason: unknown): SdkError {
  return reason instanceof SdkError
    ? reason
    : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
}

/** The 2025 codec's decode: a `resultType` is not part of a 2025 result. */
function withoutResultType(raw: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _dropped, ...rest } = raw;
  return rest;
}
