/**
 * Tools a client cannot use (issue #23). mcpx declares sampling, elicitation and roots upstream so
 * that it can relay them, and some servers (server-everything among them) list a tool only to a
 * client that declared the capability it asks for. A downstream client that declared none of
 * them would see tools whose every call fails.
 *
 * Which tools depend on which capability is learned by looking, not guessed from names: after a
 * discovery, a session that declares none of the three lists the tools; when that list lacks
 * some, one session per capability declares all but that one, and the tools it lacks need it.
 * Servers that list the same tools to everyone (nearly all) cost one short extra session; the
 * looks run one at a time in the background, never on the path of a request or of startup.
 *
 * describe marks such a tool for a client that did not declare what it needs (it is not hidden:
 * a hidden tool must be answered as a missing one, and the model is better told why a tool it
 * may read about elsewhere will not work here).
 */
import { createHash } from "node:crypto";
import { systemClock, type Clock } from "../clock.js";
import { errorMessage } from "../errors.js";
import { canonicalJson } from "../json.js";
import type { Logger } from "../logger.js";
import { UI_EXTENSION, UI_MIME_TYPE, type ToolDef } from "../types.js";
import type { ClientAbilities } from "../upstream/channel.js";
import type { ClientFactory, ServerIdentity, UpstreamSession } from "../upstream/types.js";

/** A client capability a tool may need. */
export type ClientNeed = "sampling" | "elicitation" | "roots";

export const CLIENT_NEEDS: readonly ClientNeed[] = ["sampling", "elicitation", "roots"];

/** What mcpx declares upstream for each need (as src/upstream/session.ts does). */
const DECLARED: Record<ClientNeed, Record<string, unknown>> = {
  sampling: { sampling: {} },
  elicitation: { elicitation: { form: {}, url: {} } },
  roots: { roots: { listChanged: true } },
};

/** Tool name → the capabilities it is listed only with. Empty: every tool is for everyone. */
export type ToolNeeds = Record<string, ClientNeed[]>;

/**
 * A look's finding and what it was made on (`lookedAt`). Kept per group while mcpx runs, and in
 * the catalog cache with the catalog: a server that lists the same tools as when it was looked
 * at (the same name and version) is not looked at again, on a list_changed or at the next start.
 */
export interface KnownLook {
  of: string;
  needs: ToolNeeds;
}

/** What a look's finding depends on: the server's name and version, and the tools it lists. */
export function lookedAt(identity: ServerIdentity | undefined, tools: readonly ToolDef[]): string {
  const server = { name: identity?.name ?? null, version: identity?.version ?? null };
  return createHash("sha256").update(canonicalJson({ server, tools })).digest("hex").slice(0, 32);
}

/** What every look declares: MCP Apps is not a need (a tool without its UI still works). */
const ALWAYS = { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } } };

function declaring(needs: readonly ClientNeed[]): Record<string, unknown> {
  return Object.assign({}, ALWAYS, ...needs.map((n) => DECLARED[n])) as Record<string, unknown>;
}

/**
 * The needs of `tools` (the list mcpx's usual sessions see), learned with sessions of `open` that
 * declare fewer capabilities. Every session it opens is closed before it settles.
 */
