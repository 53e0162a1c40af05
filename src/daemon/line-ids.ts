/**
 * What the shim reads of a line (Node built-ins only): its JSON, its id, and, for a line past the
 * bound dropped as it came, what its two ends show (the ids of a request and of a response,
 * written first or, as the SDK writes them, last).
 */
import { isRecord } from "../json.js";
import type { DroppedLine } from "./wire.js";

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `"jsonrpc":"2.0",` and `"id":…,` in either order, or either, or neither: a message's first keys. */
const LEAD = String.raw`^\{\s*(?:(?:"jsonrpc"\s*:\s*"2\.0"|"id"\s*:\s*${ID})\s*,\s*){0,2}`;
/** A request's first keys, in the orders clients write them: `jsonrpc`, `id`, then `method`. */
const REQUEST_HEAD = new RegExp(String.raw`${LEAD}"method"\s*:`);
/** A response's: `jsonrpc`, `id`, then `result` or `error`; or `result` first (the SDK's order). */
const RESPONSE_HEAD = new RegExp(String.raw`${LEAD}"(?:result|error)"\s*:`);
const ID_FIRST = new RegExp(String.raw`^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);
/** The SDK writes `{"method":…,"params":…,"jsonrpc":"2.0","id":…}`: the id closes the line. */
const ID_LAST = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

/**
 * The id of a request dropped as it came, from its two ends; none unless its head shows a
 * request (`"method"` among its first keys): a notification is never answered, and a response's
 * id, one of mcpx's own requests' (which may equal one of the client's), is read by
 * droppedResponseId.
 */
export function droppedRequestId(d: DroppedLine): string | number | undefined {
  return REQUEST_HEAD.test(d.head) ? droppedId(d) : undefined;
}

/** The id of a response dropped as it came (the client's answer to one of mcpx's requests). */
export function droppedResponseId(d: DroppedLine): string | number | undefined {
  return RESPONSE_HEAD.test(d.head) ? droppedId(d) : undefined;
}

function droppedId(d: DroppedLine): string | number | undefined {
  const m = ID_FIRST.exec(d.head) ?? ID_LAST.exec(d.tail);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return undefined;
  }
}

/** A JSON-RPC id: a string or an integer (what a client's SDK accepts back). */
export function isId(value: unknown): value is string | number {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** The JSON value of `line`, or undefined when it is no JSON at all. */
export function parseJson(line: string): { json: unknown } | undefined {
  try {
    return { json: JSON.parse(line) as unknown };
  } catch {
    return undefined;
  }
}

/** The JSON object `line` holds; undefined when it holds none (no JSON, an array, a scalar). */
export function parseObject(line: string): Record<string, unknown> | undefined {
  const json = parseJson(line)?.json;
  return isRecord(json) ? json : undefined;
}
