/**
 * Every form a credential takes in text mcpx writes. The config collects these into
 * `Config.secrets`, and everything mcpx prints, logs or answers is redacted against that one list
 * (`Logger.addSecrets`). A credential leaks in forms other than the one the config holds: the bare
 * token of an `Authorization: Bearer …` header an upstream echoes, the `Basic` header mcpx builds
 * from URL credentials, a URL's user name or `api_key=…` query value, percent-encoded or not.
 */

/** Query parameter names that carry credentials: their values are secret whatever their length. */
const CREDENTIAL_PARAM = /key|token|secret|pass|pwd|auth|sig|session|cred|jwt|code|access/i;

/**
 * Query values at least this long are treated as secret whatever their name: shorter values of
 * other names (`format=json`, `v=2`) are too likely to be ordinary words that redaction would
 * blot out of every log line.
 */
const LONG_QUERY_VALUE = 12;

/** A value and the encoded forms it takes in URLs and headers. */
export function secretForms(value: string): string[] {
  const forms = [value];
  const encoded = encodeURIComponent(value);
  if (encoded !== value) forms.push(encoded);
  return forms;
}

/**
 * A header value and the credential inside it: `Bearer abc` → also `abc`; `Basic dXM6cHc=` →
 * also the encoded pair, the decoded `user:pw` and its password.
 */
export function headerSecrets(value: string): string[] {
  const out = secretForms(value);
  const m = /^\s*([A-Za-z][\w.-]*)\s+(\S.*?)\s*$/.exec(value);
  if (!m?.[1] || !m[2]) return out;
  const credential = m[2];
  out.push(...secretForms(credential));
  if (m[1].toLowerCase() === "basic") {
    const pair = Buffer.from(credential, "base64").toString("utf8");
    // Only a clean round trip is a Basic pair: anything else decodes to noise.
    if (
      Buffer.from(pair, "utf8").toString("base64").replace(/=+$/, "") ===
      credential.replace(/=+$/, "")
    ) {
      out.push(pair);
      const colon = pair.indexOf(":");
      if (colon >= 0) out.push(pair.slice(0, colon), pair.slice(colon + 1));
    }
  }
  return out;
}

/**
 * The `Authorization` value mcpx sends for a URL with credentials (fetch refuses them in the
 * URL), or undefined when the URL has none.
 */
export function basicAuthorization(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  const pair = `${safeDecode(url.username)}:${safeDecode(url.password)}`;
  return `Basic ${Buffer.from(pair).toString("base64")}`;
}

/**
 * A configured URL's credentials: user name and password (as written and decoded), the `Basic`
 * header built from them, and query values that look like credentials (see CREDENTIAL_PARAM
 * and LONG_QUERY_VALUE).
 */
export function urlSecrets(url: URL): string[] {
  const out: string[] = [];
  for (const part of [url.username, url.password]) {
    if (part) out.push(part, ...secretForms(safeDecode(part)));
  }
  const basic = basicAuthorization(url);
  if (basic) out.push(...headerSecrets(basic));
  for (const [name, value] of url.searchParams) {
    if (value && (CREDENTIAL_PARAM.test(name) || value.length >= LONG_QUERY_VALUE)) {
      out.push(...secretForms(value));
    }
  }
  return out;
}

/**
 * The URL as output shows it: user name, password and every query value replaced by `***`
 * (the way env and header values are shown). Never throws: text that is not a URL is hidden whole.
 */
export function maskedUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "***";
  }
  if (url.username) url.username = "***";
  if (url.password) url.password = "***";
  for (const key of [...url.searchParams.keys()]) url.searchParams.set(key, "***");
  return url.href;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Not valid percent-encoding: the text is what is sent.
    return text;
  }
}
