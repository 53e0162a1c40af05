/** The dashboard's JSON API (documented in docs/operations.md, "Dashboard"), as the page reads it. */

export interface ServerSummary {
  name: string;
  description: string;
  status: "starting" | "ready" | "degraded" | "down" | "needs sign-in";
  /** With "needs sign-in": the command that signs in. */
  signIn?: string;
  era?: string;
  protocolVersion?: string;
  error?: string;
  /** Optional requests the server failed (method → why); it stays up with its tools. */
  notes?: Record<string, string>;
  /** What the trust pins say (docs/trust.md): findings, and whether flagged ones are held. */
  trust?: { held: boolean; findings: string[] };
  latencyMs?: number;
  consecutiveFailures: number;
  downSince?: string;
  nextRetryAt?: string;
  sessions?: { policy: string; open: number; leased: number; waiting: number; spares: number };
  stderrLines?: { total: number; dropped: number };
  transport: string;
  policy: string;
  readySince?: number;
  counts: { tools: number; prompts: number; resources: number; templates: number };
}

export interface Status {
  mcpx: {
    version: string;
    startedAt: number;
    /** With `redis`: the shared state's server and whether it is reachable. */
    shared?: { address?: string; reachable: boolean; downSince?: string; error?: string };
  };
  viewer: { caller: string | null; profile: string | null; auth: boolean };
  status: "ok" | "degraded";
  servers: ServerSummary[];
  callers: { caller: string; profile: string; calls: number; lastSeen: number }[];
  profiles: { name: string; readOnly: boolean; servers: { name: string; tools: number }[] }[];
}

export interface ServerDetail extends ServerSummary {
  target: Record<string, unknown>;
  tools: {
    name: string;
    signature: string;
    description: string;
    tokens: number;
    annotations: Record<string, unknown>;
  }[];
  prompts: {
    name: string;
    description: string;
    arguments: { name: string; required: boolean; description: string }[];
  }[];
  resources: { uri: string; name: string; mimeType?: string; description: string }[];
  templates: { uriTemplate: string; name: string; description: string }[];
}

export interface CallRecord {
  id: number;
  parentId?: number;
  caller: string;
  server?: string;
  tool: string;
  startedAt: number;
  durationMs?: number;
  outcome: string;
}

export interface Compression {
  results: number;
  jsonTokens: number;
  sentTokens: number;
  saved: number;
}

export interface Calls {
  recent: CallRecord[];
  perServer: {
    server: string;
    calls: number;
    p50: number | null;
    p95: number | null;
    compression: Compression;
  }[];
}

export interface LogRecord {
  seq: number;
  time: number;
  level: string;
  source: string;
  text: string;
}

export interface Economy {
  profile: string;
  rows: {
    server: string;
    status: string;
    tools: number;
    direct: number;
    mcpx: number;
    saved: number;
  }[];
  shared: number;
  total: { tools: number; direct: number; mcpx: number; saved: number; ratio: number };
}

/** `/api/trust`: what waits for approval on the viewer's servers. */
export interface TrustReview {
  enabled: boolean;
  servers: {
    server: string;
    changes: {
      kind: "tool" | "prompt";
      name: string;
      status: "removed" | "changed" | "unapproved";
      diff: { value: string; added?: true; removed?: true }[];
    }[];
  }[];
}

export interface SearchHit {
  server: string;
  tool: string;
  signature: string;
  description: string;
}

/** GET a JSON document of the API; the session cookie goes along (same origin). */
export async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: "application/json" } });
  if (res.status === 401) {
    // The session ended (token removed, mcpx restarted): back to the sign-in page.
    location.assign("/");
    throw new Error("signed out");
  }
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** POST a JSON document to the API (JSON only: no other site's form can post it). */
export async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status === 401) {
    location.assign("/");
    throw new Error("signed out");
  }
  const answer = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(answer.error ?? `${path}: HTTP ${res.status}`);
  return answer;
}

export const enc = encodeURIComponent;
