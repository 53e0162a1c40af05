/**
 * Trust pins: the first time mcpx sees a server's tools and prompts it records a hash of each
 * definition (tools: name, description, input and output schema, annotations; prompts: name,
 * description, arguments) in the pin file of that server's launch (trust-store.ts). Afterwards a
 * definition whose hash differs, a new one on a pinned server, and one whose text breaks a rule of
 * trust-rules.ts is *flagged*: under `"hold"` it is out of the catalog (views drop it; a call
 * answers what changed and how to approve it), under `"warn"` it stays and describe, /healthz, the
 * dashboard and the log say so. Removed definitions are noted. `"off"` pins nothing; suspicious
 * text is still noted.
 *
 * Flagged definitions are written to the pin file as pending, so `mcpx trust diff` shows them and
 * `mcpx trust approve` pins exactly what was shown, without starting the server.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../json.js";
import type { Logger } from "../logger.js";
import type { PromptDef, ToolDef } from "../types.js";
import { errorMessage } from "../errors.js";
import type { TrustMode } from "../config/load.js";
import { launchKey } from "./catalog-cache.js";
import { suspiciousText } from "./trust-rules.js";
import {
  emptyEntry,
  type PendingPin,
  type Pin,
  type PinEntry,
  type PinnedDef,
  type PinStore,
} from "./trust-store.js";
import type { ServerState, TrustFinding, TrustReport } from "./types.js";

type Kind = "tool" | "prompt";
const SECTION = { tool: "tools", prompt: "prompts" } as const;

/** The pinned fields of a tool. */
export function pinnedTool(t: ToolDef): PinnedDef {
  return {
    name: t.name,
    ...(t.description !== undefined && { description: t.description }),
    inputSchema: t.inputSchema,
    ...(t.outputSchema !== undefined && { outputSchema: t.outputSchema }),
    ...(t.annotations !== undefined && { annotations: t.annotations }),
  };
}

/** The pinned fields of a prompt. */
export function pinnedPrompt(p: PromptDef): PinnedDef {
  return {
    name: p.name,
    ...(p.description !== undefined && { description: p.description }),
    ...(p.arguments !== undefined && { arguments: p.arguments }),
  };
}

/**
 * The hash of a definition as the server serialized it (key order kept: `JSON.stringify` is
 * several times faster than a canonical form, and start-up pays for every definition). A server
 * that only reorders keys is not flagged: a mismatch is compared in canonical form first.
 */
export function hashDef(def: PinnedDef): string {
  return createHash("sha256").update(JSON.stringify(def)).digest("hex").slice(0, 32);
}

/** Whether two definitions are the same up to key order. */
function sameDef(a: PinnedDef | undefined, b: PinnedDef): boolean {
  return a !== undefined && canonicalJson(a) === canonicalJson(b);
}

/** Every string inside a definition (descriptions, schema texts, enum values), one per line. */
function textOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => textOf(v, out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      textOf(v, out);
    }
  }
  return out;
}

/** The top-level fields of two definitions that differ. */
function changedFields(before: PinnedDef | undefined, now: PinnedDef): string[] {
  if (!before) return ["definition"];
  const keys = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...keys].filter((k) => canonicalJson(before[k]) !== canonicalJson(now[k]));
}

/** Whether a finding keeps its definition out of a holding catalog (removed ones never do). */
export function flagged(f: TrustFinding): boolean {
  return f.change !== "removed" && (f.change !== undefined || (f.suspicious?.length ?? 0) > 0);
}

/** The stricter of two modes (a profile never loosens a server's). */
export function stricter(a: TrustMode, b: TrustMode | undefined): TrustMode {
  const rank = { off: 0, warn: 1, hold: 2 } as const;
  return b !== undefined && rank[b] > rank[a] ? b : a;
}

/** One line saying what a finding is, for describe, errors and the log. */
export function findingText(f: TrustFinding): string {
  const what =
    f.change === "changed"
      ? `changed since it was approved (${(f.fields ?? []).join(", ")})`
      : f.change === "new"
        ? "new since the server's definitions were approved"
        : f.change === "removed"
          ? "removed by the server since it was approved"
          : "";
  const why = f.suspicious?.length ? `suspicious text: ${f.suspicious.join("; ")}` : "";
  return [what, why].filter(Boolean).join("; ");
}

/** The command that approves one definition (or a whole server: `ref` = the server name). */
export function approveCommand(configFile: string, ref: string): string {
  return `mcpx trust approve ${JSON.stringify(configFile)} ${ref}`;
}

