/**
 * `call`'s `select`: a JMESPath expression applied to a structured result before it is encoded,
 * so a model asks for `items[].{id: id, title: title}` instead of forty fields per record.
 */
import { search, type JSONValue } from "@jmespath-community/jmespath";
import { errorMessage } from "../errors.js";
import { isRecord } from "../json.js";

/** Keys shown by {@link shapeOf} before it says how many more there are. */
const SHAPE_KEYS = 24;

/** Apply `expression` to `value`, or say why it cannot be (syntax, unknown function, types). */
export function applySelect(
  value: unknown,
  expression: string,
): { value: unknown } | { error: string } {
  try {
    return { value: search(value as JSONValue, expression) };
  } catch (err) {
    return { error: errorMessage(err) };
  }
}

/**
 * The top-level shape of a JSON value, for a model to write its next expression:
 * `{items: array(40), total_count: number}`, or `array(40) of {id: number, title: string}`.
 */
export function shapeOf(value: unknown): string {
  if (Array.isArray(value)) {
    const first: unknown = value[0];
    return isRecord(first) ? `array(${value.length}) of ${keys(first)}` : typeName(value);
  }
  return isRecord(value) ? keys(value) : typeName(value);
}

function keys(obj: Record<string, unknown>): string {
  const entries = Object.entries(obj);
  const shown = entries.slice(0, SHAPE_KEYS).map(([k, v]) => `${k}: ${typeName(v)}`);
  const more = entries.length > SHAPE_KEYS ? [`… ${entries.length - SHAPE_KEYS} more`] : [];
  return `{${[...shown, ...more].join(", ")}}`;
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return `array(${value.length})`;
  if (value === null) return "null";
  return typeof value;
}

/**
 * True when a selection found nothing: null, an empty list, or only nulls (a multiselect of
 * missing fields). Worth a hint with the shape, since a misspelled field is not an error.
 */
export function selectedNothing(value: unknown): boolean {
  if (value === null) return true;
  return Array.isArray(value) && value.every((v) => v === null);
}