export async function lookForNeeds(
  open: ClientFactory,
  tools: readonly ToolDef[],
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<{ needs: ToolNeeds; sessions: number }> {
  const listWith = async (needs: readonly ClientNeed[]): Promise<Set<string>> => {
    let session: UpstreamSession | undefined;
    try {
      session = await open(options.signal, { capabilities: declaring(needs) });
      const listed = await session.listTools(options);
      return new Set(listed.map((t) => t.name));
    } finally {
      await session?.close().catch(() => {
        /* a look's session: closing anyway */
      });
    }
  };
  const bare = await listWith([]);
  const missing = tools.filter((t) => !bare.has(t.name));
  if (missing.length === 0) return { needs: {}, sessions: 1 };
  const needs: ToolNeeds = {};
  for (const need of CLIENT_NEEDS) {
    const without = await listWith(CLIENT_NEEDS.filter((n) => n !== need));
    // Own keys only: a tool may be named `toString`.
    for (const t of missing)
      if (!without.has(t.name))
        (Object.hasOwn(needs, t.name) ? needs[t.name]! : (needs[t.name] = [])).push(need);
  }
  // Listed with all three, with none missing alone: it needs them together (or the server's
  // list varies for another reason); say all three rather than nothing.
  for (const t of missing) if (!Object.hasOwn(needs, t.name)) needs[t.name] = [...CLIENT_NEEDS];
  return { needs, sessions: 1 + CLIENT_NEEDS.length };
}

/**
 * What `needs` lacks for a client with `abilities`. Roots are not lacking when the server has
 * configured roots: mcpx answers them itself.
 */
export function lacking(
  needs: readonly ClientNeed[] | undefined,
  abilities: ClientAbilities | undefined,
  configuredRoots: boolean,
): ClientNeed[] {
  if (!needs) return [];
  return needs.filter((need) => {
    switch (need) {
      case "sampling":
        return abilities?.sampling !== true;
      case "elicitation":
        return abilities?.elicitForm !== true && abilities?.elicitUrl !== true;
      case "roots":
        return abilities?.roots !== true && !configuredRoots;
      default: {
        const never: never = need;
        throw new Error(`unknown need ${String(never)}`);
      }
    }
  });
}

/** `needs sampling, which this client did not declare`: what describe says of such a tool. */
export function lackingText(needs: readonly ClientNeed[]): string {
  const list =
    needs.length <= 1 ? needs.join("") : `${needs.slice(0, -1).join(", ")} and ${needs.at(-1)}`;
  return `needs ${list}, which this client did not declare`;
}

/** How long a look waits after its request (see NeedsLooks). */
export const LOOK_SETTLE_MS = 1_000;

/** One group's request for a look. */
interface LookRequest {
  name: string;
  open: ClientFactory;
  tools: readonly ToolDef[];
  of: string;
  timeoutMs: number;
  at: number;
  done: (look: KnownLook) => void;
}

/**
 * Looks run one at a time, for the registry: the newest request per group wins (a list that
 * changed again is looked at once more), and close() ends the one under way. A look starts
 * `LOOK_SETTLE_MS` after its request: servers that announce list_changed right after
 * initialize (server-everything lists more tools once it knows its client) are looked at once,
 * on the list they settle on, and the look's sessions stay out of a client's first calls.
 */
export class NeedsLooks {
  private readonly queue = new Map<string, LookRequest>();
  private running: Promise<void> | undefined;
  private readonly stop = new AbortController();
  /** Group key → its last finding (a look's, or the catalog cache's). */
  private readonly known = new Map<string, KnownLook>();

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** `key`'s finding as the catalog cache kept it. */
  remember(key: string, look: KnownLook): void {
    this.known.set(key, look);
  }

  /** `key`'s last finding, whatever tools it was made on. */
  last(key: string): KnownLook | undefined {
    return this.known.get(key);
  }

  /** `key`'s finding, if it was made on `of`. */
  knownFor(key: string, of: string): KnownLook | undefined {
    const look = this.known.get(key);
    return look?.of === of ? look : undefined;
  }

  /**
   * Look at `key`'s tools with `open` (`of`: `lookedAt` of them), then hand the finding to
   * `done`; with no session when the last finding was made on the same tools.
   */
  request(
    key: string,
    name: string,
    open: ClientFactory,
    tools: readonly ToolDef[],
    of: string,
    timeoutMs: number,
    done: (look: KnownLook) => void,
  ): void {
    if (this.stop.signal.aborted) return;
    // The same tools asked about again (a list_changed that changed nothing): the wait goes on
    // from the first ask, so a server that repeats it every second is still looked at.
    const waiting = this.queue.get(key);
    const at = waiting?.of === of ? waiting.at : this.clock.now();
    // Re-inserted: the oldest request goes first.
    this.queue.delete(key);
    this.queue.set(key, { name, open, tools, of, timeoutMs, at, done });
    this.running ??= this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stop.signal.aborted) {
        const [key, request] = this.queue.entries().next().value ?? [];
        if (key === undefined || request === undefined) break;
        const wait = request.at + LOOK_SETTLE_MS - this.clock.now();
        if (wait > 0) {
          await this.delay(wait);
          continue; // A newer request may have taken its place meanwhile.
        }
        this.queue.delete(key);
        await this.look(key, request);
      }
    } finally {
      this.running = undefined;
    }
  }

  private async look(key: string, r: LookRequest): Promise<void> {
    const started = performance.now();
    try {
      const known = this.knownFor(key, r.of);
      if (known) {
        this.log.info(`${r.name}: ${counted(known.needs)} (as looked before, on the same tools)`);
        r.done(known);
        return;
      }
      const signal = AbortSignal.any([this.stop.signal, AbortSignal.timeout(r.timeoutMs)]);
      const found = await lookForNeeds(r.open, r.tools, { timeoutMs: r.timeoutMs, signal });
      this.log.info(
        `${r.name}: ${counted(found.needs)} (looked in ${Math.round(performance.now() - started)} ms, ${found.sessions} session${found.sessions === 1 ? "" : "s"})`,
      );
      if (this.stop.signal.aborted) return;
      const look = { of: r.of, needs: found.needs };
      // The group's tools changed while it looked: the finding is of a list it no longer has
      // (the newer request, queued, looks at the one it has).
      const newer = this.queue.get(key);
      if (newer && newer.of !== r.of) return;
      this.known.set(key, look);
      r.done(look);
    } catch (err) {
      if (!this.stop.signal.aborted)
        this.log.debug(`${r.name}: which tools need client capabilities: ${errorMessage(err)}`);
    }
  }

  /** `ms` on the clock, or until close(). */
  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.stop.signal;
      const done = () => {
        this.clock.clearTimeout(handle);
        stop.removeEventListener("abort", done);
        resolve();
      };
      const handle = this.clock.setTimeout(done, ms);
      stop.addEventListener("abort", done, { once: true });
    });
  }

  /** End the look under way (its session closes) and drop the queued ones. */
  async close(): Promise<void> {
    this.stop.abort();
    this.queue.clear();
    await this.running;
  }
}

/** `3 tools need client capabilities`. */
function counted(needs: ToolNeeds): string {
  const count = Object.keys(needs).length;
  return `${count} tool${count === 1 ? "" : "s"} need${count === 1 ? "s" : ""} client capabilities`;
}
