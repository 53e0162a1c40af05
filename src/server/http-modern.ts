/**
 * 2026-07-28 requests over HTTP: stateless, any request on any replica, nothing kept per client.
 * The SDK entry (`createMcpHandler`) builds a fresh server per request. There is one entry per
 * profile, so that `subscriptions/listen` streams are grouped by what their callers see and a
 * catalog change notifies exactly the listeners whose view changed.
 */
import { createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import type { ProxyContext } from "./context.js";
import { createDownstream, DEFAULT_CALLER } from "./mcp-server.js";
import { describeTool } from "./tools/describe.js";

interface ProfileEntry {
  handler: McpHttpHandler;
  /** A caller of this profile, to read its view with; the last one routed here. */
  caller: string;
  /** The describe description listeners were last told about. */
  shown: string;
}

/** The modern HTTP entries, one per profile (bounded: profiles come from the config). */
export class ModernEndpoint {
  private readonly entries = new Map<string, ProfileEntry>();
  private callers: string;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: ProxyContext) {
    this.callers = JSON.stringify(ctx.config.callers);
    this.unsubscribe = ctx.views.onChange(() => this.changed());
  }

  /** Serve `request` through the entry of `caller`'s profile. */
  fetch(
    request: Request,
    options: Parameters<McpHttpHandler["fetch"]>[1],
    caller: string | undefined,
  ): Promise<Response> {
    return this.entryFor(caller ?? DEFAULT_CALLER).handler.fetch(request, options);
  }

  /** End every listen stream and in-flight exchange (shutdown). */
  async close(): Promise<void> {
    this.unsubscribe();
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(all.map((e) => e.handler.close()));
  }

  private entryFor(caller: string): ProfileEntry {
    const profile = this.ctx.views.profileFor(caller).name;
    let entry = this.entries.get(profile);
    if (!entry) {
      const handler = createMcpHandler(({ era }) => createDownstream(this.ctx, { era }), {
        legacy: "reject",
        onerror: (err) => this.ctx.logger.debug(`HTTP (2026-07-28): ${errorMessage(err)}`),
      });
      entry = { handler, caller, shown: this.description(caller) };
      this.entries.set(profile, entry);
    }
    entry.caller = caller;
    return entry;
  }

  private description(caller: string): string {
    return describeTool.description(this.ctx.views.forCaller(caller));
  }

  /**
   * After a catalog or config change: notify the listeners of each profile whose description
   * changed. A reload that maps callers to other profiles notifies every listener: a stream
   * stays with the profile its caller had when it opened.
   */
  private changed(): void {
    const callers = JSON.stringify(this.ctx.config.callers);
    const remapped = callers !== this.callers;
    this.callers = callers;
    for (const entry of this.entries.values()) {
      // A profile a reload removed has its callers remapped too, so it is notified below.
      const now = this.description(entry.caller);
      if (now === entry.shown && !remapped) continue;
      entry.shown = now;
      entry.handler.notify.toolsChanged();
    }
  }
}
