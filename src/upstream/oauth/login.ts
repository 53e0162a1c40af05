/**
 * Interactive sign-in to an OAuth-protected upstream, the MCP authorization flow through the SDK
 * client's `auth()`: discovery from the server's 401 (RFC 9728 protected-resource metadata, then
 * RFC 8414 / OIDC metadata), dynamic client registration (RFC 7591), authorization code with
 * PKCE S256, the `resource` indicator (RFC 8707) and the `iss` check on the redirect (RFC 9207).
 * mcpx adds what the SDK leaves to the host: the loopback listener that receives the redirect (or
 * a pasted redirect URL), the `state` check, and the token store.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import {
  auth,
  RegistrationRejectedError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import getPort from "get-port";
import type { OAuthClientConfig } from "../../config/types.js";
import type { Logger } from "../../logger.js";
import { VERSION } from "../../version.js";
import { recordSecrets, type SignInRecord, type SignInStore } from "./store.js";

export interface SignInOptions {
  /** The server's URL (the protected resource). */
  resource: string;
  store: SignInStore;
  logger: Logger;
  /** Show the authorization URL to the user (open a browser, print it). */
  open: (url: URL) => void | Promise<void>;
  /** A redirect URL the user pasted (no browser on this machine); never settles when unused. */
  pasted?: Promise<string>;
  /** Scope to ask for (default: what the server's metadata or challenge names). */
  scope?: string;
  /** Bound on the whole sign-in (default 5 minutes). */
  timeoutMs?: number;
  /**
   * The entry's `oauth`: a configured client id (and secret) is used as it is; else a client ID
   * metadata document URL where the authorization server supports them; else DCR.
   */
  client?: OAuthClientConfig;
  /** Where the entry's `oauth` goes, for messages (`mcpServers.<name>.oauth`). */
  configKey?: string;
}

export interface SignInResult {
  issuer: string;
  scope?: string;
}

/** What the redirect carried: code and iss, or the authorization server's refusal. */
function parseRedirect(raw: string, state: string): { code: string; iss?: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error("that is not a URL: paste the whole address the browser was sent to");
  }
  const params = url.searchParams;
  const error = params.get("error");
  if (error) {
    const description = params.get("error_description");
    throw new Error(
      `the authorization server refused the sign-in: ${error}${description ? ` (${description})` : ""}`,
    );
  }
  if (params.get("state") !== state) {
    throw new Error("the redirect's state does not match this sign-in: start mcpx login again");
  }
  const code = params.get("code");
  if (!code) throw new Error("the redirect carries no authorization code");
  const iss = params.get("iss");
  return { code, ...(iss !== null && { iss }) };
}

