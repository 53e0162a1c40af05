/**
 * The fetch of an untrusted config's remote upstreams (see src/config/trust.ts): checked at load,
 * their names are checked again at every connection, because DNS may answer differently later.
 * The check is the connection's own DNS lookup (undici's `connect: { lookup }`), so the address
 * connected to is the address checked; redirects are refused, so a public server cannot send the
 * request on to an address that was never checked.
 */
import type { Agent, fetch as undiciFetch } from "undici";
import { createPublicOnlyLookup, urlRefusal, type Lookup } from "../config/trust.js";

/** What the SDK's HTTP transports take as `fetch`. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch that connects only to public addresses. One connection pool per call of this function
 * (one per upstream). undici is loaded on first use: trusted configs never pay for it.
 * `lookup` replaces DNS (tests).
 */
export function publicOnlyFetch(lookup?: Lookup): FetchLike {
  let agent: Promise<{ dispatcher: Agent; fetch: typeof undiciFetch }> | undefined;
  const connectLookup = createPublicOnlyLookup(lookup);
  return async (url, init) => {
    const href = url instanceof URL ? url.href : url;
    const why = urlRefusal(href);
    if (why) throw new Error(`refused: ${why}`);
    agent ??= import("undici").then((undici) => ({
      dispatcher: new undici.Agent({ connect: { lookup: connectLookup } }),
      fetch: undici.fetch,
    }));
    const { dispatcher, fetch } = await agent;
    // undici's own fetch with its own Agent: Node's global fetch bundles another undici, whose
    // dispatcher interface may differ from this package's.
    return fetch(href, {
      ...(init as Parameters<typeof fetch>[1]),
      dispatcher,
      redirect: "error",
    });
  };
}
