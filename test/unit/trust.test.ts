/** Untrusted configs: what they may not do, checked at load and against DNS answers. */
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/load.js";
import {
  assertPublicUrl,
  isPublicAddress,
  publicOnlyLookup,
  type Lookup,
} from "../../src/config/trust.js";
import { ProxyError } from "../../src/errors.js";

const FILE = "/project/.mcp.json";

function refusals(
  entry: unknown,
  options: { untrusted?: boolean } = { untrusted: true },
  top = {},
): string[] {
  try {
    parseConfig({ ...top, mcpServers: { s: entry } }, FILE, { TOKEN: "t0ken-value" }, options);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

const REVIEW = "Review the file; if you trust it, run it without --untrusted.";

describe("an untrusted config", () => {
  it("may run no local command", () => {
    expect(refusals({ command: "node", args: ["x.js"] })).toEqual([
      `mcpServers.s: refused: an untrusted config may not run local commands (stdio). ${REVIEW}`,
    ]);
  });

  it('is untrusted when it says so itself ("trust": "untrusted"), whatever the command line says', () => {
    expect(refusals({ command: "node" }, {}, { trust: "untrusted" })).toHaveLength(1);
    expect(refusals({ command: "node" }, {})).toEqual([]);
  });

  it.each([
    ["http://mcp.example.com/mcp", "an untrusted config may reach only https:// URLs"],
    ["https://localhost/mcp", "localhost is this machine"],
    ["https://127.0.0.1/mcp", "127.0.0.1 is not a public address"],
    ["https://10.0.0.8/mcp", "10.0.0.8 is not a public address"],
    ["https://169.254.169.254/latest", "169.254.169.254 is not a public address"],
    ["https://[::1]/mcp", "::1 is not a public address"],
    ["https://[fd00::1]/mcp", "fd00::1 is not a public address"],
    ["https://[::ffff:192.168.1.1]/mcp", "::ffff:c0a8:101 is not a public address"],
    ["https://[::127.0.0.1]/mcp", "::7f00:1 is not a public address"],
    ["https://[64:ff9b::10.0.0.1]/mcp", "64:ff9b::a00:1 is not a public address"],
    ["https://user:pw@mcp.example.com/mcp", "may not send credentials in the URL"],
  ])("refuses %s", (url, why) => {
    const [p] = refusals({ url });
    expect(p).toContain("mcpServers.s.url: refused: ");
    expect(p).toContain(why);
  });

  it("refuses Authorization, Proxy-Authorization and Cookie headers, and environment values in headers or URLs", () => {
    expect(
      refusals({
        url: "https://mcp.example.com/${TOKEN}",
        headers: { authorization: "Bearer x", Cookie: "a=b", "X-Key": "${TOKEN}", "X-Plain": "ok" },
      }),
    ).toEqual([
      `mcpServers.s.url: refused: an untrusted config may not expand environment variables. ${REVIEW}`,
      `mcpServers.s.headers.authorization: refused: an untrusted config may not send authorization headers. ${REVIEW}`,
      `mcpServers.s.headers.Cookie: refused: an untrusted config may not send Cookie headers. ${REVIEW}`,
      `mcpServers.s.headers.X-Key: refused: an untrusted config may not expand environment variables into headers. ${REVIEW}`,
    ]);
  });

  it("may not choose files mcpx writes", () => {
    expect(
      refusals(
        { url: "https://mcp.example.com/mcp" },
        { untrusted: true },
        { log: { file: "/home/u/.bashrc" } },
      ),
    ).toEqual([
      "log: refused: an untrusted config may not choose files mcpx writes. Remove it, or run without --untrusted.",
    ]);
  });

  it("loads a public https server with harmless headers, marked untrusted", () => {
    const config = parseConfig(
      {
        mcpServers: { s: { url: "https://mcp.example.com/mcp", headers: { "X-Client": "mcpx" } } },
      },
      FILE,
      {},
      { untrusted: true },
    );
    expect(config.trust).toBe("untrusted");
  });
});

describe("public addresses", () => {
  it.each([
    ["8.8.8.8", true],
    ["2606:4700::1111", true],
    ["127.0.0.1", false],
    ["10.1.2.3", false],
    ["172.16.0.1", false],
    ["192.168.0.1", false],
    ["169.254.1.1", false],
    ["100.64.0.1", false],
    ["224.0.0.1", false],
    ["0.0.0.0", false],
    ["255.255.255.255", false],
    ["::1", false],
    ["::", false],
    ["fe80::1", false],
    ["fc00::1", false],
    ["ff02::1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:10.0.0.1", false],
    ["::ffff:8.8.8.8", true],
    ["64:ff9b::a00:1", false],
    // IPv6 forms that carry an IPv4 address are judged by it.
    ["::127.0.0.1", false],
    ["::7f00:1", false],
    ["::10.0.0.1", false],
    ["::8.8.8.8", true],
    ["::ffff:7f00:1", false],
    ["64:ff9b::127.0.0.1", false],
    ["64:ff9b::192.168.1.1", false],
    ["64:ff9b::8.8.8.8", true],
    ["2002:7f00:1::", false],
    ["2002:a00:1::1", false],
    ["2002:808:808::1", true],
    // Teredo: server 65.54.227.120, client 192.168.1.1 (inverted) / 8.8.8.8 (inverted).
    ["2001:0:4136:e378:8000:63bf:3f57:fefe", false],
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", true],
    ["2001:0:a00:1:8000:63bf:f7f7:f7f7", false],
    ["not an address", false],
  ])("%s → %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe("assertPublicUrl (after DNS resolution)", () => {
  const answers =
    (map: Record<string, string[]>): Lookup =>
    (host) => {
      const found = map[host];
      if (!found)
        return Promise.reject(Object.assign(new Error("not found"), { code: "ENOTFOUND" }));
      return Promise.resolve(found.map((address) => ({ address })));
    };
  const lookup = answers({
    "public.example": ["93.184.216.34", "2606:2800:220:1::1"],
    "rebind.example": ["93.184.216.34", "127.0.0.1"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "compatible.example": ["::7f00:1"],
    "internal.example": ["10.0.0.5"],
    "empty.example": [],
  });

  it("passes a host whose every address is public", async () => {
    await expect(assertPublicUrl("https://public.example/mcp", lookup)).resolves.toBeUndefined();
  });

  it.each([
    ["rebind.example", "resolves to 127.0.0.1"],
    ["mapped.example", "resolves to ::ffff:10.0.0.1"],
    ["compatible.example", "resolves to ::7f00:1"],
    ["internal.example", "resolves to 10.0.0.5"],
    ["empty.example", "resolves to no address"],
    ["gone.example", "cannot resolve gone.example (ENOTFOUND)"],
  ])("refuses %s: %s", async (host, why) => {
    const err = await assertPublicUrl(`https://${host}/mcp`, lookup, 'server "s"').catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProxyError);
    expect((err as ProxyError).code).toBe("UNTRUSTED_REFUSED");
    expect((err as Error).message).toContain(`server "s": refused: `);
    expect((err as Error).message).toContain(why);
  });

  it("refuses without asking DNS when the URL itself is refused", async () => {
    let asked = false;
    const spy: Lookup = (host) => {
      asked = true;
      return lookup(host);
    };
    await expect(assertPublicUrl("http://public.example/mcp", spy)).rejects.toThrow(
      "only https://",
    );
    expect(asked).toBe(false);
  });
});

describe("publicOnlyLookup (for the connection itself)", () => {
  const lookup = (host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      publicOnlyLookup(host, { all }, (err, address) => resolve({ err, address })),
    );

  it("refuses a name that resolves to this machine, naming the address", async () => {
    const { err } = await lookup("localhost", false);
    expect(err?.code).toBe("EUNTRUSTED");
    expect(err?.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1), not a public address/);
  });

  it("answers a literal public address as it is", async () => {
    expect(await lookup("8.8.8.8", false)).toEqual({ err: null, address: "8.8.8.8" });
    expect((await lookup("8.8.8.8", true)).address).toEqual([{ address: "8.8.8.8", family: 4 }]);
  });
});
