/**
 * The vocabulary of tool search: how words are split, stemmed and dropped, the everyday words for
 * what tools call otherwise, and the verbs of the field. Pure data and functions; the ranking that
 * uses them is search.ts.
 */

/**
 * Words that carry no need: articles, pronouns, auxiliaries, fillers ("what's inside", "I'm on
 * it"). Kept out of both the index and queries, so "me" does not pull get_me to the top.
 */
export const STOP_WORDS = new Set(
  (
    "a an the to of for in on at with and or but from by as into onto off out up about over under " +
    "i me my mine we us our you your it its this that these those there here he she they them their " +
    "is am are was were be been being do does did done have has had having can could would should " +
    "will shall may might must let lets please just also so then than too very s t m re ve ll d " +
    "what whats which who whom whose where when why how all any some every each one ones thing " +
    "things stuff something someone someone's somebody else else's own saying say tell give get " +
    "take most more least until whether while"
  ).split(" "),
);

/**
 * Everyday words for what tool authors call otherwise. Expands queries only, at reduced weight,
 * so the user's own words still rank first. A general thesaurus of the vocabulary tools use
 * (files, repositories, reviews, memory), not a map of particular queries.
 */
export const SYNONYMS: Readonly<Record<string, string[]>> = {
  read: ["get", "view", "content"],
  show: ["get", "list", "view", "read"],
  see: ["get", "list", "view", "read"],
  look: ["get", "read", "view", "screenshot", "snapshot"],
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
  add: ["create", "add", "sum"],
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
  slow: ["long", "running", "performance", "trace"],
  progress: ["long", "running", "progress"],
  upload: ["push"],
  leaked: ["secret", "scanning"],
  leak: ["secret", "scanning", "heap"],
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
  // The field's objects: words users say for what a server's tools act on, mapped to the words
  // those servers use (a pod is a Kubernetes resource; a site is a browser page).
  pod: ["kubernetes", "kubectl", "resource"],
  deployment: ["kubernetes", "kubectl", "resource", "deployment"],
  namespace: ["kubernetes", "kubectl", "resource"],
  cluster: ["kubernetes", "kubectl", "context"],
  service: ["kubernetes", "kubectl", "resource"],
  replica: ["kubernetes", "scale"],
  container: ["kubernetes", "pod"],
  k8s: ["kubernetes", "kubectl"],
  restart: ["rollout", "restart"],
  rollback: ["rollout", "undo"],
  web: ["browser", "page", "navigate"],
  site: ["browser", "page"],
  website: ["browser", "page"],
  url: ["browser", "navigate", "page"],
  tab: ["browser", "page", "tab"],
  window: ["browser", "page", "resize"],
  phone: ["emulate", "resize", "viewport"],
  mobile: ["emulate", "resize", "viewport"],
  grep: ["search", "file", "content", "pattern"],
  terminal: ["process", "session", "terminal"],
  shell: ["process", "command", "terminal"],
  command: ["process", "command"],
  repl: ["process", "interact"],
  row: ["record", "query", "table"],
  column: ["table", "schema", "alter"],
  insert: ["write", "create", "record"],
  docs: ["documentation", "library", "docs"],
  video: ["screencast"],
  popup: ["dialog"],
  modal: ["dialog"],
  fact: ["observation"],
  simulate: ["emulate"],
  response: ["network", "request"],
  space: ["size"],
  stop: ["terminate", "kill"],
  cancel: ["stop"],
  everyone: ["user", "member"],
  documentation: ["docs", "library"],
  framework: ["library", "docs"],
};

/**
 * Verbs of the field, grouped by what they do to their object. A tool's name usually starts with
 * one ("kubectl_delete", "list_pages", "exec_in_pod"); when the user's words name an action and
 * the tool's name names a different one, the tool is likely not the one meant ("list pods" is not
 * exec_in_pod, whatever the object).
 */
export const VERB_GROUPS: readonly (readonly string[])[] = [
  [
    "get",
    "list",
    "read",
    "show",
    "see",
    "view",
    "retrieve",
    "query",
    "describe",
    "fetch",
    "open",
    "display",
    "check",
    "info",
    "which",
    "what",
    "capture",
  ],
  [
    "create",
    "add",
    "new",
    "make",
    "post",
    "write",
    "insert",
    "append",
    "save",
    "store",
    "remember",
    "note",
    "put",
    "overwrite",
    "push",
    "upload",
  ],
  [
    "update",
    "edit",
    "modify",
    "patch",
    "change",
    "set",
    "replace",
    "rename",
    "move",
    "alter",
    "apply",
    "toggle",
    "switch",
  ],
  ["delete", "remove", "drop", "erase", "forget", "uninstall", "cleanup", "clear", "destroy"],
  ["stop", "kill", "terminate", "close", "cancel", "end", "abort"],
  ["search", "find", "query", "lookup", "locate", "grep", "look", "check"],
  [
    "run",
    "execute",
    "exec",
    "start",
    "trigger",
    "launch",
    "kick",
    "call",
    "evaluate",
    "interact",
    "send",
  ],
];
export const VERB_GROUP = new Map<string, number[]>();
VERB_GROUPS.forEach((group, i) => {
  for (const verb of group) VERB_GROUP.set(verb, [...(VERB_GROUP.get(verb) ?? []), i]);
});

export function verbGroups(parts: readonly string[]): Set<number> {
  return new Set(parts.flatMap((p) => VERB_GROUP.get(p) ?? []));
}

/** A word's synonyms, found by the word or its stem ("pods" → those of "pod"). */
export function synonymsOf(word: string): readonly string[] {
  return SYNONYMS[word] ?? SYNONYMS[stem(word)] ?? [];
}

/** Split identifiers and prose alike: `create_pull_request`, `getFileContents`, "Pull requests". */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace(/['’]s\b/g, "")
    .split(/[^a-z0-9]+/)
    .filter((t) => t !== "");
}

export function tokenize(text: string): string[] {
  return words(text).filter((t) => !STOP_WORDS.has(t));
}

/**
 * A light English stemmer (plurals, -ing, -ed): "issues"/"issue", "scanning"/"scan",
 * "leaked"/"leak", "pods"/"pod"; "status", "class" and "always" stay.
 */
export function stem(term: string): string {
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
