/**
 * Retries of 2026-07-28 calls held by another replica (issue 31). A call that waits for its
 * client's input lives where it started: its upstream request is open there, mid-call, and
 * cannot be moved. So a retry landing here is forwarded to the replica holding the call through
 * Redis pub/sub, which continues the call exactly as if the retry had reached it, and sends back
 * what comes next (the result, or the next `input_required`). Each replica hears on its own
 * topic, `pending-retries:<replica>`; a message names the replica to answer.
 */
import { randomUUID } from "node:crypto";
import type { InputRequiredResult } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";
import type { Logger } from "../logger.js";
import type { SharedState } from "../shared/types.js";
import { textResult, type ToolResult } from "../types.js";

type Outcome = ToolResult | InputRequiredResult;

/** Continue a call held on this replica (PendingCalls.resume). */
export type Resume = (
  state: unknown,
  answers: unknown,
  caller: string,
  signal: AbortSignal,
) => Promise<Outcome>;

/** What travels on a replica's topic. */
type Message =
  | {
      kind: "retry";
      ticket: string;
      from: string;
      state: unknown;
      answers: unknown;
      caller: string;
    }
  | { kind: "cancel"; ticket: string }
  | { kind: "outcome"; ticket: string; result?: Outcome; error?: string };

interface Waiting {
  resolve: (outcome: Outcome) => void;
  reject: (err: Error) => void;
}

export interface RemoteOptions {
  shared: SharedState;
  /** This replica, as the requestStates it mints name it. */
  replica: string;
  /** Continue a call held here. */
  resume: Resume;
  /** Retries of other replicas running here at once (beyond: refused, "try again"). */
  maxRunning: number;
  logger: Logger;
}

/** Forwards retries to the replica holding their call, and runs theirs here. */
export class RemoteRetries {
  /** Retries this replica forwarded, waiting for the holder's outcome, by ticket. */
  private readonly waiting = new Map<string, Waiting>();
  /** Retries other replicas forwarded, running here, by ticket. */
  private readonly running = new Map<string, AbortController>();
  private readonly stop: () => void;

  constructor(private readonly options: RemoteOptions) {
    this.stop = options.shared.listen(topic(options.replica), (m) => this.hear(m));
  }

  /**
   * Continue a call `holder` holds with this retry, and answer with what the call answers there.
   * Redis unreachable: rejects with the SharedUnavailableError naming it. The client going away
   * cancels the retry there too.
   */
  async forward(
    holder: string,
    state: unknown,
    answers: unknown,
    caller: string,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const { shared, replica } = this.options;
    // The holder answers on our topic: listen there before it can answer.
    await shared.listening(topic(replica));
    const ticket = randomUUID();
    const outcome = new Promise<Outcome>((resolve, reject) =>
      this.waiting.set(ticket, { resolve, reject }),
    );
    const cancel = () => {
      this.settle(ticket, { reject: new Error(`cancelled: ${errorMessage(signal.reason)}`) });
      void shared
        .send(topic(holder), { kind: "cancel", ticket } satisfies Message)
        .catch((err: unknown) =>
          this.options.logger.debug(`cancel not sent to replica ${holder}: ${errorMessage(err)}`),
        );
    };
    try {
      const heard = await shared.send(topic(holder), {
        kind: "retry",
        ticket,
        from: replica,
        state,
        answers,
        caller,
      } satisfies Message);
      if (heard === 0) {
        return textResult(
          `The mcpx replica holding this call (${holder}) no longer listens: it stopped or restarted, and the call ended with it (your answers were not used). Call the tool again.`,
          true,
        );
      }
      if (signal.aborted) cancel();
      signal.addEventListener("abort", cancel, { once: true });
      return await outcome;
    } finally {
      signal.removeEventListener("abort", cancel);
      this.waiting.delete(ticket);
    }
  }

  /** Stop hearing other replicas; retries forwarded from here fail, those running here stop. */
  close(): void {
    this.stop();
    for (const ticket of [...this.waiting.keys()])
      this.settle(ticket, { reject: new Error("mcpx is shutting down") });
    for (const controller of this.running.values()) controller.abort(new Error("shutting down"));
    this.running.clear();
  }

  private hear(raw: unknown): void {
    if (!isRecord(raw) || typeof raw.ticket !== "string") return;
    const m = raw as Message;
    switch (m.kind) {
      case "retry":
        this.run(m);
        return;
      case "cancel":
        this.running.get(m.ticket)?.abort(new Error("the client went away"));
        return;
      case "outcome":
        if (m.result !== undefined) this.settle(m.ticket, { resolve: m.result });
        else this.settle(m.ticket, { reject: new Error(m.error ?? "failed on another replica") });
        return;
      default:
        return;
    }
  }

  /** A retry another replica forwarded: continue the call here and send it what comes next. */
  private run(m: Extract<Message, { kind: "retry" }>): void {
    const { logger, maxRunning, shared } = this.options;
    const answer = (outcome: Omit<Extract<Message, { kind: "outcome" }>, "kind" | "ticket">) =>
      void shared
        .send(topic(m.from), { kind: "outcome", ticket: m.ticket, ...outcome })
        .catch((err: unknown) =>
          logger.warn(
            `the outcome of a retry forwarded by replica ${m.from} could not be sent back: ${errorMessage(err)}`,
          ),
        );
    if (typeof m.from !== "string" || typeof m.caller !== "string") return;
    // Only a call held here: a state naming another replica is never forwarded on (no loops).
    if (!isRecord(m.state) || m.state.r !== this.options.replica) {
      answer({ error: "mcpx bug: a retry forwarded to a replica that does not hold its call" });
      return;
    }
    if (this.running.size >= maxRunning) {
      answer({
        result: textResult(
          `mcpx has ${maxRunning} retries from other replicas running on the replica holding this call; try again later.`,
          true,
        ),
      });
      return;
    }
    const controller = new AbortController();
    this.running.set(m.ticket, controller);
    logger.debug(`continuing a call held here with a retry replica ${m.from} got`);
    void this.options
      .resume(m.state, m.answers, m.caller, controller.signal)
      .then(
        (result) => answer({ result }),
        (err: unknown) => answer({ error: errorMessage(err) }),
      )
      .finally(() => this.running.delete(m.ticket));
  }

  private settle(ticket: string, how: { resolve: Outcome } | { reject: Error }): void {
    const waiting = this.waiting.get(ticket);
    if (!waiting) return;
    this.waiting.delete(ticket);
    if ("resolve" in how) waiting.resolve(how.resolve);
    else waiting.reject(how.reject);
  }
}

function topic(replica: string): string {
  return `pending-retries:${replica}`;
}
