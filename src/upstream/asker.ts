/**
 * Requests an upstream sends to its client during a call (roots, elicitation, sampling), relayed
 * to the downstream client whose call triggered them. The registry sees upstream sessions, not
 * clients: a call brings its client's `ClientChannel` along, and each session's `SessionAsker`
 * finds the channel of the call a request belongs to. No SDK here (session.ts translates).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import {
  NO_CLIENT,
  RELAY_ERROR,
  RelayError,
  type AskOptions,
  type ClientAbilities,
  type ClientChannel,
  type RelayKind,
  type Root,
} from "./channel.js";
import { confineRoots } from "./roots.js";
import { isRecord } from "../json.js";

type Params = Record<string, unknown>;
type Answer = Record<string, unknown>;

/** The relay wait of one call on a session: its bound, and the pause of its upstream clock. */
interface CallEntry {
  channel: ClientChannel;
  options: AskOptions;
  /** Stops the call's upstream timeout while `p` (a request to the client) is pending. */
  hold: <T>(p: Promise<T>) => Promise<T>;
  /** The roots this call's client gets, fetched at most once per call. */
  roots?: Promise<Root[]>;
}

/** What mcpx learned about one upstream across its sessions. */
export interface UpstreamHabits {
  /** A session of it asked for roots: its other sessions will too (at initialize, say). */
  readsRoots: boolean;
}

export interface AskerOptions {
  /** The upstream's name, for logs and messages. */
  server: string;
  /** Shared by every session of the upstream (see createClientFactory). */
  habits: UpstreamHabits;
  /** The server's configured `roots` (URIs): the answer outside a call, or when roots are not the client's. */
  roots: readonly Root[];
  /**
   * Whether a call's client may give its own roots. False for a `shared` session: it serves
   * every caller, and an upstream keeps the roots it read for later calls.
   */
  clientRoots: boolean;
  /** True when requests the upstream relates to one of ours arrive in that request's context (streamable HTTP). */
  relatedContext: boolean;
  logger: Logger;
}

/** How long a call waits for a legacy upstream to read the roots it was told changed. */
export const ROOTS_ALIGN_MS = 1_000;

/** How long a call waits for a sign that the upstream applied the roots it read. */
export const ROOTS_SETTLE_MS = 150;

/**
 * One upstream session's side of the relay: which calls run on it (each with its channel), which
 * call a request belongs to, and the roots the upstream last read.
 *
 * Attribution: a request that arrives in the context of one of our requests (streamable HTTP,
 * where the upstream answers on that request's stream) belongs to its call; otherwise to the only
 * call running on the session; several calls and no relation → refused, saying why; no call →
 * roots get the configured ones, anything else is refused.
 */
export class SessionAsker {
  private readonly calls = new Set<CallEntry>();
  private readonly context = new AsyncLocalStorage<CallEntry>();
  private readonly log: Logger;
  /** The roots last given to the upstream (canonical JSON), undefined before the first answer. */
  private served: string | undefined;
  /** The call those roots were given during, if any. */
  private servedTo: CallEntry | undefined;
  /**
   * Whether the upstream showed a sign of life (or a call waited for one) since it was last given
   * roots: until then it may still be applying them (a spare opened just before its first call).
   */
  private settled = true;
  private rootsAnswered: (() => void)[] = [];
  private activityWaiters: (() => void)[] = [];

  constructor(private readonly options: AskerOptions) {
    this.log = options.logger;
  }

  /**
   * The session ended: release its async context. On Node 20 an AsyncLocalStorage that ran once
   * stays in a process-wide list until disabled, and every async resource created later carries
   * its store: one per isolated session would grow memory and per-call work without bound.
   */
  close(): void {
    this.context.disable();
  }

  /** The channels of the calls running on this session now. */
  channels(): ClientChannel[] {
    return [...this.calls].map((c) => c.channel).filter((c) => c !== NO_CLIENT);
  }

