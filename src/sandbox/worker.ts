/**
 * Entry of an engine worker thread: runs one script at a time, each in a fresh QuickJS
 * WebAssembly instance (its own linear memory: nothing of one script survives into the next).
 * The next instance is made while the current script runs, so a script does not wait for it.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type CustomizeVariantOptions,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { EngineRun } from "./engine.js";
import type { FromWorker, ToWorker, WorkerInit } from "./protocol.js";
import { createStripper } from "./source.js";

const port = parentPort;
if (!port) throw new Error("src/sandbox/worker.ts runs only as a worker thread (see pool.ts).");
const { stop } = workerData as WorkerInit;
const post = (msg: FromWorker) => port.postMessage(msg);

/** The QuickJS build: the original (bellard) engine, synchronous (not asyncify), release. */
const VARIANT = "@jitl/quickjs-wasmfile-release-sync";

type CompiledWasm = NonNullable<Exclude<CustomizeVariantOptions["wasmModule"], () => unknown>>;
/** Node's WebAssembly global; the project's TypeScript libs (ES2023, no DOM) do not declare it. */
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(b: Buffer): Promise<CompiledWasm> } }
).WebAssembly;

/** Compiles QuickJS once per worker; each instance of it then costs ~2 ms, not ~10. */
async function loadEngine(): Promise<() => Promise<QuickJSWASMModule>> {
  const require = createRequire(import.meta.url);
  // The variant's type declarations describe its CommonJS build, so load that one.
  const variant = (require(VARIANT) as { default: QuickJSSyncVariant }).default;
  const wasmModule = await wasm.compile(await readFile(require.resolve(`${VARIANT}/wasm`)));
  const compiled = newVariant(variant, { wasmModule });
  return () => newQuickJSWASMModuleFromVariant(compiled);
}

const instantiate = await loadEngine();
const strip = createStripper();
let next = instantiate();
let current: { id: number; run: EngineRun } | undefined;

/** Messages are handled one after another: a run starts only once its instance is ready. */
let queue: Promise<void> = Promise.resolve();
port.on("message", (msg: ToWorker) => {
  queue = queue.then(() => handle(msg));
});

async function handle(msg: ToWorker): Promise<void> {
  if (msg.type === "run") {
    const module = await next;
    next = instantiate();
    const id = msg.id;
    const run = new EngineRun(module, msg, {
      stop,
      strip,
      postCall: (call, server, tool, args) => post({ type: "call", id, call, server, tool, args }),
      finish: (outcome) => {
        if (current?.id === id) current = undefined;
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

await next;
post({ type: "ready" });
