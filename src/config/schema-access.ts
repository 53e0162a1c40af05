/**
 * Config schema, the access part: profiles (what each caller sees), code mode's limits, callers
 * and auth. The rest of the config document is in schema.ts.
 */
import { z } from "zod";

/** `tools` of a profile: `server.tool` refs with `*` wildcards; deny wins over allow. */
export const profileToolsSchema = z.strictObject({
  allow: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Refs with `*` wildcards (`"github.*"`); no `allow` means every one of the profile\'s servers.',
    ),
  deny: z
    .array(z.string().min(1))
    .optional()
    .describe('Refs with `*` wildcards (`"*.delete_*"`); deny wins over allow.'),
});

/** What one profile may see and call. */
export const profileSchema = z.strictObject(
  {
    /** Server names, or patterns with `*` (`["*"]` is every server). */
    servers: z
      .array(z.string().min(1))
      .describe('Names from `mcpServers`, or patterns with `*` (`["*"]` is every server).'),
    tools: profileToolsSchema
      .optional()
      .describe("`server.tool` refs the profile may see and call; deny wins over allow."),
    /** `server.prompt` refs with `*` wildcards; deny wins over allow. */
    prompts: profileToolsSchema
      .optional()
      .describe(
        "`server.prompt` refs, as `tools` does for tools; a hidden prompt is answered like a missing one.",
      ),
    /** "direct": every app tool (MCP Apps) of the profile's servers is also listed as server__tool. */
    apps: z
      .enum(["direct"])
      .optional()
      .describe(
        "`direct`: tools of the profile's servers that declare an MCP Apps UI are also listed in `tools/list` as `server__tool` (as the server key `apps` does for one server).",
      ),
    /** Hide every tool whose annotations do not say `readOnlyHint: true`. */
    readOnly: z
      .boolean()
      .optional()
      .describe("`true` hides every tool whose annotations do not say `readOnlyHint: true`."),
    /** HTTP callers' roots reach upstreams as given, not held within each server's `roots`. */
    clientRoots: z
      .boolean()
      .optional()
      .describe(
        "`true`: the profile's HTTP callers give upstreams their own roots as they are, not held within each server's `roots`.",
      ),
    /** Tools a person must allow (through elicitation) before each call: `server.tool` patterns, "destructive". */
    confirm: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Tools a person must allow (through elicitation) before each call: `server.tool` patterns, or `destructive`.",
      ),
    /** `call({ script })`: true, false, or limits (codeModeLimitsSchema), checked in access.ts. */
    codeMode: z
      .unknown()
      .optional()
      .describe(
        "`call({ script })`: `false` turns it off; `true` or limits (each missing one takes the sandbox's default). Off in untrusted configs.",
      ),
  },
  { error: notAnObject('must be an object like { "servers": ["*"] }') },
);

const MIB = 1024 * 1024;
const bytes = (min: number, max: number) => z.number().int().min(min).max(max);

/**
 * A profile's code-mode limits. Bounds match what the sandbox accepts (src/sandbox/limits.ts;
 * a test checks both agree); maxima beyond it keep one script from claiming the machine.
 */
export const codeModeLimitsSchema = z.strictObject({
  /** Wall time of one script, inner calls included (ms). */
  timeMs: z
    .number()
    .int()
    .min(1)
    .max(24 * 3600 * 1000)
    .optional()
    .describe("Wall time of one script, inner calls included (ms)."),
  /** Memory of one script's QuickJS runtime (bytes). */
  memoryBytes: bytes(MIB, 1024 * MIB)
    .optional()
    .describe("Memory of one script's QuickJS runtime (bytes)."),
  /** QuickJS stack (bytes). */
  stackBytes: bytes(64 * 1024, 4 * MIB)
    .optional()
    .describe("QuickJS stack (bytes)."),
  /** Inner calls one script may make. */
  calls: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .optional()
    .describe("Inner calls one script may make."),
  /** The returned value as JSON (bytes). */
  resultBytes: bytes(1, 64 * MIB)
    .optional()
    .describe("The returned value as JSON (bytes)."),
  /** Everything one script logs (bytes). */
  logBytes: bytes(0, 16 * MIB)
    .optional()
    .describe("Everything one script logs (bytes)."),
});

/** Profile name → profile; each profile is checked on its own (access.ts). */
export const profilesSchema = z.record(z.string(), z.unknown());

/** Caller → profile name. */
export const callersSchema = z.record(z.string(), z.string().min(1));

export const authSchema = z.strictObject(
  {
    /**
     * Bearer token (or `${VAR}`) → the caller it identifies. Values are checked by position in
     * access.ts: a zod issue would name the key, and a key may be a literal token.
     */
    tokens: z
      .record(z.string(), z.unknown(), {
        error: notAnObject(
          'must be an object of token → caller, e.g. { "${MCPX_TOKEN_CI}": "ci-bot" }',
        ),
      })
      .describe(
        "Bearer token (or `${VAR}`) → the caller it identifies; every HTTP request then needs `Authorization: Bearer <token>`.",
      ),
  },
  { error: notAnObject('must be an object like { "tokens": { "${MCPX_TOKEN}": "caller" } }') },
);

/** A zod error map: `message` when the value is not an object (other issues keep theirs). */
export function notAnObject(message: string) {
  return (issue: z.core.$ZodRawIssue) => (issue.code === "invalid_type" ? message : undefined);
}
