import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { LRUCache } from "lru-cache";
import { defaultsOptional } from "../compression/schema-defaults.js";
import { suggestName } from "../config/suggest.js";
import type { JsonSchema } from "../types.js";
import { isRecord } from "../json.js";

/**
 * ajv and ajv-formats (CommonJS), required when the first validator is built rather than
 * imported with this module: a proxy that has not validated a call yet never loads them.
 */
function loadAjv() {
  const require = createRequire(import.meta.url);
  return {
    Ajv: (require("ajv") as { Ajv: typeof Ajv }).Ajv,
    Ajv2020: (require("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 }).Ajv2020,
    addFormats: require("ajv-formats") as (ajv: Ajv | Ajv2020) => void,
  };
}

export type Validation = { ok: true } | { ok: false; problems: string[] };

/**
 * Distinct schemas kept compiled. A catalog rarely has more than a few hundred tools; past this
 * the least recently used validator is dropped (and recompiled if its schema comes back).
 */
export const DEFAULT_MAX_VALIDATORS = 1000;

export interface ArgumentValidatorOptions {
  /** Distinct schemas (by content) kept compiled; default DEFAULT_MAX_VALIDATORS. */
  maxValidators?: number;
}

/** One compiled schema: the validator, and what ajv caches it under (to remove it later). */
interface Compiled {
  fn: ValidateFunction | null;
  ajv: Ajv | Ajv2020;
  /** The exact object handed to ajv.compile: ajv's own cache is keyed by it. */
  schema: JsonSchema;
}

/**
 * Validates call arguments against upstream input schemas. A schema is compiled once per
 * content, not per object: every catalog refresh (list_changed, reload, reconnect) brings new
 * schema objects with the same content, and they share one validator. ajv keeps every schema
 * it compiled in a cache of its own, so the bound must hold there too: a validator dropped from
 * the LRU is removed from ajv as well.
 * A schema ajv cannot compile is not our business to reject: the upstream validates it. Nor is
 * a property the schema requires but gives a default: servers fill it in (defaultsOptional).
 */
export class ArgumentValidator {
  // verbose: errors carry the schema they failed, so an unknown property can be matched
  // against the properties that schema declares.
  private readonly draft7: Ajv;
  private readonly draft2020: Ajv2020;
  /** Schema object → its validator: skips serializing a schema already seen. */
  private readonly byObject = new WeakMap<JsonSchema, Compiled>();
  /** Schema content → its validator, bounded. */
  private readonly byContent: LRUCache<string, Compiled>;

  constructor(options: ArgumentValidatorOptions = {}) {
    const { Ajv, Ajv2020, addFormats } = loadAjv();
    // verbose: errors carry the schema they failed, so an unknown property can be matched
    // against the properties that schema declares.
    const settings = { allErrors: true, strict: false, validateFormats: true, verbose: true };
    this.draft7 = new Ajv(settings);
    this.draft2020 = new Ajv2020(settings);
    addFormats(this.draft7);
    addFormats(this.draft2020);
    this.byContent = new LRUCache({
      max: options.maxValidators ?? DEFAULT_MAX_VALIDATORS,
      dispose: (entry) => {
        entry.ajv.removeSchema(entry.schema);
      },
    });
  }

  validate(schema: JsonSchema, args: unknown): Validation {
    const fn = this.compiled(schema).fn;
    if (!fn || fn(args)) return { ok: true };
    const errors = fn.errors ?? [];
    // Unknown properties first: a misspelled name is usually why a required one is "missing".
    const unknown = [
      ...errors.filter((e) => e.keyword === "additionalProperties").map(describeError),
      ...undeclared(schema, args, errors),
    ];
    const rest = errors.filter((e) => e.keyword !== "additionalProperties").map(describeError);
    return { ok: false, problems: [...unknown, ...rest] };
  }

  private compiled(schema: JsonSchema): Compiled {
    const seen = this.byObject.get(schema);
    if (seen) return seen;
    // $schema picks the draft; $id would clash between servers that reuse one. A required
    // property with a default is optional: the server fills it (the server's verdict wins).
    const { $schema, $id: _ignored, ...rest } = defaultsOptional(schema);
    const ajv =
      typeof $schema === "string" && /2019-09|2020-12/.test($schema) ? this.draft2020 : this.draft7;
    const key = `${ajv === this.draft2020 ? "2020" : "7"}:${JSON.stringify(rest)}`;
    let entry = this.byContent.get(key);
    if (!entry) {
      entry = { fn: compile(ajv, rest), ajv, schema: rest };
      this.byContent.set(key, entry);
    }
    this.byObject.set(schema, entry);
    return entry;
  }
}

function compile(ajv: Ajv | Ajv2020, schema: JsonSchema): ValidateFunction | null {
  try {
    return ajv.compile(schema);
  } catch {
    // Not compilable (unknown draft, broken $ref): skip local validation, upstream decides.
    // ajv cached the schema before it failed; drop it now, nothing will use it.
    ajv.removeSchema(schema);
    return null;
  }
}

function describeError(e: ErrorObject): string {
  const at = e.instancePath ? `"${dotted(e.instancePath)}"` : "arguments";
  switch (e.keyword) {
    case "required":
      return `missing required property "${(e.params as { missingProperty: string }).missingProperty}"${e.instancePath ? ` in ${at}` : ""}`;
    case "additionalProperties": {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      const prefix = e.instancePath ? `${dotted(e.instancePath)}.` : "";
      return notAParameter(prefix, name, declared(e.parentSchema));
    }
    case "enum":
      return `${at} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return `${at} ${e.message ?? "is invalid"}`;
  }
}

/** `"msg" is not a parameter; did you mean "message"?` */
function notAParameter(prefix: string, name: string, known: readonly string[]): string {
  const guess = suggestName(name, known);
  return `"${prefix}${name}" is not a parameter${guess ? `; did you mean "${prefix}${guess}"?` : "."}`;
}

function dotted(instancePath: string): string {
  return instancePath.slice(1).replace(/\//g, ".");
}

/** The property names a schema node declares. */
function declared(schema: unknown): string[] {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
}

/**
 * Top-level arguments the schema does not declare, when it lets them through (no
 * `additionalProperties: false`): reported only alongside a real failure, since the schema allows
 * them, but then they are the likely cause (`msg` sent, `message` required).
 */
function undeclared(schema: JsonSchema, args: unknown, errors: ErrorObject[]): string[] {
  const known = declared(schema);
  if (known.length === 0 || schema.patternProperties !== undefined) return [];
  if (!isRecord(args)) return [];
  const reported = new Set(
    errors
      .filter((e) => e.keyword === "additionalProperties" && e.instancePath === "")
      .map((e) => (e.params as { additionalProperty: string }).additionalProperty),
  );
  return Object.keys(args)
    .filter((k) => !known.includes(k) && !reported.has(k))
    .map((k) => notAParameter("", k, known));
}
