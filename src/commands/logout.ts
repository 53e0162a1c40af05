/**
 * `mcpx logout <config> <server>`: forget the server's sign-in and ask its authorization server to
 * revoke the refresh token (RFC 7009) when it offers revocation. Exit 0 also when there was none.
 */
import type { LogoutOptions } from "../cli.js";
import { errorMessage } from "../errors.js";
import { defaultStateDir, TokenStore, type SignInRecord } from "../upstream/oauth/store.js";
import { remoteServer } from "./login.js";

export async function logout(o: LogoutOptions): Promise<number> {
  const found = remoteServer(o);
  if (typeof found === "number") return found;
  const { server } = found;
  const store = new TokenStore(defaultStateDir(process.env));
  const resource = server.spec.url;
  const record = await store.withLock(resource, async () => {
    const r = await store.read(resource);
    await store.remove(resource);
    return r;
  });
  if (!record) {
    process.stderr.write(`mcpx: ${server.name} was not signed in.\n`);
    return 0;
  }
  const revoked = await revoke(record);
  process.stderr.write(
    `mcpx: signed out of ${server.name}${revoked === true ? "; the authorization server revoked the tokens" : revoked ? `; revoking at the authorization server failed (${revoked}): revoke mcpx's access in its settings` : "; the authorization server offers no revocation: revoke mcpx's access in its settings"}.\n`,
  );
  return 0;
}

/** RFC 7009 revocation of the refresh token (which ends its access tokens at most servers). */
async function revoke(record: SignInRecord): Promise<true | string | undefined> {
  const endpoint = record.metadata.revocation_endpoint;
  const token = record.tokens?.refresh_token ?? record.tokens?.access_token;
  if (typeof endpoint !== "string" || !token) return undefined;
  const body = new URLSearchParams({ token, client_id: record.client.client_id });
  if (typeof record.client.client_secret === "string") {
    body.set("client_secret", record.client.client_secret);
  }
  try {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return res.ok ? true : `HTTP ${res.status}`;
  } catch (err) {
    // Never the token: only the network cause.
    return errorMessage(err).split(token).join("***");
  }
}
