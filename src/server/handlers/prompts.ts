/**
 * prompts/list and prompts/get: the prompts of the caller's servers, each listed as
 * `server__prompt` (clients show them as slash commands), got from the upstream that owns them
 * with the client's arguments, and its messages returned unchanged.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type GetPromptResult,
  type Prompt,
  type Server,
} from "@modelcontextprotocol/server";
import { listVersions, relayError, requestTrace, startedView, type HandlerEnv } from "./env.js";

export function registerPromptHandlers(server: Server, env: HandlerEnv): void {
  server.setRequestHandler("prompts/list", async (request, req) => {
    const { view } = await startedView(env, req);
    const page = env
      .cursors()
      .page(
        "prompts",
        view.prompts(),
        view.profile.name,
        request.params?.cursor,
        env.ctx.config.pageSize,
      );
    // What this client now holds: list_changed compares against it.
    env.memory.lists = listVersions(view);
    return Object.assign(
      { prompts: page.items as Prompt[] },
      page.nextCursor !== undefined && { nextCursor: page.nextCursor },
      env.hints(view),
    );
  });

  server.setRequestHandler("prompts/get", async (request, req) => {
    const { caller, clientKey, view } = await startedView(env, req);
    const name = request.params.name;
    // Looked up in the view's own name → (server, prompt) map: never split apart.
    const entry = view.prompt(name);
    const owner = entry && view.server(entry.server);
    if (!entry || !owner) {
      // A hidden prompt is answered exactly like one that does not exist.
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown prompt "${name}". prompts/list lists the prompts mcpx offers (as server__prompt).`,
      );
    }
    const end = await env.ctx.executor.relay(
      owner,
      `prompts/get ${name}`,
      {
        caller,
        clientKey,
        view,
        signal: req.mcpReq.signal,
        trace: requestTrace(env, req, view, request.params._meta),
      },
      (session, options) => session.getPrompt(entry.prompt.name, request.params.arguments, options),
    );
    if ("failure" in end) throw relayError(end.failure);
    return end.result as GetPromptResult;
  });
}
