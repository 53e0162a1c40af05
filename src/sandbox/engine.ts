/**
 * One script in one fresh QuickJS runtime, inside an engine worker. The script's inner calls are
 * promises the host resolves later (`answer`), so the engine returns to the worker's event loop
 * while calls are out and a script may run several at once (`Promise.all`). Every way back into
 * WebAssembly goes through `guard`, so a failure of the engine itself ends the run cleanly.
 */
import {
  Lifetime,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import type { LimitName } from "./limits.js";
import {
  argumentsTooLarge,
  engineLimit,
  internalError,
  limitError,
  neverSettles,
  notJson,
  syntaxError,
  syntaxFrom,
  thrownError,
  toolRef,
  cancelledError,
  type DescribedError,
  type ErrorContext,
} from "./messages.js";
import { PRELUDE, PRELUDE_FILE } from "./prelude.js";
import { STOP, type AnswerMessage, type RunMessage, type WorkerOutcome } from "./protocol.js";
import { lineCount, positionInStack, SCRIPT_FILE, wrapScript, type Stripped } from "./source.js";
import type { ScriptError } from "./types.js";

/** What a run needs from its worker. */
export interface EngineIO {
  /** The stop flag the host sets (see STOP). */
  stop: Int32Array;
  postCall(call: number, server: string, tool: string, args: string): void;
  finish(outcome: WorkerOutcome): void;
  strip(wrapped: string, scriptLines: number): Stripped;
}

type StopReason = LimitName | "cancelled" | "closed";

const FLAG_REASON: Record<number, StopReason> = {
  [STOP.cancelled]: "cancelled",
  [STOP.timeMs]: "timeMs",
  [STOP.calls]: "calls",
  [STOP.closed]: "closed",
};

/** Time the engine's own helpers may take to read a result or an error after a stop. */
const HELPER_MS = 100;
/** Memory the helpers may use beyond the limit, so a script stopped out of memory can be described. */
const HELPER_BYTES = 1024 * 1024;

export class EngineRun {
  private readonly rt: QuickJSRuntime;
  private readonly ctx: QuickJSContext;
  private readonly errorCtx: ErrorContext;
  private readonly pending = new Map<number, QuickJSDeferredPromise>();
  /** Bytes of arguments of each call still out, and their sum. */
  private readonly inFlight = new Map<number, number>();
  private inFlightBytes = 0;
  private readonly logs: string[] = [];
  private logBytes = 0;
  private calls = 0;
  private stopReason: StopReason | undefined;
  /** While set, the interrupt handler lets the engine's helpers run until this time. */
  private helperDeadline: number | undefined;
  private finished = false;
  /** The engine failed inside WebAssembly: nothing in this runtime may be touched again. */
  private broken = false;
  /** Set when the run ends: whether the QuickJS instance may serve another script. */
  reusable = false;
  private main: QuickJSHandle | undefined;
  private encode: QuickJSHandle | undefined;
  private describe: QuickJSHandle | undefined;

  constructor(
    module: QuickJSWASMModule,
    private readonly job: RunMessage,
    private readonly io: EngineIO,
  ) {
    this.errorCtx = { limits: job.limits, setting: job.limitSetting, lines: lineCount(job.script) };
    this.rt = module.newRuntime({
      memoryLimitBytes: job.limits.memoryBytes,
      maxStackSizeBytes: job.limits.stackBytes,
      interruptHandler: () => this.shouldInterrupt(),
    });
    // Without a loader QuickJS leaves import() pending forever; with this one it rejects clearly.
    this.rt.setModuleLoader((name) => ({
      error: new Error(
        `import("${name}") is not available in the sandbox: scripts see only servers, console and JavaScript built-ins.`,
      ),
    }));
    this.ctx = this.rt.newContext();
  }

  /** Evaluates the script; it then runs until it settles, waiting on `answer` for inner calls. */
  start(): void {
    if (!this.guard(() => this.install())) return;
    if (!this.guard(() => this.evaluate())) return;
    this.pump();
  }

  /** The host's answer to an inner call. */
  answer(msg: AnswerMessage): void {
    const deferred = this.pending.get(msg.call);
    if (this.finished || !deferred) return;
    this.pending.delete(msg.call);
    this.inFlightBytes -= this.inFlight.get(msg.call) ?? 0;
    this.inFlight.delete(msg.call);
    const ok = this.guard(() => {
      const text = this.ctx.newString(msg.ok ? msg.json : msg.message);
      if (msg.ok) deferred.resolve(text);
      else deferred.reject(text);
      text.dispose();
      return true;
    });
    if (ok) this.pump();
  }

  /** The host stopped the script (the flag says why): end it now with that reason. */
  stop(): void {
    if (this.finished) return;
    this.shouldInterrupt();
    this.finishStopped();
  }

  private shouldInterrupt(): boolean {
    if (this.helperDeadline !== undefined) return Date.now() > this.helperDeadline;
    if (this.stopReason) return true;
    const flag = Atomics.load(this.io.stop, 0);
    if (flag !== STOP.none) this.stopReason = FLAG_REASON[flag] ?? "cancelled";
    else if (Date.now() > this.job.deadline) this.stopReason = "timeMs";
    return this.stopReason !== undefined;
  }

  /** Runs the prelude: `servers`, `console`, and the helpers that read results and errors. */
  private install(): boolean {
    const { ctx } = this;
    const installer = ctx.evalCode(PRELUDE, PRELUDE_FILE);
    if (installer.error) return this.setupFailed(installer.error);
    const description = ctx.newString(JSON.stringify(this.job.servers));
    const hostCall = ctx.newFunction("hostCall", (s, t, a) => this.onCall(s, t, a));
    const hostLog = ctx.newFunction("hostLog", (line) => this.onLog(line));
    const result = ctx.callFunction(installer.value, ctx.undefined, description, hostCall, hostLog);
    for (const h of [installer.value, description, hostCall, hostLog]) h.dispose();
    if (result.error) return this.setupFailed(result.error);
    this.encode = ctx.getProp(result.value, 0);
    this.describe = ctx.getProp(result.value, 1);
    result.value.dispose();
    return true;
  }

  /** The prelude itself failed: with sane limits only a bug of ours does that. */
  private setupFailed(error: QuickJSHandle): false {
    const what = this.ctx.dump(error) as { message?: unknown } | undefined;
    error.dispose();
    return this.end(
      internalError(`the script's context could not be set up: ${String(what?.message)}`),
    );
  }

  /** Evaluates the wrapped script as JavaScript, and as TypeScript if it does not parse. */
  private evaluate(): boolean {
    const wrapped = wrapScript(this.job.script);
    const first = this.ctx.evalCode(wrapped, SCRIPT_FILE);
    if (!first.error) return this.setMain(first.value);
    if (this.shouldInterrupt()) return this.failWith(first.error);
    const asJs = this.read(first.error);
    if (asJs.name !== "SyntaxError" || engineLimit(asJs)) return this.failWith(asJs);
    const stripped = this.io.strip(wrapped, this.errorCtx.lines);
    if (!stripped.ok) {
      return this.end(syntaxError(stripped.message, stripped.position, stripped.unsupported));
    }
    // Nothing was stripped: the script is JavaScript, and QuickJS's error stands.
    if (stripped.code === wrapped) return this.end(syntaxFrom(asJs, this.errorCtx.lines));
    const second = this.ctx.evalCode(stripped.code, SCRIPT_FILE);
    if (!second.error) return this.setMain(second.value);
    if (this.shouldInterrupt()) return this.failWith(second.error);
    const asTs = this.read(second.error);
    return asTs.name === "SyntaxError"
      ? this.end(syntaxFrom(asTs, this.errorCtx.lines))
      : this.failWith(asTs);
  }

  private setMain(promise: QuickJSHandle): true {
    this.main = promise;
    return true;
  }

  /** Runs pending jobs, then ends the run if the script settled (or can never settle). */
  private pump(): void {
    while (!this.finished) {
      const jobs = this.guard(() => this.rt.executePendingJobs());
      if (!jobs) return;
      if (jobs.error) {
        this.failWith(jobs.error);
        return;
      }
      if (this.shouldInterrupt()) return this.finishStopped(this.rejection());
      const state = this.guard(() => this.ctx.getPromiseState(this.main!));
      if (!state) return;
      if (state.type === "fulfilled") return this.finishValue(state.value);
      if (state.type === "rejected") return this.finishError(state.error);
      if (this.rt.hasPendingJob()) continue;
      if (this.pending.size === 0) this.end(neverSettles());
      return;
    }
  }

  /** The main promise's rejection, if it has one: after an interrupt, it says where. */
  private rejection(): QuickJSHandle | undefined {
    const state = this.guard(() => this.ctx.getPromiseState(this.main!));
    if (state?.type === "fulfilled") state.value.dispose();
    return state?.type === "rejected" ? state.error : undefined;
  }

  private onCall(serverH: QuickJSHandle, toolH: QuickJSHandle, argsH: QuickJSHandle) {
    const { ctx } = this;
    if (this.finished || this.stopReason) throw new Error("The script is being stopped.");
    if ([serverH, toolH, argsH].some((h) => ctx.typeof(h) !== "string")) {
      throw new TypeError("Inner calls go through servers.<server>.<tool>(args).");
    }
    this.calls += 1;
    if (this.calls > this.job.limits.calls) {
      this.stopReason = "calls";
      throw new Error("The script made too many inner calls.");
    }
    const deferred = ctx.newPromise();
    const server = ctx.getString(serverH);
    const tool = ctx.getString(toolH);
    const args = this.readArgs(argsH, server, tool);
    if ("refused" in args) {
      // Rejected, not thrown: `servers.x.y(huge).catch(…)` handles it like any failed call.
      const text = ctx.newString(args.refused);
      deferred.reject(text);
      text.dispose();
      return deferred.handle;
    }
    this.pending.set(this.calls, deferred);
    this.inFlight.set(this.calls, args.bytes);
    this.inFlightBytes += args.bytes;
    this.io.postCall(this.calls, server, tool, args.json);
    return deferred.handle;
  }

  /**
   * The call's arguments as JSON text, if they fit what one call and the calls in flight may
   * carry. The length is read before the text is copied out of the script's memory: a UTF-8
   * encoding is never shorter than the string, so a huge text is refused without a copy.
   */
  private readArgs(
    argsH: QuickJSHandle,
    server: string,
    tool: string,
  ): { json: string; bytes: number } | { refused: string } {
    const { argument, inFlight } = this.job.callBytes;
    const ref = toolRef(server, tool);
    const lengthH = this.ctx.getProp(argsH, "length");
    const length = this.ctx.getNumber(lengthH);
    lengthH.dispose();
    if (length > argument) return { refused: argumentsTooLarge(ref, length, argument) };
    const json = this.ctx.getString(argsH);
    const bytes = Buffer.byteLength(json);
    if (bytes > argument) return { refused: argumentsTooLarge(ref, bytes, argument) };
    if (this.inFlightBytes + bytes > inFlight) {
      return { refused: argumentsTooLarge(ref, bytes, inFlight, this.inFlightBytes) };
    }
    return { json, bytes };
  }

  private onLog(lineH: QuickJSHandle): void {
    if (this.finished || this.stopReason) return;
    const budget = this.job.limits.logBytes - this.logBytes;
    // Like the result: a line longer than the budget is refused before it is copied out.
    const length = this.ctx.getProp(lineH, "length");
    const tooLong = this.ctx.getNumber(length) + 1 > budget;
    length.dispose();
    const line = tooLong ? "" : this.ctx.getString(lineH);
    const bytes = Buffer.byteLength(line) + 1;
    if (tooLong || bytes > budget) {
      this.stopReason = "logBytes";
      return;
    }
    this.logBytes += bytes;
    this.logs.push(line);
  }

  private finishValue(value: QuickJSHandle): void {
    const encoded = this.guard(() =>
      this.ctx.callFunction(this.encode!, this.ctx.undefined, value),
    );
    if (!encoded) return;
    value.dispose();
    if (encoded.error) {
      if (this.shouldInterrupt()) return this.finishStopped(encoded.error);
      const e = this.read(encoded.error);
      const error = thrownError(e, this.errorCtx);
      this.end(error.kind === "limit" ? error : notJson(`${e.name}: ${e.message}`));
      return;
    }
    const json = this.guard(() => this.readResult(encoded.value));
    if (json === false) this.end(limitError("resultBytes", this.errorCtx));
    else if (json !== undefined) this.end(undefined, json === true ? undefined : json);
  }

  /** The result's JSON text; `true` for no value (undefined), `false` past `resultBytes`. */
  private readResult(handle: QuickJSHandle): string | boolean {
    try {
      if (this.ctx.typeof(handle) !== "string") return true;
      const max = this.job.limits.resultBytes;
      // A UTF-8 encoding is never shorter than the string's length: no copy of a huge value.
      const length = this.ctx.getProp(handle, "length");
      const tooLong = this.ctx.getNumber(length) > max;
      length.dispose();
      if (tooLong) return false;
      const json = this.ctx.getString(handle);
      return Buffer.byteLength(json) > max ? false : json;
    } finally {
      handle.dispose();
    }
  }

  private finishError(error: QuickJSHandle): void {
    if (this.shouldInterrupt()) return this.finishStopped(error);
    this.failWith(error);
  }

  /** Ends the run with the stop reason; `error` (the interrupt's exception) gives the position. */
  private finishStopped(error?: QuickJSHandle | DescribedError): void {
    const described = error instanceof Lifetime ? this.read(error) : error;
    // An interrupt reports the start of the function it stopped, not the line it was on.
    const position =
      described && described.message !== "interrupted"
        ? positionInStack(described.stack, this.errorCtx.lines)
        : undefined;
    const reason = this.stopReason ?? "cancelled";
    this.end(
      reason === "cancelled" || reason === "closed"
        ? cancelledError(reason === "closed")
        : limitError(reason, this.errorCtx, position),
    );
  }

  /** Ends the run with what the script threw (a handle, disposed here, or already read). */
  private failWith(error: QuickJSHandle | DescribedError): false {
    if (this.shouldInterrupt()) {
      this.finishStopped(error);
      return false;
    }
    const described = error instanceof Lifetime ? this.read(error) : error;
    if (described.name === "InternalError" && described.message === "interrupted") {
      // An interrupt nobody asked for: calling the interrupt handler itself failed, which only
      // happens when V8's stack is exhausted under a deep QuickJS recursion.
      this.stopReason = "stackBytes";
      this.finishStopped(described);
      return false;
    }
    this.end(thrownError(described, this.errorCtx));
    return false;
  }

  /**
   * Reads a thrown value through the prelude's `describe` (which may run the script's getters:
   * they get HELPER_MS and HELPER_BYTES, no more), then disposes it.
   */
  private read(error: QuickJSHandle): DescribedError {
    if (this.broken || !this.describe || !error.alive) return { thrown: "(an unreadable error)" };
    this.helperDeadline = Date.now() + HELPER_MS;
    try {
      this.rt.setMemoryLimit(this.job.limits.memoryBytes + HELPER_BYTES);
      const text = this.ctx.callFunction(this.describe, this.ctx.undefined, error);
      error.dispose();
      if (text.error) {
        text.error.dispose();
        return { thrown: "(an unreadable error)" };
      }
      const json = this.ctx.getString(text.value);
      text.value.dispose();
      this.rt.setMemoryLimit(this.job.limits.memoryBytes);
      return JSON.parse(json) as DescribedError;
    } catch {
      // The engine broke while reading (see guard): report what is known, touch nothing more.
      this.broken = true;
      return { thrown: "(an unreadable error)" };
    } finally {
      this.helperDeadline = undefined;
    }
  }

  /**
   * Calls into the engine. A host exception means the engine broke mid-call (V8's own stack ran
   * out inside WebAssembly, or a trap): nothing in this runtime can be trusted any more, so the
   * run ends without touching it, and the worker throws the whole module away (it does anyway).
   */
  private guard<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.broken = true;
      const overflow = err instanceof RangeError && /call stack/i.test(err.message);
      this.end(
        overflow
          ? limitError("stackBytes", this.errorCtx)
          : internalError(err instanceof Error ? err.message : String(err)),
      );
      return undefined;
    }
  }

  /** Frees the runtime (unless it is broken), then reports the outcome, once. */
  private end(error: ScriptError | undefined, json?: string): false {
    if (this.finished) return false;
    this.finished = true;
    if (!this.broken) this.dispose();
    // A script that exhausted memory or stack leaves the allocator at its most stressed: the
    // worker renews the instance rather than trust it with the next caller's script.
    this.reusable = !this.broken && error?.limit !== "memoryBytes" && error?.limit !== "stackBytes";
    const base = { logs: this.logs, calls: Math.min(this.calls, this.job.limits.calls) };
    this.io.finish(error ? { ok: false, error, ...base } : { ok: true, json, ...base });
    return false;
  }

  private dispose(): void {
    try {
      for (const deferred of this.pending.values()) deferred.dispose();
      for (const h of [this.main, this.encode, this.describe]) if (h?.alive) h.dispose();
      this.ctx.dispose();
      this.rt.dispose();
    } catch {
      // A leaked handle makes QuickJS abort on free, which ends the instance: renew it.
      this.broken = true;
    }
  }
}
