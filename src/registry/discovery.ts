/**
 * Discovery: what one upstream offers (its tools, resources, templates and prompts), fetched
 * whole at startup and after an outage, or one list at a time after `list_changed`. Only
 * tools/list is required; the other lists may fail without the server being down: their failure
 * is noted (`ServerState.notes`) and they count as empty.
 */
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ListKind, UpstreamSession } from "../upstream/types.js";
import type { SessionPool } from "./pool.js";
import type { OptionalList } from "./notes.js";
import type { Catalog, ServerState } from "./types.js";

type Notes = NonNullable<ServerState["notes"]>;

/**
 * The whole catalog of a group's upstream, through one session of its pool. Bounded as a whole
 * by `timeoutMs`: the connect timeout bounds spawn + initialize and each list request its own
 * time; this bounds the whole discovery, so one slow upstream never holds up startup for longer.
 */
export async function fetchCatalog(
  pool: SessionPool,
  timeoutMs: number,
  log: Logger,
): Promise<Catalog> {
  const deadline = AbortSignal.timeout(timeoutMs);
  // Once tools are in, the deadline no longer fails the discovery: optional lists still
  // unanswered then end as notes (the deadline aborts them too).
  let listed = false;
  let opened = false;
  const work = pool.inspect(
    async (session) => {
      opened = true;
      const opts = { timeoutMs, signal: deadline };
      const notes: Notes = {};
      const optional = <T>(method: OptionalList, list: () => Promise<T[]>) =>
        optionalList(log, method, list, notes, deadline, timeoutMs);
      const tools = session.listTools(opts).then(
        (t) => {
          listed = true;
          return t;
        },
        (err: unknown) => {
          // Only tools/list is required: say which request failed, not just how.
          throw new Error(`tools/list failed: ${errorMessage(err)}`, { cause: err });
        },
      );
      const [toolDefs, resources, resourceTemplates, prompts] = await Promise.all([
        tools,
        optional("resources/list", () => session.listResources(opts)),
        optional("resources/templates/list", () => session.listResourceTemplates(opts)),
        optional("prompts/list", () => session.listPrompts(opts)),
      ]);
      return {
        identity: session.identity,
        tools: toolDefs,
        resources,
        resourceTemplates,
        prompts,
        ...(Object.keys(notes).length > 0 && { notes }),
      };
      // isolated, every session busy with calls: wait for one within the discovery's bound.
    },
    { timeoutMs, signal: deadline },
  );
  return await new Promise<Catalog>((resolve, reject) => {
    const onTimeout = () => {
      const waitingFor = opened ? "tools/list" : "its connection and initialize";
      if (!listed) reject(new Error(`did not start within ${timeoutMs} ms (${waitingFor})`));
    };
    deadline.addEventListener("abort", onTimeout, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener("abort", onTimeout));
  });
}

/** One list fetched again after `list_changed`: what it sets, and the notes of its methods. */
export interface ListUpdate {
  update: Partial<Catalog>;
  /** The optional methods this list covers: their notes are replaced by `notes`. */
  methods: OptionalList[];
  notes: Notes;
}

/**
 * Fetch one list again, on the session that announced the change (it is the one known to see
 * it). Rejects when tools/list fails; the optional lists end as notes.
 */
export async function fetchList(
  session: UpstreamSession,
  kind: ListKind,
  timeoutMs: number,
  log: Logger,
): Promise<ListUpdate> {
  const opts = { timeoutMs };
  const notes: Notes = {};
  const optional = <T>(method: OptionalList, list: () => Promise<T[]>) =>
    optionalList(log, method, list, notes);
  const update: Partial<Catalog> = {};
  switch (kind) {
    case "tools":
      update.tools = await session.listTools(opts);
      return { update, methods: [], notes };
    case "resources":
      [update.resources, update.resourceTemplates] = await Promise.all([
        optional("resources/list", () => session.listResources(opts)),
        optional("resources/templates/list", () => session.listResourceTemplates(opts)),
      ]);
      return { update, methods: ["resources/list", "resources/templates/list"], notes };
    case "prompts":
      update.prompts = await optional("prompts/list", () => session.listPrompts(opts));
      return { update, methods: ["prompts/list"], notes };
    default: {
      const never: never = kind;
      throw new Error(`unknown list kind ${String(never)}`);
    }
  }
}

/**
 * One optional list: its items, or, whatever the failure (method not found, invalid params,
 * internal error, timeout), none, with the reason kept in `notes` under its method.
 */
async function optionalList<T>(
  log: Logger,
  method: OptionalList,
  list: () => Promise<T[]>,
  notes: Notes,
  deadline?: AbortSignal,
  timeoutMs?: number,
): Promise<T[]> {
  try {
    return await list();
  } catch (err) {
    notes[method] = log.redact(
      deadline?.aborted ? `no answer within ${timeoutMs} ms` : errorMessage(err),
    );
    return [];
  }
}

/**
 * Land a refreshed list on one server's state: the lists it sets, the notes of its methods.
 * Returns whether anything a client sees changed.
 */
export function applyList(state: ServerState, list: ListUpdate, now: number): boolean {
  const before = state.notes;
  const next = { ...state.notes };
  for (const m of list.methods) {
    if (list.notes[m] === undefined) delete next[m];
    else next[m] = list.notes[m];
  }
  const changed =
    JSON.stringify(pickCatalog(state, list.update)) !== JSON.stringify(list.update) ||
    JSON.stringify(before ?? {}) !== JSON.stringify(next);
  Object.assign(state, list.update, { updatedAt: now });
  if (Object.keys(next).length > 0) state.notes = next;
  else delete state.notes;
  return changed;
}

/** The fields of `state` that `update` sets, to tell whether a refresh changed anything. */
function pickCatalog(state: ServerState, update: Partial<Catalog>): Partial<Catalog> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(update)) out[key] = state[key as keyof Catalog];
  return out;
}
