/**
 * Messages between the pool (main thread) and an engine worker. Everything crossing is plain
 * data: the script, names, JSON text. No host object ever reaches a worker, and none of a
 * worker's objects reach the host.
 */
import type { CallBytes, SandboxLimits } from "./limits.js";
import type { ScriptError } from "./types.js";

/** One script for a worker. `deadline` is `Date.now()`-based, shared by both threads. */
export interface RunMessage {
  type: "run";
  id: number;
  script: string;
  servers: Record<string, string[]>;
  limits: SandboxLimits;
  limitSetting: string;
  deadline: number;
  /** What the script's inner calls may carry (see CallBytes). */
  callBytes: CallBytes;
}

/** The host's answer to inner call `call` of run `id`: JSON text, or the failure's text. */
export type AnswerMessage =
  | { type: "answer"; id: number; call: number; ok: true; json: string }
  | { type: "answer"; id: number; call: number; ok: false; message: string };

/** Stop run `id` now (the stop flag says why) and report it `done`. */
export interface StopMessage {
  type: "stop";
  id: number;
}

export type ToWorker = RunMessage | AnswerMessage | StopMessage;

/** The worker's view of a finished script; `json` is the returned value's JSON text, if any. */
export type WorkerOutcome =
  | { ok: true; json: string | undefined; logs: string[]; calls: number }
  | { ok: false; error: ScriptError; logs: string[]; calls: number };

export type FromWorker =
  /** The engine is loaded; the worker takes scripts. */
  | { type: "ready" }
  /** The script called `servers[server][tool](args)`; `args` is JSON text. */
  | { type: "call"; id: number; call: number; server: string; tool: string; args: string }
  /** Run `id` ended (by itself, or after a `stop`); the worker is idle again. */
  | { type: "done"; id: number; outcome: WorkerOutcome };

/**
 * Values of the stop flag, an `Int32Array` over a `SharedArrayBuffer` the pool and the worker
 * share. The host sets it; the engine's interrupt handler reads it, so a script busy in a loop
 * stops without the worker ever reading a message.
 */
export const STOP = {
  none: 0,
  cancelled: 1,
  timeMs: 2,
  calls: 3,
  closed: 4,
} as const;

/** What the pool gives a worker at start. */
export interface WorkerInit {
  /** Length 1: the stop flag (see {@link STOP}). */
  stop: Int32Array;
}
