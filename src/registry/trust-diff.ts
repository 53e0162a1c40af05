/**
 * What waits for approval in a pin file, as `mcpx trust diff` and the dashboard show it: for
 * each pending definition, a word diff of the pinned and the pending one, each rendered as
 * describe shows it (its description, then its schemas as TypeScript declarations, invisible
 * characters escaped). The schema compiler is handed in (it lives above the registry).
 */
import type { JsonSchema } from "../types.js";
import { escapeInvisible } from "./trust-rules.js";
import type { PendingPin, Pin, PinEntry, PinnedDef } from "./trust-store.js";
import { lazyImport } from "../install.js";

/** A schema as a TypeScript declaration named `name` (what describe shows). */
export type CompileSchema = (schema: JsonSchema, name: string) => Promise<string>;

/** One piece of a word diff: kept, removed (only in the pinned one) or added (only pending). */
export interface DiffPart {
  value: string;
  added?: true;
  removed?: true;
}

/** One pending definition and how it differs from its pin. */
export interface PendingChange {
  kind: "tool" | "prompt";
  name: string;
  /** removed: the server no longer lists it; changed: it differs from its pin; unapproved: no pin. */
  status: "removed" | "changed" | "unapproved";
  diff: DiffPart[];
}

/** What waits in `entry` (only the tool and/or prompt `name` when given), with its word diff. */
export async function pendingChanges(
  entry: PinEntry,
  defs: Record<string, PinnedDef>,
  name: string | undefined,
  compile: CompileSchema,
): Promise<PendingChange[]> {
  // Loaded when a diff is shown (`mcpx trust diff`, the dashboard), not by every serve.
  const { diffWords } = await lazyImport(() => import("diff"));
  const changes: PendingChange[] = [];
  for (const section of ["tools", "prompts"] as const) {
    for (const [n, pending] of Object.entries(entry.pending[section])) {
      if (name !== undefined && n !== name) continue;
      const pinned = entry.pinned[section][n];
      const kind = section === "tools" ? "tool" : "prompt";
      const before = pinned ? await render(pinned, defs, kind, compile) : "";
      const after = "removed" in pending ? "" : await render(pending, defs, kind, compile);
      changes.push({
        kind,
        name: n,
        status: "removed" in pending ? "removed" : pinned ? "changed" : "unapproved",
        diff: diffWords(before, after).map((c) => ({
          value: c.value,
          ...(c.added && { added: true as const }),
          ...(c.removed && { removed: true as const }),
        })),
      });
    }
  }
  return changes;
}

/** What a change's status says, in a sentence's words. */
export function statusText(status: PendingChange["status"]): string {
  return status === "removed"
    ? "removed by the server"
    : status === "changed"
      ? "changed"
      : "not approved yet";
}

/** `[-removed-]{+added+}` (git's plain word diff), readable without colour. */
export function plainWordDiff(diff: readonly DiffPart[]): string {
  return diff
    .map((c) => (c.added ? `{+${c.value}+}` : c.removed ? `[-${c.value}-]` : c.value))
    .join("");
}

/**
 * A definition as describe shows it: its description, then its input (and output) schema as the
 * TypeScript declaration describe gives, invisible characters escaped.
 */
async function render(
  pin: Pin | PendingPin,
  defs: Record<string, PinnedDef>,
  kind: "tool" | "prompt",
  compile: CompileSchema,
): Promise<string> {
  if ("removed" in pin) return "";
  const def = defs[pin.hash];
  if (!def)
    return `(definition not kept: it quoted a value of the server's env or headers; hash ${pin.hash})`;
  const parts: string[] = [];
  if (typeof def.description === "string") parts.push(def.description);
  if (kind === "tool") {
    parts.push(`input: ${await compile(def.inputSchema as JsonSchema, "Input")}`);
    if (def.outputSchema) {
      parts.push(`output: ${await compile(def.outputSchema as JsonSchema, "Output")}`);
    }
    if (def.annotations) parts.push(`annotations: ${JSON.stringify(def.annotations)}`);
  } else if (def.arguments) {
    parts.push(`arguments: ${JSON.stringify(def.arguments, null, 2)}`);
  }
  return escapeInvisible(parts.join("\n"));
}
