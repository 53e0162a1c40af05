/** JSON helpers shared by layers that may not import each other (registry, compression). */

/** True for a JSON object: an object that is neither null nor an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * JSON with object keys sorted at every depth, so equal values print alike whatever their key
 * order: `{a, b}` and `{b, a}` hash alike. Undefined properties are left out, as JSON does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!isRecord(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = v[k];
    return sorted;
  });
}

/**
 * True when `value` nests objects and arrays more than `max` levels deep (`{}` and `[]` are one
 * level, a scalar none). Walks with its own stack, so a hostile depth cannot overflow the call
 * stack the way a recursive walk (or JSON.stringify) would.
 */
export function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v !== "object" || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * {@link nestsDeeper} on JSON text, before it is parsed: true when brackets outside strings nest
 * more than `max` deep. One pass over the bytes, no allocation, so a hostile body costs no more
 * than reading it (JSON.parse of millions of levels, then a walk, cost far more).
 */
export function textNestsDeeper(text: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next byte is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** What a JSON-RPC line must be, said when it is not (to a client, on stderr or in the log). */
export const JSON_RPC_SHAPES =
  'A request has "jsonrpc": "2.0", an "id" (a string or an integer) and a string "method"; a notification the same without "id"; a response an "id" and a "result" or an "error".';

/**
 * Whether a JSON object could be a JSON-RPC message (`jsonrpc` "2.0" and a method, a result with
 * an id, or an error, whose id the SDK's schema leaves optional): a cheap first look, looser than
 * the schema, never refusing what it accepts.
 */
export function looksLikeJsonRpc(value: Record<string, unknown>): boolean {
  if (value.jsonrpc !== "2.0") return false;
  if (typeof value.method === "string" || "error" in value) return true;
  return value.id !== undefined && "result" in value;
}
