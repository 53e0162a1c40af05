/**
 * Gemini CLI `settings.json` (`~/.gemini/settings.json`, `.gemini/settings.json`; JSONC):
 * `mcpServers` with `command` (stdio), `httpUrl` (streamable HTTP) or `url` (SSE); `$VAR` and
 * `${VAR}` in values; `includeTools` / `excludeTools` per server; `mcp.allowed` / `mcp.excluded`
 * (and the older `allowMCPServers` / `excludeMCPServers`) over server names.
 */
import path from "node:path";
import { EntryBuilder, notAnObject, serverObjects, type KeyRule } from "./entries.js";
import type { ClientFormat, Converted, Scope } from "./types.js";
import { isRecord } from "../../json.js";

const RULES: Readonly<Record<string, KeyRule>> = {
  cwd: { kind: "path" },
  url: { kind: "custom" },
  httpUrl: { kind: "custom" },
  includeTools: { kind: "custom" },
  excludeTools: { kind: "custom" },
  trust: { kind: "drop", why: "Gemini's confirmation bypass; mcpx asks for no confirmation" },
  extensionName: { kind: "drop", why: "the Gemini extension that added the server" },
  oauth: { kind: "custom" },
  authProviderType: { kind: "custom" },
  targetAudience: { kind: "unsupported", why: "mcpx does not sign in with Google credentials" },
  targetServiceAccount: {
    kind: "unsupported",
    why: "mcpx does not sign in with Google credentials",
  },
};

/** Gemini's settings keys that list which servers may connect. */
function serverLists(doc: Record<string, unknown>): { allowed?: string[]; excluded?: string[] } {
  const mcp = isRecord(doc.mcp) ? doc.mcp : {};
  const list = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
  const allowed = list(mcp.allowed) ?? list(doc.allowMCPServers);
  const excluded = list(mcp.excluded) ?? list(doc.excludeMCPServers);
  return { ...(allowed && { allowed }), ...(excluded && { excluded }) };
}

/** Keys of Gemini's settings.json that no other client writes. */
const GEMINI_TOP_KEYS = [
  "selectedAuthType",
  "theme",
  "general",
  "ui",
  "model",
  "context",
  "security",
  "advanced",
  "experimental",
  "telemetry",
  "mcp",
  "allowMCPServers",
  "excludeMCPServers",
];

export const gemini: ClientFormat = {
  id: "gemini",
  label: "Gemini CLI settings.json",
  byName: (file) =>
    path.basename(file) === "settings.json" && path.basename(path.dirname(file)) === ".gemini",
  byShape: (doc) =>
    GEMINI_TOP_KEYS.some((k) => k in doc) ||
    (isRecord(doc.mcpServers) &&
      Object.values(doc.mcpServers).some((s) => isRecord(s) && "httpUrl" in s)),
  scope: (file, ctx): Scope =>
    path.dirname(path.dirname(file)) === path.resolve(ctx.home) ? "user" : "project",
  convert(doc, ctx): Converted {
    const scope = gemini.scope(ctx.file, ctx);
    const project = scope === "project" ? path.dirname(path.dirname(ctx.file)) : ctx.project;
    const { allowed, excluded } = serverLists(doc);
    const notes: string[] = [];
    const entries = serverObjects(doc.mcpServers, ["mcpServers"]).map(({ name, at, raw }) => {
      if (!isRecord(raw)) return notAnObject(name, at, raw);
      const b = new EntryBuilder(name, at, "gemini", { ...ctx, project }, project);
      b.apply(raw, RULES);
      transport(raw, b);
      auth(raw, b);
      b.setToolFilter(raw.includeTools, raw.excludeTools);
      // Gemini does not connect a server its settings exclude: neither does mcpx.
      if (excluded?.includes(name) || (allowed && !allowed.includes(name))) {
        b.set("disabled", true);
        notes.push(`${name}: disabled, as Gemini's mcp.allowed / mcp.excluded lists say.`);
      }
      return b.done();
    });
    return { format: "gemini", scope, entries, hints: {}, notes };
  },
};

/** `httpUrl` is streamable HTTP and `url` is SSE in Gemini; in mcpx both are `url` with a type. */
function transport(raw: Record<string, unknown>, b: EntryBuilder): void {
  if (raw.httpUrl !== undefined && raw.url !== undefined) {
    b.problems.push(`${b.keyAt("httpUrl")}: has both "httpUrl" and "url". Keep one.`);
    return;
  }
  if (raw.httpUrl !== undefined) {
    b.set("type", "http");
    b.set("url", b.translate(raw.httpUrl, "httpUrl"));
  } else if (raw.url !== undefined) {
    b.set("type", raw.type ?? "sse");
    b.set("url", b.translate(raw.url, "url"));
  }
}

/** OAuth discovery mcpx does itself (mcpx login); other sign-ins keep the server with Gemini. */
function auth(raw: Record<string, unknown>, b: EntryBuilder): void {
  if (isRecord(raw.oauth) && raw.oauth.enabled === true && raw.oauth.clientId !== undefined) {
    b.refuse("oauth.clientId: mcpx does not sign in with a pre-registered OAuth client");
  } else if (isRecord(raw.oauth) && raw.oauth.enabled === true) {
    b.drop(
      "oauth",
      "Gemini's own OAuth client; mcpx signs in itself (mcpx login <config> <server>)",
    );
  } else if (raw.oauth !== undefined) {
    b.drop("oauth", "not enabled");
  }
  const provider = raw.authProviderType;
  if (provider !== undefined && provider !== "dynamic_discovery") {
    b.refuse(`authProviderType ${JSON.stringify(provider)}: mcpx does not sign in with it`);
  } else if (provider !== undefined) {
    b.drop(
      "authProviderType",
      "OAuth discovery; mcpx signs in itself (mcpx login <config> <server>)",
    );
  }
}