/** The loopback listener the browser is sent back to (RFC 8252 §7.3): `fixed` or a free port. */
async function listen(
  fixed?: number,
): Promise<{ server: Server; redirectUrl: string; hit: Promise<string> }> {
  const port = fixed ?? (await getPort({ host: "127.0.0.1" }));
  const server = createServer();
  const redirectUrl = `http://127.0.0.1:${port}/callback`;
  const hit = new Promise<string>((resolve) => {
    server.on("request", (req, res) => {
      const url = new URL(req.url ?? "/", redirectUrl);
      if (req.method !== "GET" || url.pathname !== "/callback") {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end("mcpx received the sign-in. You can close this tab and go back to the terminal.\n");
      resolve(url.toString());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return { server, redirectUrl, hit };
}

export async function signIn(options: SignInOptions): Promise<SignInResult> {
  const { resource, store, logger } = options;
  const configured = options.client;
  const { server, redirectUrl, hit } = await listen(configured?.callbackPort);
  const state = randomBytes(16).toString("base64url");
  let verifier = "";
  let discovery: OAuthDiscoveryState | undefined;
  // Client identity, in this order: the configured client id, a client ID metadata document
  // (the SDK uses `clientMetadataUrl` when the server advertises support), DCR.
  let client: StoredOAuthClientInformation | undefined = configured?.clientId
    ? {
        client_id: configured.clientId,
        redirect_uris: [redirectUrl],
        ...(configured.clientSecret
          ? { client_secret: configured.clientSecret }
          : { token_endpoint_auth_method: "none" }),
      }
    : undefined;
  let tokens: StoredOAuthTokens | undefined;
  let issuer: string | undefined;
  const metadata: OAuthClientMetadata = {
    client_name: "mcpx",
    software_id: "mcpx",
    software_version: VERSION,
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  const provider: OAuthClientProvider = {
    redirectUrl,
    clientMetadata: metadata,
    ...(!configured?.clientId &&
      configured?.clientMetadataUrl && { clientMetadataUrl: configured.clientMetadataUrl }),
    state: () => state,
    // A new registration per sign-in: the loopback port differs each time.
    clientInformation: () => client,
    saveClientInformation: (info) => {
      client = info;
      logger.addSecrets(typeof info.client_secret === "string" ? [info.client_secret] : []);
    },
    tokens: () => tokens,
    saveTokens: (saved, ctx) => {
      tokens = saved;
      issuer = ctx?.issuer ?? issuer;
      logger.addSecrets(
        [saved.access_token, saved.refresh_token].filter((v): v is string => Boolean(v)),
      );
    },
    redirectToAuthorization: (url) => options.open(url),
    saveCodeVerifier: (v) => {
      verifier = v;
    },
    codeVerifier: () => verifier,
    saveDiscoveryState: (s) => {
      discovery = s;
    },
    discoveryState: () => discovery,
  };
  const timeoutMs = options.timeoutMs ?? 300_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no sign-in within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
  });
  const key = options.configKey ?? "oauth";
  /** A server that registers no clients: say which config keys to set. */
  const noRegistration = (err: unknown): never => {
    const refused = err instanceof RegistrationRejectedError;
    const missing = err instanceof Error && /dynamic client registration/i.test(err.message);
    if (!refused && !missing) throw err;
    const issuer = discovery?.authorizationServerMetadata?.issuer ?? "the authorization server";
    throw new Error(
      `${issuer} ${refused ? "refused mcpx's dynamic client registration" : "does not offer dynamic client registration"}: register mcpx there as a client with the redirect URI http://127.0.0.1/callback (any port; or a fixed one in "${key}.callbackPort"), then set "${key}.clientId" (and "${key}.clientSecret": "\${VAR}" if it gave a secret) in the config`,
      { cause: err },
    );
  };
  try {
    const first = await Promise.race([
      auth(provider, { serverUrl: resource, ...(options.scope && { scope: options.scope }) }).catch(
        noRegistration,
      ),
      timeout,
    ]);
    if (first === "AUTHORIZED" && !tokens) throw new Error("the server asked for no sign-in");
    if (first === "REDIRECT") {
      const raw = await Promise.race([hit, ...(options.pasted ? [options.pasted] : []), timeout]);
      const { code, iss } = parseRedirect(raw, state);
      await auth(provider, {
        serverUrl: resource,
        authorizationCode: code,
        ...(iss !== undefined && { iss }),
      });
    }
    const meta = discovery?.authorizationServerMetadata;
    issuer ??= meta?.issuer;
    if (!tokens || !client || !issuer || !meta) throw new Error("the sign-in returned no tokens");
    const record: SignInRecord = {
      resource,
      issuer,
      ...(discovery?.resourceMetadata?.resource && {
        indicator: discovery.resourceMetadata.resource,
      }),
      metadata: meta,
      client: client,
      tokens: {
        access_token: tokens.access_token,
        token_type: tokens.token_type,
        ...(tokens.refresh_token && { refresh_token: tokens.refresh_token }),
        ...(tokens.scope && { scope: tokens.scope }),
        ...(tokens.expires_in !== undefined && {
          expiresAt: Date.now() + tokens.expires_in * 1000,
        }),
      },
      savedAt: Date.now(),
    };
    logger.addSecrets(recordSecrets(record));
    // Under the lock: a running mcpx refreshing the old sign-in does not overwrite this one.
    await store.withLock(resource, () => store.write(record));
    return { issuer, ...(tokens.scope && { scope: tokens.scope }) };
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  }
}
