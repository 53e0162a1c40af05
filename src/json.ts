/** JSON helpers shared by layers that may not import each other (registry, compression). */

/**
 * JSON with object keys sorted at every depth, so equal values print alike whatever their key
 * order: `{a, b}` and `{b, a}` hash alike. Undefined properties are left out, as JSON does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}
