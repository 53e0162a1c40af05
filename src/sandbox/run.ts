/**
 * One script as the main thread sees it: its inner calls, its wall-time timer, its signal, and
 * its answer. The engine worker enforces limits from inside; this side enforces them from
 * outside too (a deadline timer, the call count, the stop flag), so a worker that stops
 * answering cannot hold a script past its limits.
 */
import { errorMessage } from "../errors.js";
import type { CallBytes, LimitName, SandboxLimits } from "./limits.js";
import {
  argumentsTooLarge,
  cancelledError,
  limitError,
  resultTooLarge,
  toolRef,
  type ErrorContext,
} from "./messages.js";
import { STOP, type FromWorker, type RunMessage, type WorkerOutcome } from "./protocol.js";
import type { InnerCallResult, RunOptions, ScriptError, ScriptOutcome } from "./types.js";

/** The worker a run is on, as the run needs it. */
export interface RunHost {
  /** Sets the worker's stop flag (read by its interrupt handler). */
  flag(value: number): void;
  post(msg: RunMessage | { type: "stop"; id: number } | AnswerOut): void;
  /** Ends the worker at once: it did not answer a stop within the grace period. */
  kill(): void;
}

type AnswerOut =
  | { type: "answer"; id: number; call: number; ok: true; json: string }
  | { type: "answer"; id: number; call: number; ok: false; message: string };

/**
 * How long past its deadline a script's worker has to report the limit itself (with the line
 * it stopped at and its logs) before the host answers for it.
 */
const DEADLINE_SLACK_MS = 250;

export class ScriptRun {
  readonly answer: Promise<ScriptOutcome>;
  private resolve!: (outcome: ScriptOutcome) => void;
  private readonly inner = new AbortController();
  private readonly tools: ReadonlyMap<string, ReadonlySet<string>>;
  private readonly errorCtx: ErrorContext;
  private host: RunHost | undefined;
  private timer: NodeJS.Timeout | undefined;
  private calls = 0;
  private settled = false;
  private readonly onAbort = () => this.cancel(false);

  constructor(
    readonly id: number,
    private readonly script: string,
    private readonly options: RunOptions,
    private readonly limits: SandboxLimits,
    private readonly graceMs: number,
    private readonly callBytes: CallBytes,
  ) {
    this.answer = new Promise((resolve) => (this.resolve = resolve));
    this.tools = new Map(Object.entries(options.servers).map(([s, ts]) => [s, new Set(ts)]));
    this.errorCtx = { limits, setting: options.limitSetting ?? "sandbox.limits", lines: 0 };
    if (options.signal?.aborted) this.cancel(false);
    else options.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Whose script this is: its line in the pool's queue (a script without one has its own). */
  get caller(): string {
    return this.options.caller ?? `(script ${this.id})`;
  }

  get done(): boolean {
    return this.settled;
  }

  /** Starts the script on a worker (whose stop flag the run resets). */
  start(host: RunHost): void {
    if (this.settled) return;
    this.host = host;
    host.flag(STOP.none);
    const deadline = Date.now() + this.limits.timeMs;
    host.post({
      type: "run",
      id: this.id,
      script: this.script,
      servers: Object.fromEntries([...this.tools].map(([s, ts]) => [s, [...ts]])),
      limits: this.limits,
      limitSetting: this.errorCtx.setting,
      deadline,
      callBytes: this.callBytes,
    });
    this.timer = setTimeout(() => this.stopAt("timeMs"), this.limits.timeMs + DEADLINE_SLACK_MS);
  }

  /** A message from the worker about this run. */
  receive(msg: FromWorker): void {
    if (msg.type === "call") this.call(msg.call, msg.server, msg.tool, msg.args);
    else if (msg.type === "done") this.settle(this.toOutcome(msg.outcome));
  }

  /** Cancels the script: at once if it waits for a worker, else through the stop flag. */
  cancel(closing: boolean): void {
    if (this.settled) return;
    this.stopWorker(closing ? STOP.closed : STOP.cancelled);
    this.settle({ ok: false, error: cancelledError(closing), logs: [], calls: this.calls });
  }

  /** The worker died under the script. */
  fail(error: ScriptError): void {
    this.settle({ ok: false, error, logs: [], calls: this.calls });
  }

  /**
   * A limit the host enforces: the worker is asked to stop and report (it knows the line and the
   * logs); if it has not within the grace period, the host answers for it.
   */
  private stopAt(limit: Extract<LimitName, "timeMs" | "calls">): void {
    if (this.settled) return;
    this.stopWorker(STOP[limit]);
    this.timer = setTimeout(() => {
      // Stuck where QuickJS never polls for interrupts (a few built-ins loop in C).
      this.settle({
        ok: false,
        error: limitError(limit, this.errorCtx),
        logs: [],
        calls: this.calls,
      });
      this.host?.kill();
    }, this.graceMs);
  }

  private stopWorker(flag: number): void {
    if (!this.host) return;
    this.host.flag(flag);
    this.host.post({ type: "stop", id: this.id });
  }

  private call(call: number, server: string, tool: string, argsJson: string): void {
    if (this.settled) return;
    this.calls += 1;
    // The engine counts too and stops first; this count holds even if it did not.
    if (this.calls > this.limits.calls) return this.stopAt("calls");
    void this.forward(server, tool, argsJson).then((result) => {
      if (this.settled) return;
      const json = "value" in result ? (JSON.stringify(result.value) ?? "null") : undefined;
      // A value larger than the script's whole memory could only fail inside it, after the
      // worker had copied it: refused here, named, and the copy never made.
      const max = this.limits.memoryBytes;
      const message =
        json === undefined
          ? (result as { error: string }).error
          : json.length > max
            ? resultTooLarge(toolRef(server, tool), json.length, max)
            : undefined;
      this.host?.post(
        message === undefined
          ? { type: "answer", id: this.id, call, ok: true, json: json! }
          : { type: "answer", id: this.id, call, ok: false, message },
      );
    });
  }

  /** One inner call, on the host: only tools of the script's view, args parsed here. */
  private async forward(server: string, tool: string, argsJson: string): Promise<InnerCallResult> {
    if (!this.tools.get(server)?.has(tool)) {
      return { error: `${toolRef(server, tool)} is not a tool this script can call.` };
    }
    // The worker refuses larger arguments first; checked again before JSON.parse on this thread,
    // whose memory and time every caller shares (a UTF-8 encoding is never shorter than the text).
    const max = this.callBytes.argument;
    if (argsJson.length > max || Buffer.byteLength(argsJson) > max) {
      return { error: argumentsTooLarge(toolRef(server, tool), argsJson.length, max) };
    }
    try {
      const args: unknown = JSON.parse(argsJson);
      return await this.options.call(server, tool, args, this.inner.signal);
    } catch (err) {
      return { error: errorMessage(err) };
    }
  }

  /** The worker's outcome, its value parsed here once its size is checked (as the worker did). */
  private toOutcome(outcome: WorkerOutcome): ScriptOutcome {
    if (!outcome.ok) return outcome;
    const { json, logs, calls } = outcome;
    if (json !== undefined && json.length > this.limits.resultBytes) {
      return { ok: false, error: limitError("resultBytes", this.errorCtx), logs, calls };
    }
    const value: unknown = json === undefined ? undefined : JSON.parse(json);
    return { ok: true, value, logs, calls };
  }

  private settle(outcome: ScriptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener("abort", this.onAbort);
    // Inner calls still running belong to a script that is over.
    this.inner.abort();
    this.resolve(outcome);
  }
}
