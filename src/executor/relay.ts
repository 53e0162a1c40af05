/**
 * Requests other than tool calls that mcpx relays to one upstream: prompts/get,
 * completion/complete, resources/read. They take a session as calls do (the server's policy,
 * its timeout, the caller's cancellation, drained at shutdown) and are logged with their caller.
 */
import type { RequestOptions, UpstreamSession } from "../upstream/types.js";
import type { ServerState } from "../registry/registry.js";
import type { Admission } from "./admission.js";
import type { CallContext } from "./context.js";
import { relayFailure, SHUTTING_DOWN, type RelayFailure } from "./failures.js";
import { unavailable } from "./resolve.js";
import { relaySpans, spanAttributes } from "./trace.js";
import type { CallTracer } from "./context.js";

/** How a relayed request ended: the upstream's result, or why there is none. */
export type RelayEnd<T> = { result: T } | { failure: RelayFailure };

/** Run `run` on a session of `server`; every failure comes back as data, never thrown. */
export async function relayRequest<T>(
  admission: Admission,
  server: ServerState,
  what: string,
  ctx: CallContext,
  run: (session: UpstreamSession, options: RequestOptions) => Promise<T>,
  tracer?: CallTracer,
): Promise<RelayEnd<T>> {
  if (!admission.accepting) return { failure: { message: SHUTTING_DOWN, outcome: "cancelled" } };
  const started = performance.now();
  // Nothing is built for traces while they are off (tracer undefined).
  const spans = relaySpans(tracer, what, server.name, ctx);
  const redact = (t: string) => admission.log.redact(t);
  const catalog = admission.catalog(ctx);
  const end = await admission.track(ctx, async (signal): Promise<RelayEnd<T>> => {
    const stopped = await admission.untilStarted(server.name, catalog, signal);
    if (stopped) return { failure: { message: stopped.text, outcome: stopped.outcome } };
    const current = catalog.server(server.name) ?? server;
    if (current.status === "down") {
      return { failure: { message: unavailable(current, redact), outcome: "refused" } };
    }
    const acquired = await admission.lease(current, what, { ...ctx, signal });
    if ("failure" in acquired) {
      const { text, outcome } = acquired.failure;
      return { failure: { message: text, outcome } };
    }
    const timeoutMs = current.config.timeoutMs;
    try {
      const options = {
        timeoutMs,
        signal,
        ...(ctx.client && { client: ctx.client }),
        ...(spans && { traceparent: spans.upstream.traceparent }),
      };
      return { result: await run(acquired.lease.session, options) };
    } catch (err) {
      if (signal.aborted)
        return { failure: { message: `${what} cancelled.`, outcome: "cancelled" } };
      return { failure: relayFailure(current.name, what, err, timeoutMs, redact) };
    } finally {
      acquired.lease.release();
    }
  });
  const outcome = "failure" in end ? end.failure.outcome : "ok";
  if (spans) {
    const method = what.split(" ")[0];
    const attributes = {
      ...spanAttributes(ctx, outcome, { server: server.name }, undefined),
      method,
    };
    spans.upstream.end(attributes);
    spans.request.end(attributes);
  }
  const caller = ctx.caller ?? "default";
  admission.log.info(
    `${what} by ${caller}: ${outcome} in ${(performance.now() - started).toFixed(1)} ms`,
    { caller, server: server.name, request: what, outcome },
  );
  return end;
}
