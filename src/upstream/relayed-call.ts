/**
 * One tools/call whose upstream may ask the calling client something meanwhile. A legacy
 * upstream sends real requests, which reach the call's channel through the session's asker; a
 * modern upstream answers `input_required`, and the rounds are driven here, each question
 * answered by the channel. The call's timeout restarts on progress and stops while the client is
 * being asked (deadline.ts). session.ts supplies the wire; no SDK here.
 */
import type { SessionAsker } from "./asker.js";
import type { ClientChannel, RelayKind } from "./channel.js";
import type { Progress, RequestOptions } from "./types.js";
import type { Era } from "../types.js";
import { IdleDeadline, type AbortWatch } from "./deadline.js";
import { isRecord } from "../json.js";

/** Rounds of input a modern upstream may ask for in one call. */
export const MAX_INPUT_ROUNDS = 16;

/**
 * The call's deadline: what a plain call waits on (plain-call.ts) without an AbortSignal, and
 * the AbortSignal for requests through the SDK.
 */
export interface CallDeadline extends AbortWatch {
  readonly signal: AbortSignal;
}

/** What a relayed call needs of its session's SDK client. */
export interface CallWire {
  era: Era;
  /**
   * Send one tools/call with `params`. With `inputRequired`, an input_required answer is
   * returned as it is, for this module to drive.
   */
  request(
    params: Record<string, unknown>,
    options: { deadline: CallDeadline; onProgress: (p: Progress) => void; inputRequired: boolean },
  ): Promise<Record<string, unknown>>;
  /** notifications/roots/list_changed to the upstream. */
  rootsChanged(): Promise<void>;
  ping(timeoutMs: number): Promise<void>;
  /** What the call fails with when its deadline passes (an SDK timeout error). */
  timeoutError(timeoutMs: number): unknown;
}

/**
 * Run `params` (a tools/call) for `channel`'s call on the session of `asker`. The upstream
 * request ends when `requestSignal` aborts (by default the caller's `o.signal`; a request that may
 * create a task outlives its caller a little, see tasks.ts `lingering`); nothing else is done for
 * a caller that has gone (no question relayed to it, no new round).
 */
export async function callRelayed(
  asker: SessionAsker,
  wire: CallWire,
  params: Record<string, unknown>,
  o: RequestOptions,
  channel: ClientChannel,
  requestSignal: AbortSignal | undefined = o.signal,
): Promise<Record<string, unknown>> {
  const deadline = new IdleDeadline(
    o.timeoutMs,
    () => wire.timeoutError(o.timeoutMs),
    requestSignal,
  );
  const sent = {
    deadline,
    onProgress: (p: Progress) => {
      deadline.touch();
      o.onProgress?.(p);
    },
  };
  const wait = {
    timeoutMs: o.timeoutMs,
    ...(o.signal && { signal: o.signal }),
    hold: deadline.hold,
  };
  try {
    return await asker.during(channel, wait, async () => {
      if (wire.era === "modern") {
        return driveInputRounds(asker, wire, params, channel, sent, o.signal);
      }
      // A legacy upstream that read roots earlier reads them again when this client's differ.
      await asker.alignRoots(
        channel,
        () => wire.rootsChanged(),
        () => wire.ping(Math.min(o.timeoutMs, 1_000)),
      );
      return wire.request(params, { inputRequired: false, ...sent });
    });
  } finally {
    deadline.dispose();
  }
}

/** A modern call: each input_required answer is fulfilled by the client, then retried. */
async function driveInputRounds(
  asker: SessionAsker,
  wire: CallWire,
  params: Record<string, unknown>,
  channel: ClientChannel,
  sent: { deadline: CallDeadline; onProgress: (p: Progress) => void },
  caller: AbortSignal | undefined,
): Promise<Record<string, unknown>> {
  let retry: Record<string, unknown> = {};
  for (let round = 0; ; round++) {
    const result = await wire.request({ ...params, ...retry }, { inputRequired: true, ...sent });
    if (result.resultType !== "input_required") return result;
    // The caller has gone: its client is not asked, and the tool is not called again.
    caller?.throwIfAborted();
    if (round >= MAX_INPUT_ROUNDS)
      throw new Error(`the server still asked for input after ${MAX_INPUT_ROUNDS} rounds`);
    const requests = isRecord(result.inputRequests) ? result.inputRequests : {};
    const answers = await answerInputs(asker, channel, requests);
    retry = {
      ...(Object.keys(answers).length > 0 && { inputResponses: answers }),
      ...(typeof result.requestState === "string" && { requestState: result.requestState }),
    };
  }
}

/**
 * A modern upstream's embedded input requests (`inputRequests`: an input_required result, or a
 * 2026-07-28 task waiting for input), each answered by `channel`'s client: the `inputResponses`.
 */
export async function answerInputs(
  asker: SessionAsker,
  channel: ClientChannel,
  requests: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const answers = await Promise.all(
    Object.entries(requests).map(async ([key, request]) => {
      const { method, params: p } = isRecord(request) ? request : {};
      const answer = await asker.answerFor(channel, relayKind(method), isRecord(p) ? p : undefined);
      return [key, answer] as const;
    }),
  );
  return Object.fromEntries(answers);
}

/** The relay kind of an embedded input request's method; anything else is the upstream's error. */
function relayKind(method: unknown): RelayKind {
  switch (method) {
    case "roots/list":
      return "roots";
    case "elicitation/create":
      return "elicitation";
    case "sampling/createMessage":
      return "sampling";
    default:
      throw new Error(`the server asked for input of an unknown kind (${String(method)})`);
  }
}
