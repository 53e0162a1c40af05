import MiniSearch from "minisearch";
import type { ServerState } from "./registry.js";

export interface SearchHit {
  server: string;
  tool: string;
  score: number;
}

interface Doc {
  id: string;
  server: string;
  tool: string;
  name: string;
  description: string;
  params: string;
}

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "to",
  "of",
  "for",
  "in",
  "on",
  "with",
  "and",
  "or",
  "from",
  "by",
  "i",
  "am",
  "is",
  "are",
  "some",
  "all",
]);

/** Everyday verbs a model uses for the words tool authors use. Expands queries only. */
const SYNONYMS: Readonly<Record<string, string[]>> = {
  read: ["get", "view", "open"],
  fetch: ["get"],
  show: ["get", "list", "view"],
  find: ["search", "get"],
  lookup: ["search", "get"],
  make: ["create"],
  new: ["create"],
  open: ["create"],
  add: ["create"],
  remove: ["delete"],
  erase: ["delete"],
  modify: ["update", "edit"],
  change: ["update", "edit"],
  edit: ["update"],
  write: ["create", "update"],
  run: ["trigger", "execute"],
  pr: ["pull", "request"],
  who: ["me", "user"],
  my: ["me"],
};

/** Split identifiers and prose alike: `create_pull_request`, `getFileContents`, "Pull requests". */
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== "" && !STOP_WORDS.has(t));
}

/** A light plural stemmer: "issues" and "issue" should meet; "status" and "class" stay. */
function stem(term: string): string {
  if (term.length > 4 && term.endsWith("ies")) return `${term.slice(0, -3)}y`;
  if (term.length > 3 && term.endsWith("s") && !/(ss|us|is)$/.test(term)) return term.slice(0, -1);
  return term;
}

/**
 * Ranked search over tool names, descriptions and parameter names (MiniSearch: BM25 with prefix
 * and fuzzy matching). Built from a snapshot of the catalog; rebuild when the catalog changes.
 */
export class ToolIndex {
  private readonly index: MiniSearch<Doc>;

  constructor(servers: readonly ServerState[]) {
    this.index = new MiniSearch<Doc>({
      fields: ["name", "description", "params", "server"],
      storeFields: ["server", "tool"],
      tokenize,
      processTerm: stem,
      searchOptions: {
        boost: { name: 4, params: 1.5, server: 1 },
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        combineWith: "OR",
      },
    });
    const docs: Doc[] = servers.flatMap((s) =>
      s.tools.map((t) => ({
        id: `${s.name}.${t.name}`,
        server: s.name,
        tool: t.name,
        name: t.name,
        description: `${t.title ?? ""} ${t.description ?? ""}`,
        params: Object.keys(
          (t.inputSchema.properties as Record<string, unknown> | undefined) ?? {},
        ).join(" "),
      })),
    );
    this.index.addAll(docs);
  }

  /** The best `limit` tools for a natural-language query. */
  search(query: string, limit = 10): SearchHit[] {
    const terms = tokenize(query);
    if (terms.length === 0) return [];
    const synonyms = [...new Set(terms.flatMap((t) => SYNONYMS[t] ?? []))].filter(
      (t) => !terms.includes(t),
    );
    // Synonyms widen the net at half weight: the words the model used still rank first.
    const queries = [
      terms.join(" "),
      ...(synonyms.length > 0
        ? [{ queries: synonyms, boost: { name: 2, params: 0.75, description: 0.5, server: 0.5 } }]
        : []),
    ];
    const wanted = new Set([...terms, ...synonyms].map(stem));
    return this.index
      .search(
        { combineWith: "OR", queries },
        {
          // A tool whose name is made of the query's words is the one meant: create_pull_request
          // over create_pull_request_review for "create a pull request".
          boostDocument: (_id, _term, stored) => {
            const tool = typeof stored?.tool === "string" ? stored.tool : "";
            const words = tokenize(tool).map(stem);
            const covered = words.filter((w) => wanted.has(w)).length / Math.max(1, words.length);
            return 1 + covered * covered;
          },
        },
      )
      .slice(0, limit)
      .map((r) => ({ server: r.server as string, tool: r.tool as string, score: r.score }));
  }
}