  /**
   * The client `clientId` said its roots changed: forget what its calls here fetched. True when
   * one of its calls runs on this session (the upstream should then be told).
   */
  clientRootsChanged(clientId: string): boolean {
    let running = false;
    for (const call of this.calls) {
      if (call.channel.clientId !== clientId) continue;
      running = true;
      delete call.roots;
    }
    return running;
  }

  /**
   * Run `fn` (the requests of one call on this session) with `channel` reachable by the requests
   * the upstream sends meanwhile. `hold` pauses the call's upstream timeout while the client is
   * being asked.
   */
  async during<T>(
    channel: ClientChannel,
    options: AskOptions & { hold?: <U>(p: Promise<U>) => Promise<U> },
    fn: () => Promise<T>,
  ): Promise<T> {
    const entry: CallEntry = { channel, options, hold: options.hold ?? ((p) => p) };
    this.calls.add(entry);
    try {
      // Only a streamable HTTP session reads the context back (callOf). Elsewhere none is entered:
      // on Node 20 one AsyncLocalStorage run turns on promise hooks for every promise after it,
      // a cost on each call (issue 30).
      return await (this.options.relatedContext ? this.context.run(entry, fn) : fn());
    } finally {
      this.calls.delete(entry);
      if (this.servedTo === entry) this.servedTo = undefined;
    }
  }

  /**
   * Answer a request the upstream sent (the SDK client's handlers call this). Throws RelayError
   * when it cannot be relayed; the upstream gets it as a JSON-RPC error at once.
   */
  async answer(kind: RelayKind, params: Params | undefined, signal?: AbortSignal): Promise<Answer> {
    const call = this.callOf(kind);
    if (kind === "roots") {
      this.options.habits.readsRoots = true;
      const roots = call ? await this.rootsOf(call) : [...this.options.roots];
      this.served = JSON.stringify(roots);
      this.servedTo = call;
      this.settled = false;
      for (const wake of this.rootsAnswered.splice(0)) wake();
      if (call) this.logRoots(call);
      return { roots };
    }
    if (!call || call.channel === NO_CLIENT) {
      throw new RelayError(
        RELAY_ERROR.internal,
        `mcpx has no call running on this session to relay ${kind} to: a server may ask its client only while serving one of its calls.`,
      );
    }
    return this.relay(call, kind, params ?? {}, signal);
  }

  /**
   * Answer a modern upstream's input request for the call of `channel` (the call's own request
   * carried it, so there is nothing to attribute).
   */
  async answerFor(
    channel: ClientChannel,
    kind: RelayKind,
    params: Params | undefined,
  ): Promise<Answer> {
    const call = [...this.calls].find((c) => c.channel === channel);
    if (!call) throw new RelayError(RELAY_ERROR.internal, "the call is no longer running");
    if (kind === "roots") {
      const roots = await this.rootsOf(call);
      this.logRoots(call);
      return { roots };
    }
    return this.relay(call, kind, params ?? {}, undefined);
  }

  /**
   * Before a call on a legacy session of an upstream that reads roots: when this call's client
   * should see other roots than the session's upstream read (at initialize, say), it is told
   * they changed; a session that has not asked yet (just opened) is waited for. Either way the
   * call waits (bounded by ROOTS_ALIGN_MS) until the upstream asked and was answered, then until
   * it seems to have applied them (bounded by ROOTS_SETTLE_MS) and `settle` (a round trip).
   * Best effort: nothing in MCP says when a server has applied new roots. Run inside during().
   */
  async alignRoots(
    channel: ClientChannel,
    notify: () => Promise<void>,
    settle: () => Promise<void>,
  ): Promise<void> {
    if (!this.options.habits.readsRoots) return;
    const call = [...this.calls].find((c) => c.channel === channel);
    if (!call) return;
    const wanted = JSON.stringify(await this.rootsOf(call));
    // Read before this call: nothing to do. Read during it (a session just opened asks at
    // initialize): the upstream may still be applying them.
    if (wanted === this.served && this.servedTo !== call && this.settled) return;
    if (wanted !== this.served && !(await this.askAgain(notify))) return;
    try {
      // Our answer is on the wire by the next turn of the event loop. The upstream applies it on
      // its own time, with nothing on the wire to say when it is done: wait for a sign of life
      // (server-filesystem logs the folders it took), bounded, then a round trip.
      await new Promise((resolve) => setImmediate(resolve));
      await this.activity(ROOTS_SETTLE_MS);
      await settle();
    } catch (err) {
      this.log.debug(`roots not settled on ${this.options.server}: ${errorMessage(err)}`);
    }
    // Waited once for these roots: later calls do not wait again for a quiet upstream.
    this.settled = true;
  }

