/**
 * Untrusted configs: a project-scope file (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`)
 * arrives with a cloned repository and may not be the user's. Loaded with `--untrusted` (or a
 * top-level `"trust": "untrusted"`), such a file may run no local command, reach only https URLs
 * of public hosts, and send no credentials or environment values upstream.
 */
import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { ProxyError } from "../errors.js";
import { hasVariables } from "./expand.js";
import type { ServerEntry } from "./schema.js";

/** Headers that carry the user's credentials: never sent on an untrusted file's behalf. */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];

const REVIEW = "Review the file; if you trust it, run it without --untrusted.";

/** Every refusal for one server entry of an untrusted file (empty when it may be used). */
export function untrustedProblems(entry: ServerEntry, at: string): string[] {
  if (entry.type === "stdio") {
    return [`${at}: refused: an untrusted config may not run local commands (stdio). ${REVIEW}`];
  }
  const problems: string[] = [];
  if (entry.roots) {
    problems.push(
      `${at}.roots: refused: an untrusted config may not tell servers about local folders. ${REVIEW}`,
    );
  }
  if (hasVariables(entry.url)) {
    problems.push(
      `${at}.url: refused: an untrusted config may not expand environment variables. ${REVIEW}`,
    );
  } else {
    const why = urlRefusal(entry.url);
    if (why) problems.push(`${at}.url: refused: ${why}. ${REVIEW}`);
  }
  for (const [name, value] of Object.entries(entry.headers ?? {})) {
    if (CREDENTIAL_HEADERS.includes(name.toLowerCase())) {
      problems.push(
        `${at}.headers.${name}: refused: an untrusted config may not send ${name} headers. ${REVIEW}`,
      );
    } else if (hasVariables(value)) {
      problems.push(
        `${at}.headers.${name}: refused: an untrusted config may not expand environment variables into headers. ${REVIEW}`,
      );
    }
  }
  return problems;
}

/**
 * Why `url` may not be reached from an untrusted config, judged without DNS: not https, a
 * loopback name, or an IP literal that is not public. Undefined when it passes this check.
 */
export function urlRefusal(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a URL";
  }
  if (parsed.protocol !== "https:") return "an untrusted config may reach only https:// URLs";
  if (parsed.username || parsed.password) {
    return "an untrusted config may not send credentials in the URL";
  }
  const host = hostOf(parsed);
  if (host === "localhost" || host.endsWith(".localhost")) {
    return `${host} is this machine; an untrusted config may reach only public hosts`;
  }
  if (ipaddr.isValid(host) && !isPublicAddress(host)) {
    return `${host} is not a public address; an untrusted config may reach only public hosts`;
  }
  return undefined;
}

/**
 * Whether `address` is a public unicast address. Loopback, private, link-local, unique-local,
 * CGNAT, multicast, unspecified, reserved and IPv4-in-IPv6 tunnelling ranges are not;
 * IPv4-mapped IPv6 is judged as the IPv4 address it maps.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() turns ::ffff:10.0.0.1 into 10.0.0.1, so a mapped private address is caught.
  return ipaddr.process(address).range() === "unicast";
}

/** Resolves a host name to every address it has (injectable for tests). */
export type Lookup = (host: string) => Promise<{ address: string }[]>;

const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Throws ProxyError("UNTRUSTED_REFUSED") unless `url` is https to a host whose every DNS address
 * is public. Call it at load and again right before each connection of an untrusted config's
 * remote server: a name may resolve differently later.
 */
export async function assertPublicUrl(
  url: string,
  lookup: Lookup = systemLookup,
  at = url,
): Promise<void> {
  const why = urlRefusal(url);
  if (why) throw refused(at, why);
  const host = hostOf(new URL(url));
  if (ipaddr.isValid(host)) return;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host);
  } catch (err) {
    throw refused(at, `cannot resolve ${host} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const bad = addresses.find((a) => !isPublicAddress(a.address));
  if (addresses.length === 0 || bad) {
    throw refused(
      at,
      `${host} resolves to ${bad?.address ?? "no address"}, not a public address; an untrusted config may reach only public hosts`,
    );
  }
}

function refused(at: string, why: string): ProxyError {
  return new ProxyError("UNTRUSTED_REFUSED", `${at}: refused: ${why}. ${REVIEW}`);
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}

/**
 * The DNS half of the untrusted checks at load: every remote server of an untrusted config must
 * resolve only to public addresses. Throws ProxyError("UNTRUSTED_REFUSED") naming the server.
 */
export async function assertPublicServers(
  config: {
    trust?: "untrusted";
    servers: readonly { name: string; spec: { transport: string; url?: string } }[];
  },
  lookup?: Lookup,
): Promise<void> {
  if (config.trust !== "untrusted") return;
  for (const server of config.servers) {
    if (server.spec.url === undefined) continue;
    await assertPublicUrl(server.spec.url, lookup, `server "${server.name}"`);
  }
}

/** Whether `err` is an untrusted config's refusal (as opposed to a bug). */
export function isUntrustedRefusal(err: unknown): err is ProxyError {
  return err instanceof ProxyError && err.code === "UNTRUSTED_REFUSED";
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for `net.connect` / an HTTP agent's `connect: { lookup }`. */
export type ConnectLookup = (
  hostname: string,
  options: { family?: number | string; all?: boolean },
  callback: LookupCallback,
) => void;

/**
 * A `lookup` for the HTTP agent (`connect: { lookup }`) of an untrusted config's upstreams: it
 * answers only when every address of the name is public, so the address connected to is one
 * that was checked, even if the name changes its answer between a check and the connection.
 * `resolve` replaces DNS (tests).
 */
export function createPublicOnlyLookup(resolve: Lookup = systemLookup): ConnectLookup {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const addresses = found.map(({ address }) => ({ address, family: isIP(address) }));
        const bad = addresses.find((a) => !isPublicAddress(a.address));
        if (bad || addresses.length === 0) {
          const refusal: NodeJS.ErrnoException = new Error(
            `refused: ${hostname} resolves to ${bad?.address ?? "no address"}, not a public address; an untrusted config may reach only public hosts`,
          );
          refusal.code = "EUNTRUSTED";
          return callback(refusal, []);
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0]!;
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/** createPublicOnlyLookup on the system's DNS. */
export const publicOnlyLookup: ConnectLookup = createPublicOnlyLookup();
