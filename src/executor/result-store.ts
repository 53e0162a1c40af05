/**
 * Results kept for paging (`mcpx://results/<id>`): per caller, bounded by count, total size and
 * age, in this process or in Redis (src/shared/: every replica reads them). A handle is readable only by the caller whose call made it; to any
 * other caller it does not exist.
 */
import { randomBytes } from "node:crypto";
import type { Pageable } from "../compression/budget.js";
import { MemoryShared } from "../shared/memory.js";
import type { Gone, KeptStore, SharedState } from "../shared/types.js";

/** The store's limits; the defaults are documented in docs/meta-tools.md ("Results: budget, paging, select"). */
export interface ResultStoreLimits {
  /** Results kept at once, over all callers. */
  maxResults: number;
  /** Their total size: characters of compact JSON (elements) or of text, about bytes in memory. */
  maxChars: number;
  /** How long after its call a result can be read, in ms. */
  maxAgeMs: number;
}

export const DEFAULT_RESULT_STORE: ResultStoreLimits = {
  maxResults: 100,
  maxChars: 64 * 1024 * 1024,
  maxAgeMs: 30 * 60_000,
};

/** A result that was cut: its parts to page through and how pages are sized. */
export interface StoredResult {
  /** `server.tool` that produced it, for the page's heading. */
  source: string;
  /** What pages read, in the order the result had them. */
  parts: StoredPart[];
  /** Page size in tokens (the server's result budget). */
  budget: number;
}

export interface StoredPart {
  pageable: Pageable;
  /** What the part is, for messages: `"items"`, `"the result"`, `"text block 2"`. */
  label: string;
}

export type { Gone };

export const RESULT_URI_PREFIX = "mcpx://results/";

/** `mcpx://results/<id>`, or `…/<id>/<part>` (1-based) for a result with several parts. */
export function resultUri(id: string, part?: number): string {
  return `${RESULT_URI_PREFIX}${id}${part === undefined ? "" : `/${part}`}`;
}

/** The id and part (1-based, 1 when absent) of a result URI; undefined if it is not one. */
export function parseResultUri(uri: string): { id: string; part: number } | undefined {
  if (!uri.startsWith(RESULT_URI_PREFIX)) return undefined;
  const m = /^([A-Za-z0-9_-]+)(?:\/([1-9]\d{0,3}))?\/?$/.exec(uri.slice(RESULT_URI_PREFIX.length));
  return m ? { id: m[1]!, part: m[2] === undefined ? 1 : Number(m[2]) } : undefined;
}

/**
 * `offset` (default 0) and `limit` of a page request. Whole numbers written as strings ("412")
 * are read as numbers: models sometimes quote them.
 */
export function readPageArgs(
  args: Record<string, unknown>,
): { offset: number; limit?: number } | { error: string } {
  const offset = wholeNumber(args.offset);
  const limit = wholeNumber(args.limit);
  if (offset === null || (offset !== undefined && offset < 0))
    return { error: `"offset" must be a whole number from 0, e.g. offset: 412.` };
  if (limit === null || (limit !== undefined && limit < 1))
    return { error: `"limit" must be a whole number from 1, e.g. limit: 100 (or leave it out).` };
  return { offset: offset ?? 0, ...(limit !== undefined && { limit }) };
}

/** undefined when absent, null when not a whole number. */
function wholeNumber(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) ? n : null;
}

export class ResultStore {
  readonly limits: ResultStoreLimits;
  private readonly kept: KeptStore<StoredResult>;

  /**
   * `shared` holds the results: this process (the default, `now` the clock ages are measured
   * on, tests inject one) or Redis, where every replica reads them.
   */
  constructor(
    limits: Partial<ResultStoreLimits> = {},
    now: () => number = Date.now,
    shared: SharedState = new MemoryShared(now),
  ) {
    this.limits = { ...DEFAULT_RESULT_STORE, ...limits };
    const { maxResults, maxChars, maxAgeMs } = this.limits;
    this.kept = shared.kept<StoredResult>("results", {
      maxEntries: maxResults,
      maxSize: maxChars,
      maxAgeMs,
    });
  }

  /**
   * Keep `entry` for `caller`; resolves to its id, or undefined when it is larger than the whole
   * store may hold. Rejects with SharedUnavailableError when the store (Redis) is unreachable.
   */
  async put(caller: string, entry: StoredResult): Promise<string | undefined> {
    const chars = size(entry);
    if (chars > this.limits.maxChars) return undefined;
    // 72 random bits: unguessable, and short enough to cost a model few tokens.
    const id = randomBytes(9).toString("base64url");
    await this.kept.put(caller, id, entry, chars);
    return id;
  }

  /** The caller's result, why it is gone, or undefined for one it never had (or another's). */
  get(caller: string, id: string): Promise<StoredResult | { gone: Gone } | undefined> {
    return this.kept.get(caller, id);
  }
}

/** Characters of the entry's parts: compact JSON of elements, or the text. */
function size(entry: StoredResult): number {
  let total = 0;
  for (const { pageable: p } of entry.parts)
    total +=
      p.kind === "text" ? p.text.length : p.items.reduce((n, item) => n + item.length + 1, 1);
  return total;
}