export interface TrustPinsOptions {
  store: PinStore;
  logger: Logger;
  /** The config file, for the commands the messages name. */
  configFile: string;
  /** Values that must never be written (env values, header values, tokens). */
  secrets: () => Iterable<string>;
}

/**
 * Checks each server's catalog against its pins and keeps the pin files up to date. One per
 * proxy; entries are read once per launch key and again when their file changes.
 */
export class TrustPins {
  private readonly entries = new Map<string, PinEntry>();
  /** What was already logged (key, kind, name, hash), so a finding is said once, not each refresh. */
  private readonly said = new Set<string>();
  /** launchKey per server config (a hash of the launch: computed once, not on every check). */
  private readonly keys = new WeakMap<ServerState["config"], string>();

  constructor(private readonly options: TrustPinsOptions) {}

  get configFile(): string {
    return this.options.configFile;
  }

  /** The pin files (read by `mcpx trust` and the dashboard's review). */
  get store(): PinStore {
    return this.options.store;
  }

  /**
   * Check `state`'s tools and prompts, set `state.trust`, write the pin file when something new
   * was pinned or the pending set changed. Returns whether `state.trust` changed.
   */
  check(state: ServerState): boolean {
    const before = canonicalJson(strip(state.trust));
    const mode = state.config.trust ?? "warn";
    const defs = [
      ...state.tools.map((t) => ({ kind: "tool" as const, def: t, pinned: pinnedTool(t) })),
      ...state.prompts.map((p) => ({ kind: "prompt" as const, def: p, pinned: pinnedPrompt(p) })),
    ];
    const findings: TrustFinding[] = [];
    if (mode === "off") {
      for (const d of defs) {
        const hits = suspiciousText(textOf(d.pinned).join("\n"));
        if (hits.length > 0)
          findings.push({
            kind: d.kind,
            name: d.def.name,
            suspicious: hits.map((h) => h.why),
            hash: hashDef(d.pinned),
            def: d.def,
          });
      }
    } else {
      findings.push(...this.compare(state, defs));
    }
    if (findings.length > 0) {
      state.trust = { findings, held: mode === "hold", config: this.options.configFile };
    } else delete state.trust;
    this.logFindings(state, mode);
    return canonicalJson(strip(state.trust)) !== before;
  }

  /** Forget the cached entry of `key` (its file changed): the next check reads it again. */
  reload(key: string): void {
    this.entries.delete(key);
  }

