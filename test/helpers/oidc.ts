/**
 * A real authorization server for tests: oidc-provider (a certified OpenID provider) on a
 * loopback port, in the test's process. Dynamic client registration (RFC 7591) open, PKCE S256
 * required, resource indicators (RFC 8707) issuing JWT access tokens whose audience is the
 * resource, refresh tokens rotated on every use, `iss` in the authorization response (RFC 9207),
 * short lifetimes on request. Its interaction signs the user in and consents at once, so a
 * browser (or `authorize()` below, plain fetch with cookies) goes from the authorization URL to
 * the redirect URI without a form.
 *
 *   const as = await startAuthServer({ accessTokenTtl: 2 });
 *   ... as.issuer, as.refreshes(), await as.revokeAll(), await as.close()
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";

export interface AuthServerOptions {
  /** Seconds an access token lives (default 600). */
  accessTokenTtl?: number;
  /** Seconds a refresh token lives (default one day). */
  refreshTokenTtl?: number;
  /** The subject the automatic sign-in uses (default "user-1"). */
  account?: string;
  /** Scopes a resource grants (default ["mcp:tools"]). */
  scopes?: string[];
}

export interface AuthServer {
  /** The issuer identifier, also its base URL (http://127.0.0.1:port). */
  issuer: string;
  /** Refresh-token grants answered with new tokens so far. */
  refreshes(): number;
  /** Refresh-token grants refused so far (a spent, revoked or unknown refresh token). */
  refusedRefreshes(): number;
  /** Authorization codes exchanged so far (completed sign-ins). */
  signIns(): number;
  /** Clients registered through DCR so far. */
  registrations(): number;
  /** Revoke every grant it issued: refresh and access tokens stop working. */
  revokeAll(): Promise<void>;
  close(): Promise<void>;
}

export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const account = options.account ?? "user-1";
  const scopes = options.scopes ?? ["mcp:tools"];
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: "test-key" };
  const grants = new Set<string>();
  const counts = { refreshes: 0, refused: 0, signIns: 0, registrations: 0 };

  const configuration: Configuration = {
    jwks: { keys: [jwk] },
    clients: [],
    scopes: ["openid", "offline_access", ...scopes],
    claims: { openid: ["sub"] },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx: KoaContextWithOIDC) =>
          (ctx.oidc.params?.resource as string | undefined) ?? undefined!,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
          scope: scopes.join(" "),
          audience: resourceIndicator,
          accessTokenTTL: options.accessTokenTtl ?? 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed("refresh_token"),
    ttl: {
      AccessToken: options.accessTokenTtl ?? 600,
      RefreshToken: options.refreshTokenTtl ?? 86_400,
      AuthorizationCode: 60,
      Grant: 86_400,
      Session: 86_400,
      Interaction: 600,
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.on("grant.success", (ctx: KoaContextWithOIDC) => {
    const grantType = ctx.oidc.params?.grant_type;
    if (grantType === "refresh_token") counts.refreshes += 1;
    if (grantType === "authorization_code") counts.signIns += 1;
  });
  provider.on("grant.error", (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc.params?.grant_type === "refresh_token") counts.refused += 1;
  });
  provider.on("registration_create.success", () => (counts.registrations += 1));
  provider.on("grant.saved", (grant: { jti: string }) => grants.add(grant.jti));

  const callback = provider.callback();
  http.on("request", (req, res) => {
    const m = /^\/interaction\/([^/?]+)/.exec(req.url ?? "");
    if (!m) {
      callback(req, res);
      return;
    }
    // Sign in and consent at once: the user in tests always says yes.
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === "login") {
        await provider.interactionFinished(req, res, { login: { accountId: account } });
        return;
      }
      const clientId = String(details.params.client_id);
      const grant = details.grantId
        ? ((await provider.Grant.find(details.grantId)) ??
          new provider.Grant({ accountId: account, clientId }))
        : new provider.Grant({ accountId: account, clientId });
      const scope = typeof details.params.scope === "string" ? details.params.scope : "";
      grant.addOIDCScope(scope);
      const resource = details.params.resource;
      for (const r of Array.isArray(resource) ? resource : resource ? [resource] : [])
        grant.addResourceScope(String(r), scopes.join(" "));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });

  return {
    issuer,
    refreshes: () => counts.refreshes,
    refusedRefreshes: () => counts.refused,
    signIns: () => counts.signIns,
    registrations: () => counts.registrations,
    async revokeAll() {
      for (const grantId of grants) {
        for (const model of [
          provider.RefreshToken,
          provider.AccessToken,
          provider.AuthorizationCode,
          provider.Grant,
        ]) {
          await (
            model as { adapter: { revokeByGrantId(id: string): Promise<void> } }
          ).adapter.revokeByGrantId(grantId);
        }
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/**
 * Go from an authorization URL to the redirect the authorization server sends back, as a browser
 * would (following redirects, keeping cookies), without calling the redirect URI: the caller
 * hands it to whatever waits there. Works with this server's automatic interaction.
 */
export async function authorize(url: string, redirectPrefix: string): Promise<string> {
  const cookies = new Map<string, string>();
  let next = url;
  for (let hop = 0; hop < 20; hop++) {
    if (next.startsWith(redirectPrefix)) return next;
    const res = await fetch(next, {
      redirect: "manual",
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq > 0) cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = res.headers.get("location");
    if (!location) {
      throw new Error(`authorization stopped at ${next}: ${res.status} ${await res.text()}`);
    }
    next = new URL(location, next).toString();
  }
  throw new Error("too many redirects");
}
