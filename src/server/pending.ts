/**
 * Calls of 2026-07-28 clients that wait for their client between two requests. Such a client
 * cannot be sent a request: when an upstream asks it something mid-call (or `confirm` asks the
 * person), the tools/call answers `input_required` with the questions and a signed
 * `requestState`, the upstream call keeps waiting here, and the client's retry brings the
 * answers. The table is this replica's alone, bounded, and its entries expire with the call's
 * timeout. A retry that reaches another replica is forwarded here through Redis (with `redis`:
 * pending-remote.ts), else it gets a clean isError; one that comes too late gets one too.
 */
import { createHmac, randomUUID } from "node:crypto";
import {
  createRequestStateCodec,
  inputRequired,
  type InputRequests,
  type InputRequiredResult,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import {
  RELAY_ERROR,
  RelayError,
  type AskOptions,
  type ClientAbilities,
  type ClientChannel,
} from "../upstream/channel.js";
import { textResult, type ToolResult } from "../types.js";
import { isRecord } from "../json.js";
import { SharedUnavailableError, type SharedState } from "../shared/types.js";
import { RemoteRetries } from "./pending-remote.js";

/** What a requestState names: replica, call, caller, and when the call stops waiting (ms). */
interface CallState {
  r: string;
  c: string;
  u: string;
  e: number;
}

type Params = Record<string, unknown>;
type Answer = Record<string, unknown>;

/** One question for the client, until its answer comes back. */
interface Ask {
  key: string;
  method: "roots/list" | "elicitation/create" | "sampling/createMessage";
  params?: Params;
  timeoutMs: number;
  resolve: (answer: Answer) => void;
  reject: (err: Error) => void;
}

type Turn = { result: ToolResult } | { error: unknown } | { asks: Ask[] };

export interface PendingOptions {
  /** Signs requestState; replicas that share it tell each other's states from forgeries. */
  key: Buffer;
  /** Calls that may wait for their client at once on this replica. */
  maxPending?: number;
  /** With Redis: retries of calls another replica holds are forwarded there. */
  shared?: SharedState;
  logger: Logger;
  now?: () => number;
}

/** Calls waiting on this replica, by id. */
export class PendingCalls {
  /** Names this replica in the states it mints. */
  readonly replica = randomUUID().slice(0, 8);
  /** Retries forwarded to and from other replicas (Redis only). */
  private readonly remote?: RemoteRetries;
  private readonly calls = new Map<string, PendingCall>();
  private readonly codec: ReturnType<typeof createRequestStateCodec<CallState>>;
  private readonly maxPending: number;
  private readonly now: () => number;

  constructor(private readonly options: PendingOptions) {
    // Expiry is ours (a clean isError, not the SDK's -32602): the codec's own bound is a backstop.
    this.codec = createRequestStateCodec<CallState>({
      key: createHmac("sha256", options.key).update("mcpx request state").digest(),
      ttlSeconds: 48 * 3600,
    });
    this.maxPending = options.maxPending ?? 1_000;
    this.now = options.now ?? Date.now;
    if (options.shared?.status().store === "redis") {
      this.remote = new RemoteRetries({
        shared: options.shared,
        replica: this.replica,
        resume: (state, answers, caller, signal) => this.resume(state, answers, caller, signal),
        maxRunning: this.maxPending,
        logger: options.logger,
      });
    }
  }

  /** Calls waiting for their client now. */
  get size(): number {
    return this.calls.size;
  }

  /** The SDK's requestState hook: a forged or mangled state is refused before any handler runs. */
  readonly verify = (state: string, ctx: ServerContext): Promise<CallState> =>
    this.codec.verify(state, ctx);

  /**
   * Run a new call with a channel that asks its client through input_required, and answer with
   * its result or its first questions.
   */
  async start(
    inputs: { caller: string; abilities: ClientAbilities; confined: boolean; signal: AbortSignal },
    run: (client: ClientChannel, signal: AbortSignal) => Promise<ToolResult>,
  ): Promise<ToolResult | InputRequiredResult> {
    const call = new PendingCall(inputs.caller);
    const client = call.channel(inputs.abilities, inputs.confined);
    run(client, call.controller.signal).then(
      (result) => call.settle({ result }),
      (error: unknown) => call.settle({ error }),
    );
    return this.step(call, inputs.signal);
  }

  /** A client's retry: hand its answers to the waiting call and answer with what comes next. */
  async resume(
    state: unknown,
    answers: unknown,
    caller: string,
    signal: AbortSignal,
  ): Promise<ToolResult | InputRequiredResult> {
    const s = state as CallState;
    if (s.r !== this.replica && this.remote) {
      // Verified by the SDK's hook, so a replica of this deployment minted it: that one holds
      // the call, and checks the caller against the state's as for a retry reaching it.
      return this.remote.forward(s.r, s, answers, caller, signal).catch((err: unknown) => {
        if (!(err instanceof SharedUnavailableError)) throw err;
        return textResult(
          `This call's state is held by another mcpx replica (${s.r}), and the retry could not be forwarded there: ${err.message} Call the tool again.`,
          true,
        );
      });
    }
    if (s.r !== this.replica) {
      this.options.logger.info(`retry of a call held by another replica (${s.r}) by ${caller}`);
      return textResult(
        "This call's state is held by another mcpx replica, so this one cannot continue it (its answers were not used). Call the tool again.",
        true,
      );
    }
    const call = this.calls.get(s.c);
    if (!call || call.caller !== caller || s.u !== caller || s.e <= this.now()) {
      return textResult(
        "This call is no longer waiting for your answers: it expired (answers must come within the call's timeout) or already ended. Call the tool again.",
        true,
      );
    }
    call.answer(isRecord(answers) ? answers : {});
    return this.step(call, signal);
  }

  /** Shutdown: every waiting call is cancelled. */
  close(): void {
    this.remote?.close();
    for (const call of this.calls.values()) call.expire("mcpx is shutting down");
    this.calls.clear();
  }

  /** Wait for the call's next turn: its result, or questions to send with a fresh state. */
  private async step(
    call: PendingCall,
    signal: AbortSignal,
  ): Promise<ToolResult | InputRequiredResult> {
    const turn = await call.turn(signal);
    if ("result" in turn || "error" in turn) {
      this.calls.delete(call.id);
      if ("error" in turn) throw turn.error;
      return turn.result;
    }
    if (!this.calls.has(call.id) && this.calls.size >= this.maxPending) {
      call.refuse(
        new RelayError(
          RELAY_ERROR.internal,
          `mcpx has ${this.maxPending} calls waiting for their clients on this replica; try again later.`,
        ),
      );
      return this.step(call, signal);
    }
    this.calls.set(call.id, call);
    const waitMs = Math.max(...turn.asks.map((a) => a.timeoutMs));
    call.expireIn(waitMs, () => {
      if (this.calls.get(call.id) === call) this.calls.delete(call.id);
    });
    const requestState = await this.codec.mint({
      r: this.replica,
      c: call.id,
      u: call.caller,
      e: this.now() + waitMs,
    });
    // The questions pass through as the upstream (or confirm) wrote them: the client validates.
    const inputRequests = Object.fromEntries(
      turn.asks.map((a) => [
        a.key,
        { method: a.method, ...(a.params !== undefined && { params: a.params }) },
      ]),
    ) as InputRequests;
    return inputRequired({ inputRequests, requestState });
  }
}

/** One call of a modern client, alive across the requests that carry its questions and answers. */
class PendingCall {
  readonly id = randomUUID();
  /** Cancels the running call: the client cancelled, or stopped answering. */
  readonly controller = new AbortController();
  private readonly queued: Ask[] = [];
  private readonly sent = new Map<string, Ask>();
  private readonly waiters = new Set<() => void>();
  private outcome: { result: ToolResult } | { error: unknown } | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private asked = 0;

  constructor(readonly caller: string) {}

  /** The channel the call's requests use: each question waits for the client's next retry. */
  channel(abilities: ClientAbilities, confined: boolean): ClientChannel {
    return {
      caller: this.caller,
      // A modern client has no connection to name: roots/list_changed never comes from one.
      clientId: `modern:${this.id}`,
      abilities,
      confined,
      roots: (o) => this.ask("roots/list", undefined, o),
      // The 2026-07-28 in-band elicitation has no id: it is the request itself.
      elicit: (p, o) => this.ask("elicitation/create", withoutKey(p, "elicitationId"), o),
      sample: (p, o) => this.ask("sampling/createMessage", p, o),
    };
  }

  settle(outcome: { result: ToolResult } | { error: unknown }): void {
    this.outcome = outcome;
    clearTimeout(this.expiry);
    this.wakeAll();
  }

  /** The client's answers to the questions it was sent; unanswered ones are asked again. */
  answer(answers: Record<string, unknown>): void {
    clearTimeout(this.expiry);
    for (const [key, ask] of this.sent) {
      const answer = answers[key];
      if (!isRecord(answer)) continue;
      this.sent.delete(key);
      ask.resolve(answer);
    }
  }

  /**
   * Wait until the call has something for the client: its outcome, or questions (new ones, and
   * any it left unanswered). The client going away meanwhile cancels the call.
   */
  async turn(signal: AbortSignal): Promise<Turn> {
    const cancel = () => this.controller.abort(signal.reason);
    if (signal.aborted) cancel();
    signal.addEventListener("abort", cancel, { once: true });
    try {
      for (;;) {
        if (this.outcome) return this.outcome;
        if (this.queued.length > 0 || this.sent.size > 0) {
          for (const ask of this.queued.splice(0)) this.sent.set(ask.key, ask);
          return { asks: [...this.sent.values()] };
        }
        await new Promise<void>((resolve) => this.waiters.add(resolve));
      }
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  }

  /** Stop waiting for the client after `ms`: its questions fail and the call is cancelled. */
  expireIn(ms: number, onExpired: () => void): void {
    clearTimeout(this.expiry);
    this.expiry = setTimeout(() => {
      this.expire(`the client did not answer within ${ms} ms`);
      onExpired();
    }, ms);
    this.expiry.unref();
  }

  expire(why: string): void {
    this.refuse(new RelayError(RELAY_ERROR.internal, why));
    this.controller.abort(new Error(why));
  }

  /** Fail every question still open (the upstream gets the error). */
  refuse(err: Error): void {
    for (const ask of [...this.sent.values(), ...this.queued.splice(0)]) ask.reject(err);
    this.sent.clear();
  }

  private ask(method: Ask["method"], params: Params | undefined, o: AskOptions): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      if (o.signal?.aborted) {
        reject(new Error(`cancelled: ${errorMessage(o.signal.reason)}`));
        return;
      }
      this.asked += 1;
      const ask: Ask = {
        key: `${method.split("/")[0]}-${this.asked}`,
        method,
        ...(params !== undefined && { params }),
        timeoutMs: o.timeoutMs,
        resolve,
        reject,
      };
      o.signal?.addEventListener(
        "abort",
        () => {
          const i = this.queued.indexOf(ask);
          if (i >= 0) this.queued.splice(i, 1);
          this.sent.delete(ask.key);
          reject(new Error("cancelled"));
        },
        { once: true },
      );
      this.queued.push(ask);
      this.wakeAll();
    });
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
    this.waiters.clear();
  }
}

function withoutKey(params: Params, key: string): Params {
  if (!(key in params)) return params;
  const { [key]: _dropped, ...rest } = params;
  return rest;
}
