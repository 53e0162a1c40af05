/**
 * Step-up authorization (MCP authorization spec, "Scope challenge handling"): an upstream that
 * answers `403` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` wants a
 * token with more scope. The SDK transport throws `InsufficientScopeError` (our AuthProvider
 * cannot run a browser flow mid-request); mcpx turns it into the "needs sign-in" error naming
 * `mcpx login … --scope '<the union>'`, and keeps the union in the sign-in's record
 * (`wantedScope`), so a plain `mcpx login` asks for it too.
 */
import type { Transport } from "@modelcontextprotocol/client";
import { InsufficientScopeError } from "@modelcontextprotocol/client";
import { needsSignIn } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { SignInStore } from "./store.js";

/** A scope token as RFC 6749 §3.3 allows it: anything else in a challenge is dropped. */
const SCOPE_TOKEN = /^[!#-[\]-~]+$/;

/** The scopes of `lists` (space-separated strings), each once, in first-seen order. */
export function scopeUnion(...lists: (string | undefined)[]): string {
  const seen = new Set<string>();
  for (const list of lists) {
    for (const s of list?.split(/\s+/) ?? []) if (s && SCOPE_TOKEN.test(s)) seen.add(s);
  }
  return [...seen].join(" ");
}

export interface StepUpOptions {
  resource: string;
  store: SignInStore | undefined;
  /** `mcpx login <config> <server>`. */
  command: string;
  logger: Logger;
}

/**
 * The "needs sign-in" error for an insufficient_scope refusal (found in `err` or its causes),
 * after recording the wider scope in the store; undefined for any other error.
 */
export async function stepUpFailure(
  err: unknown,
  options: StepUpOptions,
): Promise<Error | undefined> {
  let challenge: InsufficientScopeError | undefined;
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof InsufficientScopeError) challenge = e;
  }
  if (!challenge) return undefined;
  const { resource, store, command, logger } = options;
  const required = scopeUnion(challenge.requiredScope);
  let wanted = required;
  try {
    wanted =
      (await store?.withLock(resource, async () => {
        const record = await store.read(resource);
        if (!record) return required;
        const union = scopeUnion(record.tokens?.scope, record.wantedScope, required);
        if (union !== record.wantedScope) await store.write({ ...record, wantedScope: union });
        return union;
      })) ?? required;
  } catch (e) {
    // The error still names the scope; only a plain `mcpx login` would miss it.
    logger.warn(`could not record the wider scope: ${String(e)}`);
  }
  logger.info(`the server asks for more scope: ${required || "(unnamed)"}`);
  const withScope = wanted ? `${command} --scope '${wanted}'` : command;
  return needsSignIn(
    withScope,
    required ? `the server asks for more scope: ${required}` : "the server asks for more scope",
  );
}

/** `transport`, its sends' insufficient_scope refusals turned into {@link stepUpFailure}'s error. */
export function withStepUp<T extends Transport>(transport: T, options: StepUpOptions): T {
  const send = transport.send.bind(transport);
  transport.send = async (...args: Parameters<Transport["send"]>) => {
    try {
      await send(...args);
    } catch (err) {
      throw (await stepUpFailure(err, options)) ?? err;
    }
  };
  return transport;
}
