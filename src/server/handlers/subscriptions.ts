/**
 * Resource subscriptions and list changes, downstream. A 2025-era client subscribes with
 * resources/subscribe (handled here); a 2026-07-28 one names URIs in its subscriptions/listen
 * filter, which the SDK's listen router serves: mcpx reads the filter before it (stdio.ts,
 * http-modern.ts). Either way each URI is subscribed upstream on the server that owns it in the
 * caller's view (counted across clients by the registry), and an upstream's
 * notifications/resources/updated reaches exactly the clients subscribed to that URI whose view
 * holds that server. Prompt and resource list_changed reach the clients whose lists changed.
 */
import type { Server } from "@modelcontextprotocol/server";
import { errorMessage } from "../../errors.js";
import type { CatalogView } from "../../registry/view.js";
import { ClientSubscriptions } from "../client-subscriptions.js";
import type { ProxyContext, SessionMemory } from "../context.js";
import { listVersions, requestView, type HandlerEnv } from "./env.js";

/** The key of subscriptions made with resources/subscribe (listen streams use their id). */
export const SUBSCRIBE_KEY = "resources/subscribe";

/** resources/subscribe and resources/unsubscribe (2025 era). */
export function registerSubscriptionHandlers(server: Server, env: HandlerEnv): void {
  server.setRequestHandler("resources/subscribe", async (request, req) => {
    const { view } = requestView(env, req);
    env.memory.subscriptions ??= new ClientSubscriptions(env.ctx);
    await env.memory.subscriptions.add(SUBSCRIBE_KEY, request.params.uri, view);
    await env.memory.onSubscription?.(request.params.uri, true);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", async (request) => {
    env.memory.subscriptions?.remove(SUBSCRIBE_KEY, request.params.uri);
    await env.memory.onSubscription?.(request.params.uri, false);
    return {};
  });
}

/** The resource URIs a subscriptions/listen request asks updates for, if it is one. */
export function listenedResources(message: unknown): { id: string; uris: string[] } | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const m = message as { method?: unknown; id?: unknown; params?: unknown };
  if (m.method !== "subscriptions/listen") return undefined;
  if (typeof m.id !== "string" && typeof m.id !== "number") return undefined;
  const filter = (m.params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)
    ?.notifications;
  const uris = filter?.resourceSubscriptions;
  if (!Array.isArray(uris) || uris.length === 0) return undefined;
  return { id: `listen:${m.id}`, uris: uris.filter((u): u is string => typeof u === "string") };
}

/** How long a listen stream's acknowledgement waits for its upstream subscriptions. */
const LISTEN_SUBSCRIBE_WAIT_MS = 5_000;

/**
 * Subscribe `subs` to every URI of a listen request, in `view`. A URI that no server has, or
 * whose server offers no subscriptions, is skipped (the stream simply never carries it).
 * Resolves once the upstreams took the subscriptions (or after a bound): the stream is
 * acknowledged after that, so an update that follows the acknowledgement is not lost.
 */
export async function subscribeListen(
  ctx: ProxyContext,
  subs: ClientSubscriptions,
  listen: { id: string; uris: string[] },
  view: CatalogView,
): Promise<void> {
  const all = Promise.all(
    listen.uris.map((uri) =>
      subs
        .add(listen.id, uri, view)
        .catch((err: unknown) =>
          ctx.logger.debug(`listen: not subscribing to ${uri}: ${errorMessage(err)}`),
        ),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, LISTEN_SUBSCRIBE_WAIT_MS);
  });
  await Promise.race([all, bound]);
  clearTimeout(timer);
}

/** What a connection or session sends when its lists or subscribed resources change. */
export interface ClientSink {
  promptsChanged(): Promise<void>;
  resourcesChanged(): Promise<void>;
  resourceUpdated(uri: string): Promise<void>;
}

/** The sink of an SDK server instance (stdio; a 2025-era session's GET stream). */
export function serverSink(server: Server): ClientSink {
  return {
    promptsChanged: () => server.sendPromptListChanged(),
    resourcesChanged: () => server.sendResourceListChanged(),
    resourceUpdated: (uri) => server.sendResourceUpdated({ uri }),
  };
}

/**
 * Tell one client what changed for it: prompts or resources list_changed when its lists
 * differ from the ones it last listed (or had when this watch began), and resources/updated
 * for the URIs it holds (in `memory.subscriptions`) of servers its view still has. Returns
 * the unsubscribe.
 */
export function watchClient(
  ctx: ProxyContext,
  memory: SessionMemory,
  sink: ClientSink,
  callerOf: () => string,
): () => void {
  const log = (what: string) => (err: unknown) =>
    ctx.logger.debug(`${what} not sent: ${errorMessage(err)}`);
  memory.lists ??= listVersions(ctx.views.forCaller(callerOf()));
  const stopLists = ctx.views.onChange(() => {
    const before = memory.lists;
    const now = listVersions(ctx.views.forCaller(callerOf()));
    memory.lists = now;
    if (before?.prompts !== now.prompts)
      void sink.promptsChanged().catch(log("prompts list_changed"));
    if (before?.resources !== now.resources)
      void sink.resourcesChanged().catch(log("resources list_changed"));
  });
  const stopUpdates = ctx.views.onResourceUpdated((server, uri) => {
    if (!memory.subscriptions?.wants(server, uri)) return;
    // Its owner in the caller's view now (a reload may have hidden the server).
    if (ctx.views.forCaller(callerOf()).resourceOwner(uri)?.name !== server) return;
    void sink.resourceUpdated(uri).catch(log("resources/updated"));
  });
  return () => {
    stopLists();
    stopUpdates();
  };
}
