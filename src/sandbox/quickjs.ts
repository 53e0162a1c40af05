/**
 * Loading the engine: QuickJS compiled to WebAssembly, the original (bellard) engine in its
 * synchronous release build. Synchronous, not asyncify: inner calls are promises the host
 * resolves later, so the script never has to suspend inside WebAssembly, may run several calls
 * at once (`Promise.all`), and the build is half the size and faster.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type CustomizeVariantOptions,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";

const VARIANT = "@jitl/quickjs-wasmfile-release-sync";
/** The build's own memory bounds, in 64 KiB pages: 16 MiB to start, 2 GiB at most. */
const PAGES = { initial: 256, maximum: 32768 };

type Loaded<K extends keyof CustomizeVariantOptions> = NonNullable<
  Exclude<CustomizeVariantOptions[K], () => unknown>
>;
type WasmMemory = Loaded<"wasmMemory"> & { buffer: { byteLength: number } };

/** Node's WebAssembly global; the project's TypeScript libs (ES2023, no DOM) do not declare it. */
interface WebAssemblyApi {
  compile(bytes: Buffer): Promise<Loaded<"wasmModule">>;
  Memory: new (limits: { initial: number; maximum: number }) => WasmMemory;
}

/** One QuickJS instance: its own linear memory, which a worker watches to know when to renew. */
export interface QuickJSInstance {
  module: QuickJSWASMModule;
  /** Bytes of linear memory the instance holds (it grows, never shrinks). */
  memoryBytes(): number;
}

/** Compiles QuickJS once; the function returned makes a fresh instance of it. */
export async function loadQuickJS(): Promise<() => Promise<QuickJSInstance>> {
  const require = createRequire(import.meta.url);
  // The variant's type declarations describe its CommonJS build, so load that one.
  const variant = (require(VARIANT) as { default: QuickJSSyncVariant }).default;
  const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
  const wasmModule = await wasm.compile(await readFile(require.resolve(`${VARIANT}/wasm`)));
  return async () => {
    const memory = new wasm.Memory(PAGES);
    const module = await newQuickJSWASMModuleFromVariant(
      newVariant(variant, { wasmModule, wasmMemory: memory }),
    );
    return { module, memoryBytes: () => memory.buffer.byteLength };
  };
}
