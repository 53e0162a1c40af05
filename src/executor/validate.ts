import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { JsonSchema } from "../types.js";

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

export type Validation = { ok: true } | { ok: false; problems: string[] };

/**
 * Validates call arguments against upstream input schemas. Validators are compiled once per
 * schema object (a refreshed catalog brings new objects, so stale validators drop out).
 * A schema ajv cannot compile is not our business to reject: the upstream validates it.
 */
export class ArgumentValidator {
  private readonly draft7 = new Ajv({ allErrors: true, strict: false, validateFormats: true });
  private readonly draft2020 = new Ajv2020({
    allErrors: true,
    strict: false,
    validateFormats: true,
  });
  private readonly cache = new WeakMap<JsonSchema, ValidateFunction | null>();

  constructor() {
    addFormats(this.draft7);
    addFormats(this.draft2020);
  }

  validate(schema: JsonSchema, args: unknown): Validation {
    const fn = this.compiled(schema);
    if (!fn || fn(args)) return { ok: true };
    return { ok: false, problems: (fn.errors ?? []).map(describeError) };
  }

  private compiled(schema: JsonSchema): ValidateFunction | null {
    const hit = this.cache.get(schema);
    if (hit !== undefined) return hit;
    let fn: ValidateFunction | null;
    try {
      // $schema picks the draft; $id would clash between servers that reuse one.
      const { $schema, $id: _ignored, ...rest } = schema;
      const ajv =
        typeof $schema === "string" && /2019-09|2020-12/.test($schema)
          ? this.draft2020
          : this.draft7;
      fn = ajv.compile(rest);
    } catch {
      // Not compilable (unknown draft, broken $ref): skip local validation, upstream decides.
      fn = null;
    }
    this.cache.set(schema, fn);
    return fn;
  }
}

function describeError(e: ErrorObject): string {
  const at = e.instancePath ? `"${e.instancePath.slice(1).replace(/\//g, ".")}"` : "arguments";
  switch (e.keyword) {
    case "required":
      return `missing required property "${(e.params as { missingProperty: string }).missingProperty}"${e.instancePath ? ` in ${at}` : ""}`;
    case "additionalProperties":
      return `unknown property "${(e.params as { additionalProperty: string }).additionalProperty}"${e.instancePath ? ` in ${at}` : ""}`;
    case "enum":
      return `${at} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return `${at} ${e.message ?? "is invalid"}`;
  }
}
