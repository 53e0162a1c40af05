/**
 * Answers of 2025-era HTTP clients to the requests mcpx sent them mid-call (roots, elicitation,
 * sampling). A request rides its call's response stream on the replica running the call; the
 * client POSTs its answer, which may land on any replica. Here it is handed to the exchange that
 * asked; on another replica, with Redis, it is published on the asking replica's channel (the
 * wire id names that replica, see ResponseRoutes) with the session id, and handed to the
 * exchange there as if it had arrived there. Without Redis it is dropped and logged, and the
 * call ends at its timeout.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";
import type { ProxyContext } from "./context.js";
import { ResponseRoutes } from "./seeded-transport.js";

/** This replica's requests to 2025-era clients, and their answers from wherever they land. */
export class LegacyAnswers {
  /** Requests to clients (elicitation, …) whose answers this replica waits for. */
  readonly routes: ResponseRoutes;
  private readonly stop: () => void;

  /** `verify`: whether a session id (from another replica) is one of this deployment's. */
  constructor(
    private readonly ctx: ProxyContext,
    private readonly verify: (sid: string) => boolean,
  ) {
    this.routes = this.answerRoutes();
    this.stop =
      ctx.shared?.listen(answersTopic(this.routes.replica), (m) => this.fromReplica(m)) ??
      (() => {});
  }

  /**
   * A client's answer in session `sid`: to the exchange here that asked, else (Redis) to the
   * replica that did. Returns why it could not be forwarded (Redis unreachable), if so.
   */
  async take(sid: string, answer: Record<string, unknown>): Promise<string | undefined> {
    if (this.routes.deliver(sid, answer as JSONRPCMessage)) return undefined;
    const asker = ResponseRoutes.replicaOf(answer.id);
    const shared = this.ctx.shared;
    if (
      asker === undefined ||
      asker === this.routes.replica ||
      shared?.status().store !== "redis"
    ) {
      this.ctx.logger.info(
        "an HTTP client answered a request no exchange on this replica waits for (asked on another replica, or it timed out): dropped",
      );
      return undefined;
    }
    // The session id travels with it: the asking replica matches session and wire id, so an
    // answer counts only for a request sent to this very session.
    try {
      const heard = await shared.send(answersTopic(asker), { sid, answer });
      if (heard === 0) {
        this.ctx.logger.info(
          `an HTTP client answered a request no exchange on this replica waits for; replica ${asker}, which asked, no longer listens (it stopped): dropped`,
        );
      }
      return undefined;
    } catch (err) {
      const why = `This answer could not reach the mcpx replica that asked (${asker}): ${errorMessage(err)}`;
      this.ctx.logger.warn(why);
      return why;
    }
  }

  close(): void {
    this.stop();
  }

  /**
   * The table of this replica's requests to clients. With Redis, each request waits to be sent
   * until this replica's subscription is acknowledged: a forwarded answer is never published
   * before anyone listens. Redis unreachable: sent anyway (an answer landing here still works).
   */
  private answerRoutes(): ResponseRoutes {
    const shared = this.ctx.shared;
    if (shared?.status().store !== "redis") return new ResponseRoutes();
    const routes: ResponseRoutes = new ResponseRoutes({
      listening: () =>
        shared.listening(answersTopic(routes.replica)).catch((err: unknown) => {
          this.ctx.logger.debug(
            `asking a client without a route back through Redis: ${errorMessage(err)}`,
          );
        }),
    });
    return routes;
  }

  /** An answer another replica got for a request an exchange here sent its client. */
  private fromReplica(message: unknown): void {
    if (!isRecord(message) || typeof message.sid !== "string" || !isRecord(message.answer)) return;
    if (!this.verify(message.sid)) return;
    if (!this.routes.deliver(message.sid, message.answer as JSONRPCMessage)) {
      this.ctx.logger.info(
        "an answer forwarded by another replica found no exchange waiting for it here (it timed out or was cancelled): dropped",
      );
    }
  }
}

/** Shared-state topic on which a replica hears answers to its requests that other replicas got. */
function answersTopic(replica: string): string {
  return `legacy-answers:${replica}`;
}