  /** The upstream showed a sign of life: a stderr line, a notification (see session.ts). */
  noteActivity(): void {
    this.settled = true;
    for (const wake of this.activityWaiters.splice(0)) wake();
  }

  /** Resolves at the upstream's next sign of life, or after `ms`. */
  private activity(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.activityWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Have the upstream ask for roots (again, when it read some before: `notify`; a fresh session
   * asks by itself), and wait until it did, bounded. False when it did not.
   */
  private async askAgain(notify: () => Promise<void>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    const asked = new Promise<void>((resolve) => {
      this.rootsAnswered.push(() => {
        answered = true;
        resolve();
      });
      timer = setTimeout(resolve, ROOTS_ALIGN_MS);
    });
    try {
      if (this.served !== undefined) await notify();
      await asked;
    } catch (err) {
      this.log.debug(`roots/list_changed not sent to ${this.options.server}: ${errorMessage(err)}`);
    } finally {
      clearTimeout(timer);
    }
    if (!answered)
      this.log.debug(`${this.options.server} did not ask for roots within ${ROOTS_ALIGN_MS} ms`);
    return answered;
  }

  /** The call a request belongs to, undefined when none runs; throws when it cannot be told. */
  private callOf(kind: RelayKind): CallEntry | undefined {
    const related = this.options.relatedContext ? this.context.getStore() : undefined;
    if (related && this.calls.has(related)) return related;
    if (this.calls.size <= 1) return this.calls.values().next().value;
    const callers = [...new Set(this.channels().map((c) => c.caller))].join(", ");
    this.log.info(
      `relay ${kind} from ${this.options.server}: refused, ${this.calls.size} calls share the session`,
      {
        server: this.options.server,
        kind,
        outcome: "unattributable",
      },
    );
    throw new RelayError(
      RELAY_ERROR.internal,
      `mcpx cannot tell which of the ${this.calls.size} calls running on this shared session (callers: ${callers}) sent this ${kind} request: the transport does not relate it to a call. Ask only while one call runs, or configure this server with "session": "caller" or "isolated".`,
    );
  }

  /** The roots `call` should see: its client's, when the session allows and the client has them. */
  private rootsOf(call: CallEntry): Promise<Root[]> {
    if (!this.clientGivesRoots(call)) return Promise.resolve([...this.options.roots]);
    call.roots ??= call
      .hold(call.channel.roots(call.options))
      .then((answer) => rootsIn(answer))
      .then((roots) => (call.channel.confined ? confineRoots(roots, this.options.roots) : roots))
      .catch((err: unknown) => {
        throw relayFailure("roots", call, err);
      });
    return call.roots;
  }

  private async relay(
    call: CallEntry,
    kind: "elicitation" | "sampling",
    params: Params,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const { channel } = call;
    const refusal = refusalFor(kind, params, channel.abilities);
    if (refusal) {
      this.logRelay(channel, kind, "unsupported");
      throw refusal;
    }
    this.logRelay(channel, kind, "relayed");
    const options: AskOptions = {
      timeoutMs: call.options.timeoutMs,
      ...((signal ?? call.options.signal) && {
        signal: anySignal(signal, call.options.signal),
      }),
    };
    try {
      return await call.hold(
        kind === "elicitation" ? channel.elicit(params, options) : channel.sample(params, options),
      );
    } catch (err) {
      throw relayFailure(kind, call, err);
    }
  }

  /** Roots relayed from the client are logged like any relay; configured ones only at debug. */
  private logRoots(call: CallEntry): void {
    if (this.clientGivesRoots(call))
      this.logRelay(call.channel, "roots", call.channel.confined ? "confined" : "relayed");
    else
      this.log.debug(
        `roots for ${call.channel.caller}'s call on ${this.options.server}: the configured ones`,
      );
  }

  /**
   * A confined client (an HTTP caller) of a server without configured roots gives none: there is
   * nothing to hold them within, so the upstream keeps what its operator started it with.
   */
  private clientGivesRoots(call: CallEntry): boolean {
    const { channel } = call;
    if (channel.confined && this.options.roots.length === 0) return false;
    return this.options.clientRoots && channel.abilities.roots;
  }

  private logRelay(channel: ClientChannel, kind: RelayKind, outcome: string): void {
    this.log.info(`relay ${kind} from ${this.options.server} to ${channel.caller}: ${outcome}`, {
      caller: channel.caller,
      server: this.options.server,
      kind,
      outcome,
    });
  }
}

/** Why a client cannot take this request, or undefined when it can. */
function refusalFor(
  kind: "elicitation" | "sampling",
  params: Params,
  abilities: ClientAbilities,
): RelayError | undefined {
  if (kind === "sampling") {
    return abilities.sampling
      ? undefined
      : new RelayError(
          RELAY_ERROR.methodNotFound,
          "The client of this call did not declare the sampling capability (relayed by mcpx).",
        );
  }
  if (!abilities.elicitForm && !abilities.elicitUrl) {
    return new RelayError(
      RELAY_ERROR.methodNotFound,
      "The client of this call did not declare the elicitation capability (relayed by mcpx).",
    );
  }
  const url = params.mode === "url";
  if (url ? abilities.elicitUrl : abilities.elicitForm) return undefined;
  return new RelayError(
    RELAY_ERROR.invalidParams,
    `The client of this call does not support ${url ? "URL" : "form"}-mode elicitation requests (relayed by mcpx).`,
  );
}

/** A failure of the client (or its transport) as the upstream sees it. */
function relayFailure(kind: RelayKind, call: CallEntry, err: unknown): RelayError {
  if (err instanceof RelayError) return err;
  return new RelayError(
    RELAY_ERROR.internal,
    `The client of this call did not answer the ${kind} request (relayed by mcpx, waited up to ${call.options.timeoutMs} ms): ${errorMessage(err)}`,
  );
}

/** The roots of a roots/list answer; a malformed one is the client's error. */
function rootsIn(answer: Answer): Root[] {
  const roots = answer.roots;
  if (!Array.isArray(roots) || !roots.every((r) => isRecord(r) && typeof r.uri === "string"))
    throw new RelayError(
      RELAY_ERROR.internal,
      "the client answered roots/list without a roots list",
    );
  return roots.map((r: Record<string, unknown>) => ({
    uri: r.uri as string,
    ...(typeof r.name === "string" && { name: r.name }),
  }));
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? present[0]! : AbortSignal.any(present);
}

/**
 * Every session's asker, so a client's notifications/roots/list_changed reaches the upstream
 * sessions serving its calls. Owned by the registry; askers leave when their session closes.
 */
export class RelayHub {
  private readonly sessions = new Map<SessionAsker, () => Promise<void>>();

  /** Track `asker`; `notify` sends notifications/roots/list_changed upstream. Returns the removal. */
  add(asker: SessionAsker, notify: () => Promise<void>): () => void {
    this.sessions.set(asker, notify);
    return () => this.sessions.delete(asker);
  }

  /** The client `clientId` changed its roots: tell the upstreams its calls are running on. */
  rootsChanged(clientId: string): number {
    let told = 0;
    for (const [asker, notify] of this.sessions) {
      if (!asker.clientRootsChanged(clientId)) continue;
      told += 1;
      void notify().catch(() => {
        /* the session ended meanwhile */
      });
    }
    return told;
  }
}
