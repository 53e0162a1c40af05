/**
 * mcpx's own config file as one JSON Schema, made from the zod schema that validates it: what
 * editors check `mcpx.json` against through `"$schema"` (schema/mcpx.schema.json) and what
 * docs/config-reference.md is rendered from (`npm run docs:config`; a test fails when either
 * drifts). Loading checks server entries, profiles and auth one by one for better messages
 * (servers.ts, access.ts); here they are composed into the whole document. Never loaded at run
 * time.
 */
import { z } from "zod";
import {
  ALIASED_SERVER_KEYS,
  FOREIGN_SERVER_KEYS,
  authSchema,
  callersSchema,
  codeModeLimitsSchema,
  profileSchema,
  serverEntrySchema,
  serverKeysSchema,
  settingsSchema,
} from "./schema.js";
import { DEFAULTS } from "./types.js";

/** Where the schema is published in the package. */
export const SCHEMA_FILE = "schema/mcpx.schema.json";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema> };

/** Defaults the loader applies (types.ts DEFAULTS), by key path. */
const DEFAULT_OF: Readonly<Record<string, unknown>> = {
  discoveryTimeout: DEFAULTS.discoveryTimeoutMs,
  startupWait: DEFAULTS.startupWaitMs,
  callTimeout: DEFAULTS.callTimeoutMs,
  shutdownGrace: DEFAULTS.shutdownGraceMs,
  taskAfter: DEFAULTS.taskAfterMs,
  pageSize: DEFAULTS.pageSize,
  resultBudget: DEFAULTS.resultBudget,
  inheritEnv: false,
  "compression.results": "auto",
  "compression.schemas": "typescript",
  "health.interval": DEFAULTS.health.intervalMs,
  "health.timeout": DEFAULTS.health.timeoutMs,
  "health.failureThreshold": DEFAULTS.health.failureThreshold,
  "health.retryInitial": DEFAULTS.health.retryInitialMs,
  "health.retryMax": DEFAULTS.health.retryMaxMs,
  "log.maxBytes": DEFAULTS.log.maxBytes,
  "log.maxFiles": DEFAULTS.log.maxFiles,
  "mcpServers.*.maxSessions": DEFAULTS.maxSessions,
  "mcpServers.*.idleTimeout": DEFAULTS.idleTimeoutMs,
  "mcpServers.*.session": "client",
  "mcpServers.*.start": "eager",
  "mcpServers.*.disabled": false,
};

/** The transports a server key belongs to: "stdio", "http, sse" or "all". */
export function serverKeyTransport(key: string): string {
  const [stdio, remote] = serverEntrySchema.options;
  const inStdio = key in stdio.shape;
  const inRemote = key in remote.shape;
  return inStdio && inRemote ? "all" : inStdio ? "stdio" : inRemote ? "http, sse" : "all";
}

/** The whole config document as zod, each part as strict as loading is. */
function documentSchema() {
  const { description: codeModeHelp } = profileSchema.shape.codeMode;
  const profile = profileSchema.extend({
    codeMode: z
      .union([z.boolean(), codeModeLimitsSchema])
      .optional()
      .describe(codeModeHelp ?? ""),
  });
  const foreign = Object.fromEntries(
    Object.entries(FOREIGN_SERVER_KEYS).map(([key, client]) => [
      key,
      z.unknown().optional().describe(`${client}'s key: accepted and ignored with a warning.`),
    ]),
  );
  const aliases = Object.fromEntries(
    Object.entries(ALIASED_SERVER_KEYS).map(([key, [, which]]) => [
      key,
      z
        .array(z.string().min(1))
        .optional()
        .describe(`Another spelling of \`tools.${which}\` (Gemini's).`),
    ]),
  );
  const server = serverKeysSchema.extend({ ...aliases, ...foreign });
  const s = settingsSchema.shape;
  return settingsSchema.extend({
    mcpServers: z
      .record(z.string().regex(/^[A-Za-z0-9_-]+$/), server)
      .describe(s.mcpServers.description ?? ""),
    profiles: z
      .record(z.string(), profile)
      .optional()
      .describe(s.profiles.description ?? ""),
    callers: callersSchema.optional().describe(s.callers.description ?? ""),
    auth: authSchema.optional().describe(s.auth.description ?? ""),
  });
}

/** Walks the generated schema's object properties, giving each its dotted key path. */
function eachProperty(
  schema: JsonSchema,
  visit: (at: string, prop: JsonSchema) => void,
  at = "",
): void {
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    const here = at === "" ? key : `${at}.${key}`;
    visit(here, prop);
    eachProperty(prop, visit, here);
    const values = prop.additionalProperties;
    if (typeof values === "object" && values !== null)
      eachProperty(values as JsonSchema, visit, `${here}.*`);
    for (const option of (prop.anyOf ?? []) as JsonSchema[]) eachProperty(option, visit, here);
  }
}

/** mcpx's config file as a JSON Schema (draft 2020-12), defaults included. */
export function configJsonSchema(): JsonSchema {
  const schema = z.toJSONSchema(documentSchema(), { io: "input" }) as JsonSchema;
  eachProperty(schema, (at, prop) => {
    if (at in DEFAULT_OF) prop.default = DEFAULT_OF[at];
  });
  // An entry needs a command (stdio) or a url (http, sse); `type` is inferred from which.
  const servers = schema.properties?.mcpServers?.additionalProperties as JsonSchema;
  servers.anyOf = [{ required: ["command"] }, { required: ["url"] }];
  return {
    $schema: schema.$schema,
    title: "mcpx config",
    description: "mcpx's own config file (mcpx.json): upstream servers and mcpx settings.",
    ...schema,
  };
}

/** Every key path of the config with its schema, in document order (for the reference). */
export function configKeys(): { at: string; schema: JsonSchema }[] {
  const out: { at: string; schema: JsonSchema }[] = [];
  eachProperty(configJsonSchema(), (at, schema) => out.push({ at, schema }));
  return out;
}
