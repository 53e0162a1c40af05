import { createHash } from "node:crypto";

import type { compile as Compile, Options as CompileOptions } from "json-schema-to-typescript";

import { canonicalJson, isRecord } from "../json.js";
import type { JsonSchema } from "../types.js";
import { prepareSchema } from "./schema-prepare.js";
import { compactDeclaration } from "./schema-text.js";
import { lazyImport } from "../install.js";

/**
 * The library is loaded on the first compile, not at startup: it costs ~23 MB of memory and
 * startup time, and a session that never describes a tool never needs it. (Node's module cache
 * would hold it anyway; this is that cache, not proxy state.)
 */
let library: Promise<typeof Compile> | undefined;
type CommonJsNamespace<F> = { compile?: F; default: { compile: F } };
function loadCompiler(): Promise<typeof Compile> {
  // A CommonJS package: bundled (scripts/build-bin.mjs), its lazily imported chunk exports only
  // `default` (its module.exports); vitest's loader gives the named exports only.
  library ??= lazyImport(() => import("json-schema-to-typescript")).then(
    (m: CommonJsNamespace<typeof Compile>) => m.compile ?? m.default.compile,
  );
  return library;
}

/** "typescript" compiles to a declaration (falling back to JSON when that is not smaller); "json" always emits compact JSON. */
export type SchemaMode = "typescript" | "json";

/** A tool's input schema in the text form shown to the model. */
export interface CompiledSchema {
  format: "typescript" | "json";
  text: string;
  /** The declaration of the schema itself in a TypeScript text (`interface <root> {`). */
  root?: string;
}

/** Options of {@link SchemaCompiler}. */
export interface SchemaCompilerOptions {
  mode?: SchemaMode;
  /** Budget for one compilation; past it the compact JSON is served. Default 2000 ms. */
  timeoutMs?: number;
  /** Cached entries kept; the oldest is evicted first. Default 2000. */
  maxEntries?: number;
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_MAX_ENTRIES = 2000;
/** Past this size a schema is served as JSON: the library's cost grows faster than the savings. */
const MAX_SCHEMA_CHARS = 200_000;

/**
 * Library options chosen for small, fast, offline output: no prettier pass, no banner, no tuple
 * explosion from maxItems, no `[k: string]: unknown` on every object, and a $ref parser with
 * every external resolver disabled so an upstream schema can never make us read a file or URL.
 */
const LIB_OPTIONS: Readonly<Partial<CompileOptions>> = Object.freeze({
  bannerComment: "",
  format: false,
  ignoreMinAndMaxItems: true,
  maxItems: -1,
  additionalProperties: false,
  declareExternallyReferenced: true,
  enableConstEnums: false,
  inferStringEnumKeysFromValues: false,
  strictIndexSignatures: false,
  unreachableDefinitions: false,
  unknownAny: true,
  $refOptions: { resolve: { external: false, file: false, http: false } },
});

/**
 * Compiles tool schemas once, cached by a hash of (schema, typeName); never throws.
 *
 * The TypeScript form is a declaration such as `interface CreateIssue {owner: string ...}` with
 * every description, default and constraint kept as a one-line JSDoc comment.
 */
export class SchemaCompiler {
  readonly #mode: SchemaMode;
  readonly #timeoutMs: number;
  readonly #maxEntries: number;
  readonly #cache = new Map<string, Promise<CompiledSchema>>();

  constructor(options: SchemaCompilerOptions = {}) {
    this.#mode = options.mode ?? "typescript";
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /**
   * Compile `schema` to text; concurrent calls with the same input share one compilation. A
   * compilation that failed or ran out of time stays cached as JSON: retrying would fail again.
   */
  compile(schema: JsonSchema, typeName: string): Promise<CompiledSchema> {
    let json: string;
    let key: string;
    try {
      json = JSON.stringify(schema);
      key = createHash("sha1").update(canonicalJson({ schema, typeName })).digest("hex");
    } catch {
      // Cycles and BigInts cannot come over the wire; an empty schema is the honest rendering.
      return Promise.resolve({ format: "json", text: "{}" });
    }
    if (this.#mode === "json") return Promise.resolve({ format: "json", text: json });

    const cached = this.#cache.get(key);
    if (cached) return cached;
    const pending = this.#compileTypescript(schema, typeName, json);
    if (this.#cache.size >= this.#maxEntries) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(key, pending);
    return pending;
  }

  async #compileTypescript(
    schema: JsonSchema,
    typeName: string,
    json: string,
  ): Promise<CompiledSchema> {
    const fallback: CompiledSchema = { format: "json", text: json };
    if (json.length > MAX_SCHEMA_CHARS || hasExternalRef(schema)) return fallback;
    let timer: NodeJS.Timeout | undefined;
    try {
      // The library mutates its input (normalizer, $ref dereferencing): give it a private copy.
      const compile = await loadCompiler();
      const work = compile(prepareSchema(structuredClone(schema)), typeName, LIB_OPTIONS);
      // The library is mostly synchronous and cannot be cancelled; the budget only bounds how long a caller waits.
      const budget = new Promise<undefined>((resolve) => {
        timer = setTimeout(resolve, this.#timeoutMs, undefined);
        timer.unref();
      });
      const raw = await Promise.race([work, budget]);
      if (raw === undefined) {
        // Late failures of the abandoned compilation have nowhere to go.
        void work.catch(() => undefined);
        return fallback;
      }
      const text = compactDeclaration(raw);
      return text.length > 0 && text.length < json.length
        ? { format: "typescript", text, root: typeName }
        : fallback;
    } catch {
      // A schema the library rejects is still a valid thing to show the model: serve it as JSON.
      return fallback;
    } finally {
      clearTimeout(timer);
    }
  }
}

function hasExternalRef(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasExternalRef);
  if (!isRecord(value)) return false;
  for (const [k, v] of Object.entries(value)) {
    if (k === "$ref" && typeof v === "string" && !v.startsWith("#")) return true;
    if (k !== "enum" && k !== "const" && k !== "default" && k !== "examples" && hasExternalRef(v))
      return true;
  }
  return false;
}
