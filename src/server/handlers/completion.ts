/**
 * completion/complete: a prompt argument (`ref/prompt`, by its `server__prompt` name) or a
 * template variable (`ref/resource`, by its template) is completed by the upstream that owns it.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CompleteResult,
  type Server,
} from "@modelcontextprotocol/server";
import type { CompleteParams } from "../../types.js";
import { relayError, requestTrace, requestView, type HandlerEnv } from "./env.js";

/** What a server that offers no completions completes anything with. */
const NOTHING: CompleteResult = { completion: { values: [], hasMore: false } };

export function registerCompletionHandler(server: Server, env: HandlerEnv): void {
  server.setRequestHandler("completion/complete", async (request, req) => {
    const { caller, clientKey, view } = requestView(env, req);
    const params = request.params as CompleteParams;
    const { ref } = params;
    let target: { server: string; params: CompleteParams } | undefined;
    if (ref.type === "ref/prompt") {
      // The upstream knows the prompt by its own name, found in the view's map.
      const entry = view.prompt(ref.name);
      if (entry)
        target = {
          server: entry.server,
          params: { ...params, ref: { ...ref, name: entry.prompt.name } },
        };
    } else if (ref.type === "ref/resource") {
      const owner = view.templateOwner(ref.uri) ?? view.resourceOwner(ref.uri);
      if (owner) target = { server: owner.name, params };
    }
    const owner = target && view.server(target.server);
    if (!target || !owner) {
      const what =
        ref.type === "ref/prompt" ? `prompt "${ref.name}"` : `resource template ${ref.uri}`;
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown ${what}: completion/complete completes the arguments of prompts from prompts/list and the variables of templates from resources/templates/list.`,
      );
    }
    if (owner.identity?.capabilities.completions === undefined) return NOTHING;
    const forwarded = target.params;
    const end = await env.ctx.executor.relay(
      owner,
      `completion/complete ${ref.type === "ref/prompt" ? ref.name : ref.uri}`,
      {
        caller,
        clientKey,
        view,
        signal: req.mcpReq.signal,
        trace: requestTrace(env, req, view, request.params._meta),
      },
      (session, options) => session.complete(forwarded, options),
    );
    if ("failure" in end) {
      // The upstream declared completions but failed this one (method not found, invalid params,
      // its own error, no answer in time): a note on it, and the answer of a server without
      // completions. Not reached, cancelled or busy stays an error for this request.
      if (end.failure.outcome !== "failed") throw relayError(end.failure);
      env.ctx.registry.noteOptional(owner.name, "completion/complete", end.failure.message);
      return NOTHING;
    }
    env.ctx.registry.noteOptional(owner.name, "completion/complete", undefined);
    return end.result;
  });
}
