/**
 * A real authorization server for tests of mcpx as a protected resource: oidc-provider (a
 * certified OpenID provider) issuing JWT access tokens by the client_credentials grant with
 * resource indicators (RFC 8707), its discovery and JWKS served by it. `sign` mints tokens with
 * the provider's own signing key for the cases a real grant never produces (expired, not yet
 * valid, wrong issuer); `rotate` replaces the signing key the way an issuer rotates.
 * (test/helpers/oidc.ts is the full provider of the upstream sign-in tests.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from "jose";

/** The part of oidc-provider (it ships no types) used here. */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type ProviderClass = new (
  issuer: string,
  configuration: Record<string, unknown>,
) => { callback(): Handler };
/** Loaded by name: without bundled types, a static import would be an untyped module. */
const PROVIDER_MODULE = "oidc-provider";
/** The JWT access token oidc-provider's `formats.customizers.jwt` may change. */
interface StructuredToken {
  payload: Record<string, unknown>;
}

export interface IssuerClient {
  id: string;
  secret: string;
  /** Scopes this client may ask for. */
  scope: string;
  /** A `groups` claim put in its tokens. */
  groups?: string[];
}

export interface Issuer {
  /** The issuer URL (`iss`), http://127.0.0.1:<port>. */
  readonly url: string;
  readonly port: number;
  /** The format of the access tokens issued from now on ("jwt" unless set). */
  format: "jwt" | "opaque";
  /** The kid the provider signs with now. */
  readonly kid: string;
  /** A real access token by client_credentials for `resource`. */
  token(clientId: string, resource: string, scope?: string): Promise<string>;
  /** A JWT signed with the provider's current key (or `key`), claims as given. */
  sign(claims: JWTPayload, options?: { key?: CryptoKey; kid?: string }): Promise<string>;
  /**
   * A new signing key; the old ones stay published, so tokens already out keep working, unless
   * `retire` (a key withdrawn, e.g. compromised): then only the new key is published.
   */
  rotate(options?: { retire?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export const SCOPES = ["mcp:tools", "mcp:admin"];

interface SigningKey {
  jwk: JWK;
  privateKey: CryptoKey;
  kid: string;
}

async function newKey(n: number): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = `key-${n}-${Math.random().toString(36).slice(2, 8)}`;
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
  return { jwk, privateKey, kid };
}

/** Start the issuer on `port` (0: any free port). */
export async function startIssuer(clients: IssuerClient[], port = 0): Promise<Issuer> {
  const { default: Provider } = (await import(PROVIDER_MODULE)) as { default: ProviderClass };
  let keys = [await newKey(0)];
  let handler: Handler = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const actual = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${actual}`;
  const groups = new Map(clients.map((c) => [c.id, c.groups]));
  const state = { format: "jwt" as "jwt" | "opaque" };

  const build = () => {
    const provider = new Provider(url, {
      clients: clients.map((c) => ({
        client_id: c.id,
        client_secret: c.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: c.scope,
      })),
      jwks: { keys: keys.map((k) => k.jwk) },
      scopes: SCOPES,
      ttl: { ClientCredentials: 600 },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined as unknown as string,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: SCOPES.join(" "),
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: state.format,
            ...(state.format === "jwt" ? { jwt: { sign: { alg: "RS256" } } } : {}),
          }),
        },
      },
      formats: {
        customizers: {
          jwt: (_ctx: unknown, token: { clientId?: string }, jwt: StructuredToken) => {
            const g = groups.get(token.clientId ?? "");
            if (g) jwt.payload.groups = g;
            return jwt;
          },
        },
      },
    });
    const callback = provider.callback();
    handler = (req, res) => callback(req, res);
  };
  build();

  const tokenEndpoint = `${url}/token`;
  return {
    url,
    port: actual,
    get format() {
      return state.format;
    },
    set format(value) {
      state.format = value;
    },
    get kid() {
      return keys[0]!.kid;
    },
    async token(clientId, resource, scope) {
      const client = clients.find((c) => c.id === clientId)!;
      const body = new URLSearchParams({ grant_type: "client_credentials", resource });
      if (scope !== undefined) body.set("scope", scope);
      const res = await fetch(tokenEndpoint, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body,
      });
      const json = (await res.json()) as { access_token?: string; error_description?: string };
      if (!res.ok || !json.access_token)
        throw new Error(`token endpoint: ${res.status} ${JSON.stringify(json)}`);
      return json.access_token;
    },
    async sign(claims, options = {}) {
      const key = keys[0]!;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: options.kid ?? key.kid })
        .sign(options.key ?? key.privateKey);
    },
    async rotate({ retire = false } = {}) {
      const next = await newKey(keys.length);
      keys = retire ? [next] : [next, ...keys];
      build();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
