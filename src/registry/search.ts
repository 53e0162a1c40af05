import MiniSearch from "minisearch";
import type { ToolDef } from "../types.js";
import {
  STOP_WORDS,
  VERB_GROUP,
  stem,
  synonymsOf,
  tokenize,
  verbGroups,
  words,
} from "./search-words.js";

/**
 * What the index reads of a server: its name, tools and what describes it (the configured
 * description, else what the server said about itself). A registry `ServerState` fits.
 */
export interface IndexedServer {
  readonly name: string;
  readonly tools: readonly ToolDef[];
  readonly config?: { readonly description?: string };
  readonly identity?: { readonly title?: string; readonly instructions?: string };
}

export interface SearchHit {
  server: string;
  tool: string;
  score: number;
}

interface Doc {
  id: string;
  /** The server's name (stored for the hit). */
  origin: string;
  /** The server's name and description (searched). */
  server: string;
  tool: string;
  name: string;
  description: string;
  params: string;
}

/** A tool whose name's verb is not the one asked for ("list pods" vs exec_in_pod). */
const VERB_MISMATCH = 0.5;
/** A tool that matched only the query's verbs, none of what they act on. */
const NO_OBJECT = 0.5;
/** A tool of a server the query names ("query the notion database"). */
const SERVER_NAMED = 1.5;
/**
 * A list tool for plural objects ("dependabot warnings" → list_dependabot_alerts), a single-item
 * tool for a singular one ("commit abc123" → get_commit).
 */
const NUMBER_AGREES = 1.5;

/**
 * What a description says first, whitespace collapsed: the first sentences say what the tool does;
 * what follows (usage rules, examples, caveats, some run to pages) would let a long description
 * match every query.
 */
function lead(description: string): string {
  return description.replace(/\s+/g, " ").trim().slice(0, 300);
}

interface NameFacts {
  /** The name's words, stemmed; prepositions ("wait_for", "exec_in_pod") left out. */
  parts: string[];
  /** The verb groups the name's words belong to. */
  verbs: Set<number>;
  /** A list tool ("list_pages", "list_dependabot_alerts"). */
  list: boolean;
  /** The server's name, in words, stemmed. */
  server: string[];
}

function nameFacts(tool: string, server: string[]): NameFacts {
  const all = words(tool);
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return {
    // A name of stop words only ("get_me") keeps them.
    parts: (content.length > 0 ? content : all).map(stem),
    verbs: verbGroups(all),
    list: all.includes("list"),
    server,
  };
}

/**
 * What a server says it is for: the configured description, its title, and the start of its
 * instructions (long instructions would drown the tools' own words).
 */
function serverWords(s: IndexedServer): string {
  const instructions = (s.identity?.instructions ?? "").slice(0, 300);
  return [s.config?.description, s.identity?.title, instructions].filter(Boolean).join(" ");
}

/**
 * Ranked search over tool names, descriptions and parameter names (MiniSearch: BM25 with prefix
 * and fuzzy matching). Built from a snapshot of the catalog; rebuild when the catalog changes.
 */
export class ToolIndex {
  private readonly index: MiniSearch<Doc>;
  /** What each tool's name says, by tool id, worked out once rather than per query term. */
  private readonly names = new Map<string, NameFacts>();

  constructor(servers: readonly IndexedServer[]) {
    this.index = new MiniSearch<Doc>({
      fields: ["name", "description", "params", "server"],
      storeFields: ["origin", "tool"],
      // Every word is indexed ("get_me" keeps "me"); search() drops stop words from the user's
      // words itself, so a synonym that is one ("me") still searches.
      tokenize: words,
      processTerm: stem,
      searchOptions: {
        boost: { name: 4, params: 1.5, server: 1 },
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        combineWith: "OR",
      },
    });
    const docs: Doc[] = servers.flatMap((s) => {
      const server = `${s.name} ${serverWords(s)}`;
      return s.tools.map((t) => ({
        id: `${s.name}.${t.name}`,
        origin: s.name,
        server,
        tool: t.name,
        name: t.name,
        description: `${t.title ?? ""} ${lead(t.description ?? "")}`,
        params: Object.keys(
          (t.inputSchema.properties as Record<string, unknown> | undefined) ?? {},
        ).join(" "),
      }));
    });
    this.index.addAll(docs);
    for (const s of servers) {
      const server = words(s.name).map(stem);
      for (const t of s.tools) this.names.set(`${s.name}.${t.name}`, nameFacts(t.name, server));
    }
  }

  /** The best `limit` tools for a natural-language query. */
  search(query: string, limit = 10): SearchHit[] {
    const all = words(query);
    const terms = tokenize(query);
    // A stop word can still name a need through its synonyms ("who am I" → me, user).
    const synonyms = [...new Set(all.flatMap((t) => synonymsOf(t)))].filter(
      (t) => !terms.includes(t),
    );
    if (terms.length === 0 && synonyms.length === 0) return [];
    // Synonyms widen the net at half weight: the words the model used still rank first.
    const queries = [
      ...(terms.length > 0 ? [terms.join(" ")] : []),
      ...(synonyms.length > 0
        ? [{ queries: synonyms, boost: { name: 2, params: 0.75, description: 0.5, server: 0.5 } }]
        : []),
    ];
    const own = new Set(terms.map(stem));
    const wanted = new Set([...own, ...synonyms.map(stem)]);
    const asked = verbGroups(all);
    // What the verbs act on: the query's other words and their synonyms.
    const objects = new Set(
      all
        .filter((t) => !STOP_WORDS.has(t) && !VERB_GROUP.has(t))
        .flatMap((t) => [t, ...synonymsOf(t)])
        .map(stem),
    );
    const plural = terms.some((t) => t.endsWith("s") && stem(t) !== t);
    return this.index
      .search(
        { combineWith: "OR", queries },
        {
          boostDocument: (id) => {
            const name = this.names.get(id as string);
            if (name === undefined) return 1;
            // A tool whose name is made of the query's words is the one meant: create_pull_request
            // over create_pull_request_review for "create a pull request".
            const covered =
              name.parts.filter((w) => wanted.has(w)).length / Math.max(1, name.parts.length);
            let boost = 1 + covered * covered;
            if (asked.size > 0 && name.verbs.size > 0 && ![...name.verbs].some((g) => asked.has(g)))
              boost *= VERB_MISMATCH;
            return boost;
          },
        },
      )
      .map((r) => {
        const name = this.names.get(r.id as string);
        let score = r.score;
        if (objects.size > 0 && !r.queryTerms.some((t) => objects.has(stem(t)))) score *= NO_OBJECT;
        if (name?.server.some((w) => own.has(w)) === true) score *= SERVER_NAMED;
        if (name?.list === plural) score *= NUMBER_AGREES;
        return { server: r.origin as string, tool: r.tool as string, score };
      })
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }
}
