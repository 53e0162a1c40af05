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
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { UI_EXTENSION, UI_MIME_TYPE, type ToolDef } from "../types.js";
import type { ClientAbilities } from "../upstream/channel.js";
import type { ClientFactory, UpstreamSession } from "../upstream/types.js";

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
    for (const t of missing) if (!without.has(t.name)) (needs[t.name] ??= []).push(need);
  }
  // Listed with all three, with none missing alone: it needs them together (or the server's
  // list varies for another reason); say all three rather than nothing.
  for (const t of missing) needs[t.name] ??= [...CLIENT_NEEDS];
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

/**
 * Looks run one at a time, for the registry: the newest request per group wins (a list that
 * changed again is looked at once more), and close() ends the one under way.
 */
export class NeedsLooks {
  private readonly queue = new Map<string, () => Promise<void>>();
  private running: Promise<void> | undefined;
  private readonly stop = new AbortController();

  constructor(private readonly log: Logger) {}

  /** Look at `key`'s tools with `open`, then hand the needs to `done`. */
  request(
    key: string,
    name: string,
    open: ClientFactory,
    tools: readonly ToolDef[],
    timeoutMs: number,
    done: (needs: ToolNeeds) => void,
  ): void {
    if (this.stop.signal.aborted) return;
    this.queue.set(key, async () => {
      const started = performance.now();
      const signal = AbortSignal.any([this.stop.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        const { needs, sessions } = await lookForNeeds(open, tools, { timeoutMs, signal });
        const count = Object.keys(needs).length;
        this.log.info(
          `${name}: ${count} tool${count === 1 ? "" : "s"} need client capabilities (looked in ${Math.round(performance.now() - started)} ms, ${sessions} session${sessions === 1 ? "" : "s"})`,
        );
        if (!this.stop.signal.aborted) done(needs);
      } catch (err) {
        if (!this.stop.signal.aborted)
          this.log.debug(`${name}: which tools need client capabilities: ${errorMessage(err)}`);
      }
    });
    this.running ??= this.drain();
  }

  private async drain(): Promise<void> {
    for (let next = this.first(); next; next = this.first()) await next();
    this.running = undefined;
  }

  private first(): (() => Promise<void>) | undefined {
    const [key, look] = this.queue.entries().next().value ?? [];
    if (key === undefined) return undefined;
    this.queue.delete(key);
    return look;
  }

  /** End the look under way (its session closes) and drop the queued ones. */
  async close(): Promise<void> {
    this.stop.abort();
    this.queue.clear();
    await this.running;
  }
}
