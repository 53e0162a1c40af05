import MiniSearch from "minisearch";
import type { ToolDef } from "../types.js";

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

/**
 * Words that carry no need: articles, pronouns, auxiliaries, fillers ("what's inside", "I'm on
 * it"). Kept out of both the index and queries, so "me" does not pull get_me to the top.
 */
const STOP_WORDS = new Set(
  (
    "a an the to of for in on at with and or but from by as into onto off out up about over under " +
    "i me my mine we us our you your it its this that these those there here he she they them their " +
    "is am are was were be been being do does did done have has had having can could would should " +
    "will shall may might must let lets please just also so then than too very s t m re ve ll d " +
    "what whats which who whom whose where when why how all any some every each one ones thing " +
    "things stuff something someone someone's somebody else else's own saying say tell give get"
  ).split(" "),
);

/**
 * Everyday words for what tool authors call otherwise. Expands queries only, at reduced weight,
 * so the user's own words still rank first. A general thesaurus of the vocabulary tools use
 * (files, repositories, reviews, memory), not a map of particular queries.
 */
const SYNONYMS: Readonly<Record<string, string[]>> = {
  read: ["get", "view", "content"],
  show: ["get", "list", "view", "read"],
  see: ["get", "list", "view", "read"],
  look: ["get", "read", "view", "search"],
  view: ["get", "read"],
  inside: ["content", "read"],
  contents: ["content", "read"],
  fetch: ["get"],
  find: ["search", "get"],
  lookup: ["search", "get"],
  locate: ["search"],
  know: ["search", "open", "node"],
  recall: ["search", "open"],
  make: ["create"],
  new: ["create"],
  open: ["create"],
  start: ["create", "trigger"],
  add: ["create", "add"],
  save: ["create", "write"],
  store: ["create", "write"],
  remember: ["create", "add", "entity", "observation", "memory"],
  note: ["comment", "observation"],
  record: ["create", "relation", "observation"],
  forget: ["delete", "remove"],
  remove: ["delete"],
  erase: ["delete"],
  drop: ["delete"],
  modify: ["update", "edit"],
  change: ["update", "edit"],
  edit: ["update"],
  replace: ["edit", "update"],
  rename: ["move"],
  write: ["create", "update"],
  run: ["trigger", "execute", "run"],
  rerun: ["rerun", "run", "trigger"],
  retry: ["rerun", "run"],
  kick: ["trigger", "start"],
  pr: ["pull", "request"],
  prs: ["pull", "request"],
  who: ["me"],
  i: ["me"],
  my: ["me"],
  logged: ["me", "authenticated"],
  account: ["me", "user"],
  profile: ["me", "user"],
  copy: ["fork", "copy"],
  clone: ["fork"],
  recent: ["latest"],
  newest: ["latest"],
  last: ["latest"],
  approve: ["review", "approve"],
  reviewer: ["review", "request"],
  leave: ["add", "comment"],
  reply: ["comment", "reply"],
  folder: ["directory"],
  folders: ["directory"],
  dir: ["directory"],
  disk: ["file", "filesystem"],
  local: ["file", "filesystem"],
  locally: ["file", "filesystem"],
  computer: ["file", "filesystem"],
  picture: ["image", "media"],
  photo: ["image", "media"],
  screenshot: ["image", "media"],
  audio: ["media"],
  size: ["size", "info"],
  big: ["size", "info"],
  modified: ["info", "time"],
  relationship: ["relation"],
  manages: ["relation"],
  link: ["relation"],
  graph: ["graph", "read"],
  whole: ["entire", "all"],
  dump: ["read", "entire"],
  sum: ["sum", "add"],
  total: ["sum"],
  together: ["sum"],
  plus: ["sum"],
  repeat: ["echo"],
  environment: ["env"],
  variables: ["env"],
  compress: ["gzip", "zip"],
  zip: ["gzip"],
  slow: ["long", "running"],
  progress: ["long", "running", "progress"],
  upload: ["push"],
  leaked: ["secret", "scanning"],
  leak: ["secret", "scanning"],
  password: ["secret"],
  credential: ["secret"],
  warning: ["alert"],
  vulnerability: ["alert", "advisory", "dependabot"],
  finding: ["alert"],
  history: ["list", "commit"],
  wrote: ["blame", "author"],
  line: ["blame"],
  ci: ["actions", "workflow", "job"],
  build: ["actions", "workflow", "job"],
  pipeline: ["actions", "workflow"],
  output: ["logs", "log"],
  fail: ["failed", "logs"],
  inbox: ["notification"],
  unread: ["notification"],
  favorite: ["star"],
  bookmark: ["star"],
  snippet: ["gist"],
  paste: ["gist"],
  people: ["user", "member"],
  person: ["user", "member"],
  team: ["team", "member"],
  close: ["state", "close"],
  reopen: ["state"],
  assign: ["assignee"],
  waiting: ["open", "list"],
  squash: ["merge"],
  structure: ["tree"],
  tree: ["tree"],
};

/** Split identifiers and prose alike: `create_pull_request`, `getFileContents`, "Pull requests". */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace(/['’]s\b/g, "")
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== "");
}

function tokenize(text: string): string[] {
  return words(text).filter((t) => !STOP_WORDS.has(t));
}

/**
 * A light English stemmer (plurals, -ing, -ed): "issues"/"issue", "scanning"/"scan",
 * "leaked"/"leak", "pods"/"pod"; "status", "class" and "always" stay.
 */
function stem(term: string): string {
  if (term.length > 4 && term.endsWith("ies")) return `${term.slice(0, -3)}y`;
  if (term.length > 5 && term.endsWith("ing")) return undouble(term.slice(0, -3));
  if (term.length > 4 && term.endsWith("ed") && !term.endsWith("eed"))
    return undouble(term.slice(0, -2));
  if (term.length > 4 && /(ches|shes|sses|xes|zes)$/.test(term)) return term.slice(0, -2);
  if (term.length > 3 && term.endsWith("s") && !/(ss|us|is|ys)$/.test(term))
    return term.slice(0, -1);
  return term;
}

/** "scann" → "scan", "committ" → "commit"; "fill", "pass" keep their doubled letter. */
function undouble(term: string): string {
  return /([bdgmnprt])\1$/.test(term) ? term.slice(0, -1) : term;
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
        description: `${t.title ?? ""} ${t.description ?? ""}`,
        params: Object.keys(
          (t.inputSchema.properties as Record<string, unknown> | undefined) ?? {},
        ).join(" "),
      }));
    });
    this.index.addAll(docs);
  }

  /** The best `limit` tools for a natural-language query. */
  search(query: string, limit = 10): SearchHit[] {
    const terms = tokenize(query);
    // A stop word can still name a need through its synonyms ("who am I" → me, user).
    const synonyms = [...new Set(words(query).flatMap((t) => SYNONYMS[t] ?? []))].filter(
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
    const wanted = new Set([...terms, ...synonyms].map(stem));
    return this.index
      .search(
        { combineWith: "OR", queries },
        {
          // A tool whose name is made of the query's words is the one meant: create_pull_request
          // over create_pull_request_review for "create a pull request".
          boostDocument: (_id, _term, stored) => {
            const tool = typeof stored?.tool === "string" ? stored.tool : "";
            const parts = words(tool).map(stem);
            const covered = parts.filter((w) => wanted.has(w)).length / Math.max(1, parts.length);
            return 1 + covered * covered;
          },
        },
      )
      .slice(0, limit)
      .map((r) => ({ server: r.origin as string, tool: r.tool as string, score: r.score }));
  }
}
