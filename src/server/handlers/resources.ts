/**
 * resources/list, resources/templates/list and resources/read, aggregated over the caller's
 * servers. URIs stay exactly as the upstreams gave them: a URI two servers list is the first
 * one's here (the clash is logged; the `resources` meta-tool reaches both with `server`). MCP
 * Apps' `ui://` URIs are the exception: `ui://<server>/<rest>` (registry/apps.ts).
 */
import {
  ResourceNotFoundError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType,
  type Server,
} from "@modelcontextprotocol/server";
import { appContents } from "../../registry/apps.js";
import { listVersions, relayError, requestTrace, startedView, type HandlerEnv } from "./env.js";

export function registerResourceHandlers(server: Server, env: HandlerEnv): void {
  const { ctx } = env;

  server.setRequestHandler("resources/list", async (request, req) => {
    const { view } = await startedView(env, req);
    const list = view.resources();
    const page = env
      .cursors()
      .page("resources", list, view.profile.name, request.params?.cursor, ctx.config.pageSize);
    // What this client now holds: list_changed compares against it.
    env.memory.lists = listVersions(view);
    return Object.assign(
      { resources: page.items as Resource[] },
      page.nextCursor !== undefined && { nextCursor: page.nextCursor },
      env.hints(view),
    );
  });

  server.setRequestHandler("resources/templates/list", async (request, req) => {
    const { view } = await startedView(env, req);
    const list = view.templates();
    const page = env
      .cursors()
      .page("templates", list, view.profile.name, request.params?.cursor, ctx.config.pageSize);
    return Object.assign(
      { resourceTemplates: page.items as ResourceTemplateType[] },
      page.nextCursor !== undefined && { nextCursor: page.nextCursor },
      env.hints(view),
    );
  });

  server.setRequestHandler("resources/read", async (request, req) => {
    const { caller, clientKey, view } = await startedView(env, req);
    const uri = request.params.uri;
    // The server whose entry the list shows, else the first whose template matches; an MCP
    // Apps `ui://<server>/<rest>` is that server's `ui://<rest>` (registry/apps.ts).
    const target = view.resourceTarget(uri);
    if (!target) {
      throw new ResourceNotFoundError(
        uri,
        `Resource ${uri} not found: no server of this mcpx lists it or has a template that matches it. resources/list and resources/templates/list show what there is.`,
      );
    }
    const { server: owner } = target;
    const end = await ctx.executor.relay(
      owner,
      `resources/read ${uri}`,
      {
        caller,
        clientKey,
        view,
        signal: req.mcpReq.signal,
        trace: requestTrace(env, req, view, request.params._meta),
      },
      (session, options) => session.readResource(target.uri, options),
    );
    if ("failure" in end) throw relayError(end.failure);
    // Contents keep their `_meta` (an app's csp and permissions); `ui://` URIs as listed.
    return appContents(owner.name, end.result) as ReadResourceResult;
  });
}
