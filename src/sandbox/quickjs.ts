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

/**
 * Node's WebAssembly global, typed as far as this file uses it: the project's TypeScript libs
 * (ES2023, no DOM) do not declare it, so quickjs-emscripten's options that name its types do not
 * resolve either, hence the cast where they meet.
 */
interface WebAssemblyApi {
  compile(bytes: Buffer): Promise<object>;
  Memory: new (limits: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer };
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
    const options = { wasmModule, wasmMemory: memory } as unknown as CustomizeVariantOptions;
    const module = await newQuickJSWASMModuleFromVariant(newVariant(variant, options));
    return { module, memoryBytes: () => memory.buffer.byteLength };
  };
}