  private compare(
    state: ServerState,
    defs: { kind: Kind; def: ToolDef | PromptDef; pinned: PinnedDef }[],
  ): TrustFinding[] {
    const key = this.keyOf(state);
    let entry = this.entries.get(key);
    let firstSight = false;
    let dirty = false;
    if (!entry) {
      const read = this.options.store.load(key);
      if ("entry" in read) entry = read.entry;
      else {
        entry = emptyEntry(key, state.name);
        // No file: trust on first use. A corrupt one: rebuilt, and nothing in it is trusted.
        if ("missing" in read) firstSight = true;
        else {
          this.options.logger.warn(
            `${state.name}: pin file ${this.options.store.file(key)} is corrupt (${read.corrupt}); rebuilt: every tool and prompt of this server is treated as new until approved (mcpx trust diff / approve)`,
          );
        }
        dirty = true;
      }
      this.entries.set(key, entry);
    }
    const findings: TrustFinding[] = [];
    const pending: PinEntry["pending"] = { tools: {}, prompts: {} };
    const listed = { tool: new Set<string>(), prompt: new Set<string>() };
    /** Definitions to add to the definitions file (hash → definition). */
    const kept: Record<string, PinnedDef> = {};
    const keep = (hash: string, pinned: PinnedDef): Pin => {
      if (this.keepable(pinned)) kept[hash] = pinned;
      return { hash };
    };
    // The pinned definitions, read only when a hash differs (never on a start where all match).
    let stored: Record<string, PinnedDef> | undefined;
    const pinnedDef = (hash: string) => (stored ??= this.options.store.loadDefs(key))[hash];
    for (const { kind, def, pinned } of defs) {
      listed[kind].add(def.name);
      const hash = hashDef(pinned);
      const pin = entry.pinned[SECTION[kind]][def.name];
      if (pin?.hash === hash) continue;
      if (pin && sameDef(pinnedDef(pin.hash), pinned)) {
        // Only the key order changed: the pin takes the new hash, nothing to review.
        entry.pinned[SECTION[kind]][def.name] = keep(hash, pinned);
        dirty = true;
        continue;
      }
      const hits = suspiciousText(textOf(pinned).join("\n"));
      const finding: TrustFinding = { kind, name: def.name, hash, def };
      const waiting = entry.pending[SECTION[kind]][def.name];
      // Flagged at the server's first sight and still the same: suspicious, not new.
      const seenFirst =
        firstSight ||
        (waiting !== undefined &&
          "hash" in waiting &&
          waiting.hash === hash &&
          waiting.firstSight === true);
      if (pin) finding.change = "changed";
      else if (!seenFirst) finding.change = "new";
      if (finding.change === "changed")
        finding.fields = changedFields(pin && pinnedDef(pin.hash), pinned);
      if (hits.length > 0) finding.suspicious = hits.map((h) => h.why);
      if (!flagged(finding)) {
        entry.pinned[SECTION[kind]][def.name] = keep(hash, pinned);
        dirty = true;
        continue;
      }
      findings.push(finding);
      pending[SECTION[kind]][def.name] = {
        ...keep(hash, pinned),
        ...(seenFirst && !pin && { firstSight: true as const }),
      };
    }
    for (const kind of ["tool", "prompt"] as const) {
      for (const name of Object.keys(entry.pinned[SECTION[kind]])) {
        if (listed[kind].has(name)) continue;
        findings.push({ kind, name, change: "removed" });
        pending[SECTION[kind]][name] = { removed: true } satisfies PendingPin;
      }
    }
    if (dirty || canonicalJson(pending) !== canonicalJson(entry.pending)) {
      entry.pending = pending;
      entry.server = state.name;
      try {
        this.options.store.save(entry, kept);
      } catch (err) {
        this.options.logger.warn(`${state.name}: pin file not written: ${errorMessage(err)}`);
      }
    }
    return findings;
  }

  /** Whether a definition may be written to disk: not when it quotes a config secret. */
  private keepable(def: PinnedDef): boolean {
    const text = JSON.stringify(def);
    for (const secret of this.options.secrets()) {
      if (secret.length >= 4 && text.includes(JSON.stringify(secret).slice(1, -1))) return false;
    }
    return true;
  }

  private keyOf(state: ServerState): string {
    let key = this.keys.get(state.config);
    if (key === undefined) {
      key = launchKey(state.config);
      this.keys.set(state.config, key);
    }
    return key;
  }

  private logFindings(state: ServerState, mode: TrustMode): void {
    if (!state.trust) return;
    const key = this.keyOf(state);
    for (const f of state.trust?.findings ?? []) {
      const id = `${key}\0${f.kind}\0${f.name}\0${f.change ?? ""}\0${f.hash ?? ""}`;
      if (this.said.has(id)) continue;
      this.said.add(id);
      const ref = `${state.name}.${f.name}`;
      const outcome = !flagged(f)
        ? "noted"
        : mode === "hold"
          ? "held out of the catalog"
          : "served (trust: warn)";
      this.options.logger.warn(
        `${state.name}: ${f.kind} "${f.name}" ${findingText(f)}; ${outcome}. Review: mcpx trust diff ${JSON.stringify(this.options.configFile)} ${ref}; approve: ${approveCommand(this.options.configFile, ref)}`,
      );
    }
  }
}

/** A report without the live definitions, to compare two reports. */
function strip(report: TrustReport | undefined): unknown {
  return report && { ...report, findings: report.findings.map((f) => ({ ...f, def: undefined })) };
}

/** What `approve` did. */
export interface Approval {
  approved: string[];
}

/**
 * Pin what is pending in `entry`: everything (`name` undefined) or the tool and/or prompt called
 * `name`. Removed definitions lose their pin. Returns what was approved (empty: nothing pending).
 */
export function approve(entry: PinEntry, name: string | undefined): Approval {
  const approved: string[] = [];
  for (const kind of ["tool", "prompt"] as const) {
    const section = SECTION[kind];
    for (const [n, p] of Object.entries(entry.pending[section])) {
      if (name !== undefined && n !== name) continue;
      if ("removed" in p) delete entry.pinned[section][n];
      else entry.pinned[section][n] = p;
      delete entry.pending[section][n];
      approved.push(`${kind} ${n}${"removed" in p ? " (removed)" : ""}`);
    }
  }
  return { approved };
}
