/**
 * A real authorization server for tests: oidc-provider (a certified OpenID provider) on a
 * loopback port, in the test's process. Dynamic client registration (RFC 7591) open, PKCE S256
 * required, resource indicators (RFC 8707) issuing JWT access tokens whose audience is the
 * resource, refresh tokens rotated on every use, `iss` in the authorization response (RFC 9207),
 * short lifetimes on request. Its interaction signs the user in and consents at once, so a
 * browser (or `authorize()` below, plain fetch with cookies) goes from the authorization URL to
 * the redirect URI without a form; with `interactive`, it shows a real login form (account and
 * password) and a consent page instead, for a browser driven by a test. Consent grants the
 * resource scopes the client asked for (of those it knows), so a wider scope needs a new sign-in.
 *
 *   const as = await startAuthServer({ accessTokenTtl: 2 });
 *   ... as.issuer, as.refreshes(), await as.revokeAll(), await as.close()
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
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
  /** Show a login form and a consent page instead of consenting at once. */
  interactive?: { password: string };
  /** Dynamic client registration open (default true). */
  registration?: boolean;
  /** Pre-registered clients (oidc-provider client metadata, snake_case). */
  clients?: Record<string, unknown>[];
  /**
   * Client ID Metadata Documents by their https URL: turns the feature on (the metadata says
   * `client_id_metadata_document_supported`); the provider "fetches" them from this map.
   */
  metadataDocuments?: Record<string, Record<string, unknown>>;
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
  const documents = options.metadataDocuments;
  const scopes = options.scopes ?? ["mcp:tools"];
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: "test-key" };
  const grants = new Set<string>();
  const counts = { refreshes: 0, refused: 0, signIns: 0, registrations: 0 };

  const configuration: Configuration = {
    jwks: { keys: [jwk] },
    clients: options.clients ?? [],
    ...(documents && {
      // The documents' https URLs are answered here: no network, no TLS in tests.
      fetch: (url: URL | string, init?: RequestInit) => {
        const doc = documents[String(url)];
        return doc
          ? Promise.resolve(
              new Response(JSON.stringify(doc), {
                headers: { "content-type": "application/json" },
              }),
            )
          : fetch(url, init);
      },
    }),
    scopes: ["openid", "offline_access", ...scopes],
    claims: { openid: ["sub"] },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: options.registration ?? true },
      clientIdMetadataDocument: { enabled: documents !== undefined, ack: "draft-02" },
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
    // Sign in and consent: at once, or through the forms of `interactive`.
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      const uid = m[1]!;
      const action = /^\/interaction\/[^/?]+\/(login|confirm)/.exec(req.url ?? "")?.[1];
      const form = options.interactive;
      if (details.prompt.name === "login") {
        if (form && action !== "login") {
          page(res, loginPage(uid, details.params.client_id));
          return;
        }
        if (form) {
          const body = new URLSearchParams(await readBody(req));
          if (body.get("login") !== account || body.get("password") !== form.password) {
            page(res, loginPage(uid, details.params.client_id, "Wrong account or password."));
            return;
          }
        }
        await provider.interactionFinished(req, res, { login: { accountId: account } });
        return;
      }
      if (form && action !== "confirm") {
        page(res, consentPage(uid, details.params));
        return;
      }
      const clientId = String(details.params.client_id);
      const grant = details.grantId
        ? ((await provider.Grant.find(details.grantId)) ??
          new provider.Grant({ accountId: account, clientId }))
        : new provider.Grant({ accountId: account, clientId });
      const scope = typeof details.params.scope === "string" ? details.params.scope : "";
      grant.addOIDCScope(scope);
      // The resource scopes asked for, of those it knows (none asked: all of them).
      const asked = scope.split(" ").filter((s) => scopes.includes(s));
      const resource = details.params.resource;
      for (const r of Array.isArray(resource) ? resource : resource ? [resource] : [])
        grant.addResourceScope(String(r), (asked.length ? asked : scopes).join(" "));
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

function page(res: ServerResponse, html: string): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(
    `<!doctype html><html><head><title>Test sign-in</title></head><body>${html}</body></html>`,
  );
}

const escape = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, clientId: unknown, error?: string): string {
  return `<h1>Sign in</h1>${error ? `<p id="error">${escape(error)}</p>` : ""}
<p>to continue to <b>${escape(clientId)}</b></p>
<form method="post" action="/interaction/${escape(uid)}/login">
<label>Account <input name="login" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit" id="sign-in">Sign in</button></form>`;
}

function consentPage(uid: string, params: Record<string, unknown>): string {
  return `<h1>Allow access?</h1>
<p><b>${escape(params.client_id)}</b> asks for <code id="scope">${escape(params.scope ?? "")}</code>
on <code>${escape(params.resource ?? "")}</code>.</p>
<form method="post" action="/interaction/${escape(uid)}/confirm">
<button type="submit" id="allow">Allow</button></form>`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of req) body += String(chunk);
  return body;
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
