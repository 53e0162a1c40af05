/**
 * How a request gets to an upstream, whatever it is (a call, a script, a relayed prompt,
 * completion or read): taken only while mcpx accepts work, tracked so drain() can end it, waiting
 * for a server still starting, then holding a leased session. The executor and its steps
 * (relay.ts, script.ts) share this one object instead of each reaching back into the executor.
 */
import type { Logger } from "../logger.js";
import type { Lease, SessionPool } from "../registry/pool.js";
import type { Registry, ServerState } from "../registry/registry.js";
import type { CatalogSource } from "../registry/view.js";
import type { CallContext, NoSession } from "./context.js";
import { noSession, SHUTTING_DOWN } from "./failures.js";
import { InFlight } from "./inflight.js";

export class Admission {
  /** Calls and reads under way, and the drain that ends them. */
  private readonly inflight: InFlight;

  constructor(
    private readonly registry: Registry,
    readonly log: Logger,
  ) {
    this.inflight = new InFlight(log);
  }

  /** False once drain() began: new work is refused. */
  get accepting(): boolean {
    return this.inflight.accepting;
  }

  /** What `ctx` may see: its view, else the whole registry. */
  catalog(ctx: CallContext): CatalogSource {
    return ctx.view ?? this.registry;
  }

  /** Run `work` with a signal that the caller's signal and drain() can both abort. */
  track<T>(ctx: CallContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.inflight.track(ctx.signal, work, ctx.controller);
  }

  /**
   * Stop taking work, give what is under way `graceMs` to finish, then cancel the rest. Resolves
   * once everything has answered (cancelled work answers at once).
   */
  drain(graceMs: number): Promise<void> {
    return this.inflight.drain(graceMs);
  }

  /**
   * A server the caller can see that is still starting is waited for (its discovery is bounded
   * by discoveryTimeout), so a call made right after mcpx came up runs instead of failing.
   * Returns what to answer when the caller cancelled meanwhile.
   */
  async untilStarted(
    name: string | undefined,
    catalog: CatalogSource,
    signal: AbortSignal | undefined,
  ): Promise<NoSession | undefined> {
    if (name === undefined || catalog.server(name)?.status !== "starting") return undefined;
    try {
      await this.registry.started(name, signal);
      // Released by the shutdown (the upstreams never started): nothing may start them now.
      return this.accepting ? undefined : { text: SHUTTING_DOWN, outcome: "cancelled" };
    } catch {
      return { text: `Cancelled while server "${name}" was starting.`, outcome: "cancelled" };
    }
  }

  /**
   * Take a session of `server` for one request (`what` names it in messages), or say why there
   * is none: cancelled while waiting, every session busy, a pool retired by a reload, shutdown,
   * or the upstream failing to start.
   */
  async lease(
    server: ServerState,
    what: string,
    ctx: CallContext,
  ): Promise<{ lease: Lease } | { failure: NoSession }> {
    try {
      const lease = await this.pool(server.name).acquire({
        caller: ctx.caller ?? "default",
        ...(ctx.clientKey !== undefined && { client: ctx.clientKey }),
        timeoutMs: server.config.timeoutMs,
        ...(ctx.signal && { signal: ctx.signal }),
      });
      return { lease };
    } catch (err) {
      return { failure: noSession(server, what, err, ctx.signal, (t) => this.log.redact(t)) };
    }
  }

  private pool(server: string): SessionPool {
    const pool = this.registry.pool(server);
    if (!pool) throw new Error(`no session pool for ${server}`);
    return pool;
  }
}
