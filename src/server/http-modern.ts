/**
 * 2026-07-28 requests over HTTP: stateless, any request on any replica, nothing kept per client.
 * The SDK entry (`createMcpHandler`) builds a fresh server per request. There is one entry per
 * profile, so that `subscriptions/listen` streams are grouped by what their callers see and a
 * catalog change notifies exactly the listeners whose view changed.
 */
import { createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server";
import { errorMessage } from "../errors.js";
import { ClientSubscriptions } from "./client-subscriptions.js";
import type { ProxyContext } from "./context.js";
import { listVersions } from "./handlers/env.js";
import { listenedResources, subscribeListen } from "./handlers/subscriptions.js";
import { whenEnded } from "./http-messages.js";
import { createDownstream, DEFAULT_CALLER } from "./mcp-server.js";
import { describeTool } from "./tools/describe.js";

interface ProfileEntry {
  handler: McpHttpHandler;
  /** A caller of this profile, to read its view with; the last one routed here. */
  caller: string;
  /** The describe description listeners were last told about. */
  shown: string;
  /** The prompt and resource list versions listeners were last told about. */
  lists: { prompts: string; resources: string };
  /** The resource subscriptions of this profile's open listen streams. */
  streams: Set<ClientSubscriptions>;
}

/** The modern HTTP entries, one per profile (bounded: profiles come from the config). */
export class ModernEndpoint {
  private readonly entries = new Map<string, ProfileEntry>();
  private callers: string;
  private readonly unsubscribe: () => void;
  private readonly unwatchUpdates: () => void;

  constructor(private readonly ctx: ProxyContext) {
    this.callers = JSON.stringify(ctx.config.callers);
    this.unsubscribe = ctx.views.onChange(() => this.changed());
    this.unwatchUpdates = ctx.views.onResourceUpdated((server, uri) => this.updated(server, uri));
  }

  /**
   * Serve `request` through the entry of `caller`'s profile. A listen stream that names
   * resources has them subscribed upstream while it lasts (the SDK's router serves the stream
   * and filters updates by URI; which profile hears of which server is decided here).
   */
  async fetch(
    request: Request,
    options: Parameters<McpHttpHandler["fetch"]>[1],
    caller: string | undefined,
  ): Promise<Response> {
    const who = caller ?? DEFAULT_CALLER;
    const entry = this.entryFor(who);
    const listen = listenedResources(options?.parsedBody);
    if (!listen) return entry.handler.fetch(request, options);
    const subs = new ClientSubscriptions(this.ctx);
    entry.streams.add(subs);
    await subscribeListen(this.ctx, subs, listen, this.ctx.views.forCaller(who));
    const release = () => {
      entry.streams.delete(subs);
      subs.clear();
    };
    let response: Response;
    try {
      response = await entry.handler.fetch(request, options);
    } catch (err) {
      release();
      throw err;
    }
    if (response.status !== 200 || response.body === null) {
      release();
      return response;
    }
    return whenEnded(response, release);
  }

  /** End every listen stream and in-flight exchange (shutdown). */
  async close(): Promise<void> {
    this.unsubscribe();
    this.unwatchUpdates();
    for (const entry of this.entries.values()) for (const subs of entry.streams) subs.clear();
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
      entry = {
        handler,
        caller,
        shown: this.description(caller),
        lists: listVersions(this.ctx.views.forCaller(caller)),
        streams: new Set(),
      };
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
      const lists = listVersions(this.ctx.views.forCaller(entry.caller));
      if (remapped || lists.prompts !== entry.lists.prompts) entry.handler.notify.promptsChanged();
      if (remapped || lists.resources !== entry.lists.resources)
        entry.handler.notify.resourcesChanged();
      entry.lists = lists;
      const now = this.description(entry.caller);
      if (now === entry.shown && !remapped) continue;
      entry.shown = now;
      entry.handler.notify.toolsChanged();
    }
  }

  /** An upstream's resources/updated: to the streams of profiles that subscribed to it there. */
  private updated(server: string, uri: string): void {
    for (const entry of this.entries.values()) {
      if (![...entry.streams].some((subs) => subs.wants(server, uri))) continue;
      if (this.ctx.views.forCaller(entry.caller).resourceOwner(uri)?.name !== server) continue;
      entry.handler.notify.resourceUpdated(uri);
    }
  }
}
