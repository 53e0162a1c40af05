/**
 * Codex `config.toml` (`~/.codex/config.toml`, or `$CODEX_HOME`; `.codex/config.toml` in a
 * trusted project): `[mcp_servers.<name>]` tables. Codex expands no variables in values; it
 * names environment variables in `env_vars`, `bearer_token_env_var` and `env_http_headers`,
 * which become mcpx `${VAR}` references.
 */
import path from "node:path";
import { escapeLiteral } from "../expand.js";
import { EntryBuilder, notAnObject, serverObjects, type KeyRule } from "./entries.js";
import type { ClientFormat, Converted, Scope } from "./types.js";
import { isRecord } from "../../json.js";

const ONE_TIMEOUT = "mcpx has one discoveryTimeout (ms) for every server";

const RULES: Readonly<Record<string, KeyRule>> = {
  cwd: { kind: "path" },
  env_vars: { kind: "custom" },
  bearer_token_env_var: { kind: "custom" },
  bearer_token: { kind: "custom" },
  http_headers: { kind: "custom" },
  env_http_headers: { kind: "custom" },
  startup_timeout_sec: { kind: "drop", why: ONE_TIMEOUT },
  startup_timeout_ms: { kind: "drop", why: ONE_TIMEOUT },
  tool_timeout_sec: { kind: "custom" },
  enabled: { kind: "custom" },
  enabled_tools: { kind: "custom" },
  disabled_tools: { kind: "custom" },
  required: { kind: "drop", why: "mcpx serves whichever servers are up" },
  scopes: { kind: "drop", why: "OAuth scopes; mcpx asks for what the server names (mcpx login)" },
  oauth_resource: { kind: "drop", why: "OAuth resource; mcpx signs in itself (mcpx login)" },
};

export const codex: ClientFormat = {
  id: "codex",
  label: "Codex config.toml",
  byName: (file) => path.extname(file) === ".toml",
  byShape: (doc) => isRecord(doc.mcp_servers),
  scope: (file, ctx): Scope =>
    path.basename(path.dirname(file)) === ".codex" &&
    path.dirname(path.dirname(file)) !== path.resolve(ctx.home)
      ? "project"
      : "user",
  convert(doc, ctx): Converted {
    const scope = codex.scope(ctx.file, ctx);
    const project = scope === "project" ? path.dirname(path.dirname(ctx.file)) : ctx.project;
    const entries = serverObjects(doc.mcp_servers, ["mcp_servers"]).map(({ name, at, raw }) => {
      if (!isRecord(raw)) return notAnObject(name, at, raw);
      const b = new EntryBuilder(name, at, "literal", { ...ctx, project }, project);
      b.apply(raw, RULES);
      envVars(raw, b);
      headers(raw, b);
      if (typeof raw.tool_timeout_sec === "number") {
        b.set("timeout", Math.round(raw.tool_timeout_sec * 1000));
      } else if (raw.tool_timeout_sec !== undefined) {
        b.problems.push(`${b.keyAt("tool_timeout_sec")}: must be a number of seconds.`);
      }
      if (raw.enabled === false) b.set("disabled", true);
      b.setToolFilter(raw.enabled_tools, raw.disabled_tools);
      return b.done();
    });
    return { format: "codex", scope, entries, hints: {}, notes: [] };
  },
};

/** `env_vars`: names Codex passes through from its environment. */
function envVars(raw: Record<string, unknown>, b: EntryBuilder): void {
  if (raw.env_vars === undefined) return;
  if (!Array.isArray(raw.env_vars) || raw.env_vars.some((v) => typeof v !== "string")) {
    b.problems.push(`${b.keyAt("env_vars")}: must be an array of variable names.`);
    return;
  }
  const env = isRecord(b.server.env) ? { ...b.server.env } : {};
  // Codex passes an unset variable as nothing; an empty value is the nearest mcpx has.
  for (const name of raw.env_vars as string[]) env[name] ??= `\${${name}:-}`;
  b.set("env", env);
}

/** `http_headers` (literal), `env_http_headers` (from the environment), `bearer_token_env_var`. */
function headers(raw: Record<string, unknown>, b: EntryBuilder): void {
  const out: Record<string, unknown> = {};
  if (isRecord(raw.http_headers)) {
    for (const [k, v] of Object.entries(raw.http_headers)) {
      out[k] = typeof v === "string" ? escapeLiteral(v) : v;
    }
  }
  if (isRecord(raw.env_http_headers)) {
    for (const [k, v] of Object.entries(raw.env_http_headers)) out[k] = `\${${String(v)}}`;
  }
  if (typeof raw.bearer_token_env_var === "string") {
    out.Authorization = `Bearer \${${raw.bearer_token_env_var}}`;
  } else if (typeof raw.bearer_token === "string") {
    out.Authorization = `Bearer ${escapeLiteral(raw.bearer_token)}`;
  }
  if (Object.keys(out).length > 0) b.set("headers", out);
}
