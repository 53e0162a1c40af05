/**
 * `mcpx logout <config> <server>`: forget the server's sign-in and ask its authorization server to
 * revoke the refresh token (RFC 7009) when it offers revocation. Exit 0 also when there was none.
 */
import type { LogoutOptions } from "../cli.js";
import { errorMessage } from "../errors.js";
import { createLogger } from "../logger.js";
import type { SignInRecord } from "../upstream/oauth/store.js";
import { openSignIns, remoteServer } from "./login.js";
import { fail } from "./output.js";

export async function logout(o: LogoutOptions): Promise<number> {
  const found = remoteServer(o);
  if (typeof found === "number") return found;
  const { config, server } = found;
  const logger = createLogger({ level: "warn" });
  logger.addSecrets(config.secrets);
  const signIns = openSignIns(config, logger);
  const store = signIns.store;
  const resource = server.spec.url;
  let record: SignInRecord | undefined;
  try {
    record = await store.withLock(resource, async () => {
      const r = await store.read(resource).catch(() => undefined);
      await store.remove(resource);
      return r;
    });
  } catch (err) {
    return fail(
      1,
      `signing out of ${server.name} failed: ${logger.redact(errorMessage(err))}`,
      "Run it again once the cause above is fixed.",
    );
  } finally {
    await signIns.close();
  }
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
