/**
 * Entry of an engine worker thread: runs one script at a time, each in a fresh QuickJS runtime
 * and context (its own heap: no object, global or prototype of one script reaches the next).
 * Runtimes share a QuickJS WebAssembly instance, which is renewed — off the script's path — after
 * a script that broke it or exhausted memory or stack, once its memory has grown, and every
 * RENEW_AFTER scripts. A fresh instance per script would isolate even freed bytes, but costs
 * 2–150 ms each (V8 reserves address space per WebAssembly memory and collects garbage to
 * reclaim it), far more than the whole script.
 */
import { parentPort, workerData } from "node:worker_threads";
import { EngineRun } from "./engine.js";
import type { FromWorker, ToWorker, WorkerInit } from "./protocol.js";
import { loadQuickJS } from "./quickjs.js";
import { createStripper } from "./source.js";

const port = parentPort;
if (!port) throw new Error("src/sandbox/worker.ts runs only as a worker thread (see pool.ts).");
const { stop } = workerData as WorkerInit;
const post = (msg: FromWorker) => port.postMessage(msg);

/** Scripts one instance serves at most, however clean they were. */
const RENEW_AFTER = 256;
/** An instance whose memory grew past this is renewed: WebAssembly memory never shrinks. */
const RENEW_ABOVE_BYTES = 32 * 1024 * 1024;

const instantiate = await loadQuickJS();
const strip = createStripper();
let instance = instantiate();
let served = 0;
let current: { id: number; run: EngineRun } | undefined;

/** Messages are handled one after another: a run starts only once its instance is ready. */
let queue: Promise<void> = Promise.resolve();
port.on("message", (msg: ToWorker) => {
  queue = queue.then(() => handle(msg));
});

async function handle(msg: ToWorker): Promise<void> {
  if (msg.type === "run") {
    const quickjs = await instance;
    served += 1;
    const id = msg.id;
    const run = new EngineRun(quickjs.module, msg, {
      stop,
      strip,
      postCall: (call, server, tool, args) => post({ type: "call", id, call, server, tool, args }),
      finish: (outcome) => {
        if (current?.id === id) current = undefined;
        if (!run.reusable || served >= RENEW_AFTER || quickjs.memoryBytes() > RENEW_ABOVE_BYTES) {
          instance = instantiate();
          served = 0;
        }
        post({ type: "done", id, outcome });
      },
    });
    current = { id, run }; // before start(): a script that ends at once finishes inside it
    run.start();
    return;
  }
  if (current?.id !== msg.id) return; // an answer or stop for a run that already ended
  if (msg.type === "answer") current.run.answer(msg);
  else current.run.stop();
}

await instance;
post({ type: "ready" });
