/**
 * JSON-RPC messages near the SDK schemas' edges (ids, keys, `_meta`), parsed from JSON as a
 * transport delivers them: well-formed ones of each kind, shaped ones with a member off, and
 * objects with any members at all. For tests that hold a fast path to what the SDK's schemas say.
 */
import fc from "fast-check";

const id = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.constantFrom(1.5, -0, 2 ** 53, Number.MAX_SAFE_INTEGER, null, true),
);
const meta = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant([]),
  fc.record(
    {
      progressToken: id,
      "io.modelcontextprotocol/related-task": fc.oneof(
        fc.record({ taskId: fc.string({ maxLength: 3 }) }),
        fc.record({ taskId: fc.string({ maxLength: 3 }), extra: fc.integer() }),
      ),
      "io.modelcontextprotocol/serverInfo": fc.oneof(
        fc.record({ name: fc.string({ maxLength: 3 }), version: fc.string({ maxLength: 3 }) }),
        fc.integer(),
      ),
      other: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
);
const params = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant("p"),
  fc.constant([1]),
  fc.record({ _meta: meta, name: fc.string({ maxLength: 3 }) }, { requiredKeys: [] }),
);
const error = fc.oneof(
  fc.record(
    {
      code: fc.oneof(fc.integer(), fc.constant(1.5)),
      message: fc.oneof(fc.string({ maxLength: 3 }), fc.integer()),
      data: fc.jsonValue({ maxDepth: 1 }),
      extra: fc.integer(),
    },
    { requiredKeys: [] },
  ),
  fc.constant(null),
);
const version = fc.constantFrom("2.0", "2.0", "2.0", "1.0", 2);
const method = fc.oneof(fc.constantFrom("tools/call", "notifications/cancelled"), fc.integer());
const result = fc.oneof(
  fc.record({ _meta: meta, content: fc.constant([]) }, { requiredKeys: [] }),
  fc.constant([]),
  fc.constant(null),
);
/** Each kind of message, its members near their edges, sometimes with a stranger among them. */
const shaped = fc.oneof(
  fc.record(
    { jsonrpc: version, id, method, params, extra: fc.integer() },
    {
      requiredKeys: ["jsonrpc", "id", "method"],
    },
  ),
  fc.record(
    { jsonrpc: version, method, params, extra: fc.integer() },
    {
      requiredKeys: ["jsonrpc", "method"],
    },
  ),
  fc.record(
    { jsonrpc: version, id, result, extra: fc.integer() },
    {
      requiredKeys: ["jsonrpc", "id", "result"],
    },
  ),
  fc.record(
    { jsonrpc: version, id, error, extra: fc.integer() },
    {
      requiredKeys: ["jsonrpc", "error"],
    },
  ),
);
/** Objects whose keys are drawn from every JSON-RPC member (and strangers), values near edges. */
const anyKeys = fc.record(
  { jsonrpc: version, id, method, params, result, error, extra: fc.integer() },
  { requiredKeys: [] },
);
/** Well-formed messages: the fast path's share. */
const okId = fc.oneof(fc.string({ maxLength: 4 }), fc.integer());
const okMeta = fc.record(
  { progressToken: okId, other: fc.jsonValue({ maxDepth: 1 }) },
  { requiredKeys: [] },
);
const okParams = fc.record(
  { _meta: okMeta, name: fc.string({ maxLength: 3 }) },
  { requiredKeys: [] },
);
const wellFormed = fc.oneof(
  fc.record(
    { jsonrpc: fc.constant("2.0"), id: okId, method: fc.string(), params: okParams },
    {
      requiredKeys: ["jsonrpc", "id", "method"],
    },
  ),
  fc.record(
    { jsonrpc: fc.constant("2.0"), method: fc.string(), params: okParams },
    {
      requiredKeys: ["jsonrpc", "method"],
    },
  ),
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: okId,
    result: fc.record({ _meta: okMeta, content: fc.constant([]) }, { requiredKeys: [] }),
  }),
  // A result naming its server: the SDK checks that name (and drops one it cannot read).
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: okId,
    result: fc.record({
      _meta: fc.record({
        "io.modelcontextprotocol/serverInfo": fc.oneof(
          fc.record({ name: fc.string({ maxLength: 3 }), version: fc.string({ maxLength: 3 }) }),
          fc.record({ name: fc.integer() }),
        ),
      }),
    }),
  }),
);
/** A key JSON.parse makes an own property of, which the SDK's copy drops. */
const withProto = (json: string): string =>
  json.replace(
    /"(params|result|_meta)":\{(\}?)/g,
    (_, key: string, empty: string) => `"${key}":{"__proto__":{"x":1}${empty ? "}" : ","}`,
  );
export const message = fc
  .tuple(fc.oneof(wellFormed, shaped, anyKeys), fc.boolean())
  .map(([m, proto]) => {
    const json = JSON.stringify(m);
    return JSON.parse(proto ? withProto(json) : json) as unknown;
  });
