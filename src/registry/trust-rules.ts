/**
 * Suspicious text in tool and prompt definitions: the one table of rules mcpx applies to every
 * description and schema text an upstream serves. A definition that matches a rule is flagged as
 * a changed one is (held under `"hold"`, noted otherwise: src/registry/trust.ts), whatever the
 * trust mode; a false positive is approved like a change (`mcpx trust approve`).
 *
 * Two kinds of rule: characters a person cannot see but a model reads (zero-width, bidi
 * controls, Unicode tag characters that spell hidden ASCII), and text addressed to the model
 * instead of describing the tool (the "tool poisoning" patterns security reviews of MCP report).
 * Keep the table small and each rule specific: every rule has a test with a hit and a miss.
 */

/** One rule: what it is called in findings, and what it matches. */
export interface TrustRule {
  readonly id: string;
  /** What a person reads in describe, /healthz and `mcpx trust diff`. */
  readonly why: string;
  readonly pattern: RegExp;
}

/** Zero-width, bidi control, word joiner and BOM code points (a regex class body). */
const INVISIBLE = "\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF";

export const TRUST_RULES: readonly TrustRule[] = [
  {
    id: "invisible",
    why: "invisible or bidi control characters (zero-width, direction marks and overrides, word joiners, BOM)",
    pattern: new RegExp(`[${INVISIBLE}]`, "u"),
  },
  {
    id: "tag-characters",
    why: "Unicode tag characters (U+E0000–U+E007F), which spell hidden ASCII text",
    pattern: /[\u{E0000}-\u{E007F}]/u,
  },
  {
    id: "ignore-instructions",
    why: 'an instruction to disregard earlier instructions ("ignore previous instructions")',
    pattern:
      /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|preceding|other)\s+(instructions|prompts|rules|directions|context)\b/i,
  },
  {
    id: "hide-from-user",
    why: 'an instruction to keep something from the user ("do not tell the user")',
    pattern:
      /\b(do\s+not|don't|never)\s+(tell|inform|mention\s+(this\s+)?to|reveal\s+(this\s+)?to|show\s+(this\s+)?to|let)\s+(the\s+)?user\b/i,
  },
  {
    id: "important-block",
    why: "an <IMPORTANT>, <SYSTEM> or <INSTRUCTIONS> block addressed to the model",
    pattern: /<\s*\/?\s*(important|system|instructions?|secret)\s*>/i,
  },
  {
    id: "model-address",
    why: 'text addressed to the model ("you must first…", "before using this tool, read…")',
    pattern:
      /\b(before\s+(using|calling)\s+this\s+tool,?\s+(you\s+must\s+)?(read|call|send|pass|include)|as\s+an\s+ai\b|you\s+are\s+now\b|new\s+instructions\s*:)/i,
  },
  {
    id: "secret-files",
    why: "a request to read or send credentials files (~/.ssh, .env, id_rsa, mcp.json)",
    pattern: /(~\/\.ssh|\bid_rsa\b|\.aws\/credentials|~\/\.cursor\/mcp\.json|\bcat\s+\.env\b)/i,
  },
];

/** One rule a text broke. */
export interface RuleHit {
  rule: string;
  why: string;
}

/** The rules `text` breaks (none: an empty list). */
export function suspiciousText(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  for (const rule of TRUST_RULES) {
    if (rule.pattern.test(text)) hits.push({ rule: rule.id, why: rule.why });
  }
  return hits;
}

const INVISIBLE_GLOBAL = new RegExp(`[${INVISIBLE}\\u{E0000}-\\u{E007F}]`, "gu");

/**
 * `text` with every invisible or bidi control character written as a `\u{…}` escape, so a
 * person (and the model) sees it is there: what describe shows.
 */
export function escapeInvisible(text: string): string {
  return text.replace(
    INVISIBLE_GLOBAL,
    (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`,
  );
}
