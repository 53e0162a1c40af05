/**
 * `confirm`: tools a person must allow before each call. Clients approve tools one by one, but
 * through mcpx every upstream tool is one `call`: a user who always allows `call` would allow
 * everything. A profile's `confirm` list names the tools that still ask, through elicitation.
 */
import type { Profile } from "../config/load.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ClientChannel } from "../upstream/channel.js";
import type { ServerState } from "../registry/registry.js";
import { globToRegExp } from "../registry/profiles.js";
import { textResult, type ToolDef, type ToolResult } from "../types.js";
import type { CallContext } from "./context.js";

/** The `confirm` entry meaning every tool annotated `destructiveHint: true`. */
export const DESTRUCTIVE = "destructive";

/** How many characters of the arguments the question shows. */
const ARGUMENTS_SHOWN = 300;

/** What the person (or the client) decided; logged for every confirmed call. */
export type ConfirmDecision = "accepted" | "declined" | "cancelled" | "unsupported" | "failed";

/** The entry of `profile.confirm` that covers `server.tool`, or undefined when none does. */
export function confirmEntry(
  profile: Profile | undefined,
  server: string,
  tool: ToolDef,
): string | undefined {
  const ref = `${server}.${tool.name}`;
  return profile?.confirm?.find((entry) =>
    entry === DESTRUCTIVE
      ? tool.annotations?.destructiveHint === true
      : entry.includes("*")
        ? globToRegExp(entry).test(ref)
        : entry === ref,
  );
}

export interface ConfirmRequest {
  profile: Profile;
  /** The `confirm` entry that covers the call. */
  entry: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  caller: string;
  client: ClientChannel | undefined;
  /** How long the person has to answer. */
  timeoutMs: number;
  signal?: AbortSignal;
  logger: Logger;
}

/**
 * Ask the person whether to run the call. Undefined means go ahead; otherwise the isError result
 * the call answers with instead. Every decision is logged (never the arguments).
 */
export async function confirmCall(request: ConfirmRequest): Promise<ToolResult | undefined> {
  const { server, tool, client, logger } = request;
  const ref = `${server}.${tool}`;
  let decision: ConfirmDecision;
  let failure = "";
  if (!client?.abilities.elicitForm) decision = "unsupported";
  else {
    try {
      const answer = await client.elicit(
        {
          mode: "form",
          message: `${ref} with ${shownArguments(request.args, logger)}: allow?`,
          requestedSchema: { type: "object", properties: {} },
        },
        { timeoutMs: request.timeoutMs, ...(request.signal && { signal: request.signal }) },
      );
      decision =
        answer.action === "accept"
          ? "accepted"
          : answer.action === "decline"
            ? "declined"
            : "cancelled";
    } catch (err) {
      decision = "failed";
      failure = logger.redact(errorMessage(err));
    }
  }
  logger.info(`confirm ${ref} by ${request.caller}: ${decision}`, {
    caller: request.caller,
    server,
    tool,
    decision,
  });
  return decision === "accepted"
    ? undefined
    : textResult(refusal(decision, request, failure), true);
}

/** The answer of a call that did not run, saying why and what to do. */
function refusal(decision: ConfirmDecision, request: ConfirmRequest, failure: string): string {
  const ref = `${request.server}.${request.tool}`;
  const where = `profiles.${request.profile.name}.confirm`;
  switch (decision) {
    case "declined":
      return `The person declined ${ref}; it was not run.`;
    case "cancelled":
      return `The person dismissed the confirmation of ${ref}; it was not run.`;
    case "unsupported":
      return (
        `${ref} needs a person's confirmation (${where} lists "${request.entry}"), but this client cannot ask: it did not declare the elicitation capability. ` +
        `It was not run. To allow it without asking, remove "${request.entry}" from ${where} in the mcpx config.`
      );
    default:
      return `Could not ask the person to confirm ${ref} (${failure}); it was not run. Call it again.`;
  }
}

/** The arguments as the question shows them: compact JSON, config secrets redacted, cut short. */
function shownArguments(args: Record<string, unknown>, logger: Logger): string {
  const text = logger.redact(JSON.stringify(args));
  return text.length <= ARGUMENTS_SHOWN ? text : `${text.slice(0, ARGUMENTS_SHOWN - 1)}…`;
}

/**
 * A tool the caller's profile lists under `confirm` runs only once the person allowed it:
 * undefined to go ahead, else the answer to give instead.
 */
export async function confirmFor(
  server: ServerState,
  tool: ToolDef,
  args: Record<string, unknown>,
  ctx: CallContext,
  logger: Logger,
): Promise<ToolResult | undefined> {
  const profile = ctx.view?.profile;
  const entry = confirmEntry(profile, server.name, tool);
  if (!profile || entry === undefined) return undefined;
  return confirmCall({
    profile,
    entry,
    server: server.name,
    tool: tool.name,
    args,
    caller: ctx.caller ?? "default",
    client: ctx.client,
    timeoutMs: server.config.timeoutMs,
    ...(ctx.signal && { signal: ctx.signal }),
    logger,
  });
}
