/**
 * The access token of a running mcpx's sessions with an OAuth-protected upstream: read from the
 * token store before each request (so a sign-in made by `mcpx login` meanwhile is seen), refreshed
 * shortly before it expires and when the upstream answers 401, under the store's lock: a process
 * that waited for the lock reads the file again and uses the token the other one got, so a
 * rotated refresh token is spent once. No usable sign-in: the `needs sign-in` error.
 */
import {
  OAuthError,
  refreshAuthorization,
  type AuthorizationServerMetadata,
  type AuthProvider,
} from "@modelcontextprotocol/client";
import { errorMessage, needsSignIn } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { FetchLike } from "../public-fetch.js";
import { recordSecrets, type SignInRecord, type SignInStore } from "./store.js";

type UnauthorizedContext = Parameters<NonNullable<AuthProvider["onUnauthorized"]>>[0];

/** Refresh this long before the access token expires. */
export const REFRESH_SKEW_MS = 30_000;

export interface BearerOptions {
  /** The server's URL: the protected resource, the store's key. */
  resource: string;
  store: SignInStore | undefined;
  /** `mcpx login <config> <server>`: what a "needs sign-in" error tells the user to run. */
  command: string;
  logger: Logger;
  fetchImpl?: FetchLike;
  now?: () => number;
}

export function storedTokens(options: BearerOptions): AuthProvider {
  const { resource, store, command, logger } = options;
  const now = options.now ?? Date.now;
  /** The token sent last: a 401 for it means it is no good, whatever its expiry says. */
  let sent: string | undefined;

  const read = async () => {
    const record = await store?.read(resource);
    logger.addSecrets(recordSecrets(record));
    return record;
  };

  /** A fresh access token, refreshing under the lock unless another process just did. */
  const refresh = async (stale: string | undefined): Promise<string> => {
    if (!store) throw needsSignIn(command);
    return store.withLock(resource, async () => {
      const record = await read();
      const tokens = record?.tokens;
      if (!record || !tokens) throw needsSignIn(command);
      // Someone refreshed while we waited for the lock: theirs is the token now.
      if (tokens.access_token !== stale && !expiring(tokens.expiresAt, now())) {
        return tokens.access_token;
      }
      if (!tokens.refresh_token) throw needsSignIn(command, "the access token expired");
      let fresh;
      try {
        fresh = await refreshAuthorization(record.issuer, {
          metadata: record.metadata as AuthorizationServerMetadata,
          clientInformation: record.client,
          refreshToken: tokens.refresh_token,
          resource: new URL(record.indicator ?? resource),
          ...(options.fetchImpl && { fetchFn: options.fetchImpl }),
        });
      } catch (err) {
        if (err instanceof OAuthError) {
          // invalid_grant and the like: the refresh token is spent, revoked or expired.
          logger.warn(`refreshing the sign-in failed: ${err.code}`);
          await store.write({ ...record, tokens: undefined });
          throw needsSignIn(command, "the sign-in was revoked or expired");
        }
        throw new Error(`refreshing the sign-in failed: ${errorMessage(err)}`, { cause: err });
      }
      const next: SignInRecord = {
        ...record,
        tokens: {
          access_token: fresh.access_token,
          token_type: fresh.token_type,
          refresh_token: fresh.refresh_token ?? tokens.refresh_token,
          ...((fresh.scope ?? tokens.scope) !== undefined && {
            scope: fresh.scope ?? tokens.scope,
          }),
          ...(fresh.expires_in !== undefined && { expiresAt: now() + fresh.expires_in * 1000 }),
        },
      };
      logger.addSecrets(recordSecrets(next));
      await store.write(next);
      logger.info("refreshed the sign-in");
      return fresh.access_token;
    });
  };

  return {
    async token() {
      const tokens = (await read())?.tokens;
      if (!tokens) return (sent = undefined);
      sent = expiring(tokens.expiresAt, now())
        ? await refresh(tokens.access_token)
        : tokens.access_token;
      return sent;
    },
    async onUnauthorized(ctx: UnauthorizedContext) {
      if (!isBearerChallenge(ctx.response)) {
        throw new Error(
          `${ctx.serverUrl.host} answered 401 without an OAuth (Bearer) challenge: give the credentials it expects in the entry's "headers"`,
        );
      }
      if (sent === undefined) throw needsSignIn(command);
      await refresh(sent);
    },
  };
}

function expiring(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && expiresAt - REFRESH_SKEW_MS <= now;
}

function isBearerChallenge(response: Response): boolean {
  return /^\s*bearer\b/i.test(response.headers.get("www-authenticate") ?? "");
}
