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
 * CGNAT, multicast, unspecified and reserved ranges are not. An IPv6 address that carries an
 * IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo) is
 * judged by the IPv4 address(es) it carries: that is where its packets end up.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const carried = embeddedIPv4(parsed as ipaddr.IPv6);
  if (carried) return carried.every((v4) => v4.range() === "unicast");
  return parsed.range() === "unicast";
}

/** The IPv4 addresses an IPv6 address carries, or undefined for a plain IPv6 address. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated but still routed by some
  // stacks); :: and ::1 stay IPv6's own unspecified and loopback.
  if (zero(0, 5) && p[5] === 0xffff) return [v4(p[6]!, p[7]!)];
  if (zero(0, 6) && (p[6] !== 0 || p[7]! > 1)) return [v4(p[6]!, p[7]!)];
  // NAT64 well-known prefix 64:ff9b::/96: the last 32 bits.
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return [v4(p[6]!, p[7]!)];
  // 6to4 2002:AABB:CCDD::/48: bits 16–47.
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  // Teredo 2001:0::/32: the server in bits 32–63, the client inverted in the last 32.
  if (p[0] === 0x2001 && p[1] === 0)
    return [v4(p[2]!, p[3]!), v4(~p[6]! & 0xffff, ~p[7]! & 0xffff)];
  return undefined;
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
