/**
 * The persistent catalog cache on a real folder: keys that hash credentials, files mode 0600 with
 * no secret inside, atomic writes, corrupt entries dropped with one log line, bounded size.
 */
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, type ServerConfig } from "../../src/config/load.js";
import {
  CatalogCache,
  defaultCacheDir,
  launchKey,
  type CachedCatalog,
} from "../../src/registry/catalog-cache.js";
import { lookedAt } from "../../src/registry/capability-tools.js";
import { ServerStates } from "../../src/registry/states.js";
import { lacks } from "../../src/server/catalog.js";
import { quietLogger } from "../helpers/inmemory.js";
import { tempDir } from "../helpers/temp.js";

const SECRET = "tok-9f8e7d6c5b4a";

function server(entry: Record<string, unknown>, name = "s"): ServerConfig {
  const config = parseConfig({ mcpServers: { [name]: entry } }, "/tmp/mcpx.json", {});
  return config.servers[0]!;
}

const catalog = (tools: string[], extra = ""): CachedCatalog => ({
  identity: { name: "fixture", version: "1.0.0", capabilities: { tools: {} } },
  tools: tools.map((name) => ({ name, description: extra, inputSchema: { type: "object" } })),
  resources: [{ uri: "fixture://info", name: "info" }],
  resourceTemplates: [],
  prompts: [{ name: "greet" }],
});

function cacheIn(
  dir: string,
  lines: string[] = [],
  limits: { entry?: number; total?: number } = {},
) {
  return new CatalogCache({
    dir,
    logger: quietLogger(lines),
    secrets: () => [SECRET],
    ...(limits.entry && { maxEntryBytes: limits.entry }),
    ...(limits.total && { maxTotalBytes: limits.total }),
  });
}

describe("launchKey", () => {
  it("follows how a server is launched, and takes env and header values only as a hash", () => {
    const base = { command: "node", args: ["server.js"], env: { TOKEN: SECRET } };
    const key = launchKey(server(base));
    expect(launchKey(server(base, "renamed"))).toBe(key);
    expect(launchKey(server({ ...base, session: "shared", timeout: 5 }))).toBe(key);
    expect(launchKey(server({ ...base, env: { TOKEN: "other" } }))).not.toBe(key);
    expect(launchKey(server({ ...base, args: ["server.js", "--x"] }))).not.toBe(key);
    expect(launchKey(server({ ...base, cwd: "/srv" }))).not.toBe(key);
    const remote = {
      url: "https://example.com/mcp",
      headers: { Authorization: `Bearer ${SECRET}` },
    };
    expect(launchKey(server({ ...remote, headers: { Authorization: "Bearer x" } }))).not.toBe(
      launchKey(server(remote)),
    );
    expect(key).toMatch(/^[0-9a-f]{32}$/);
  });

  it("lives under $XDG_CACHE_HOME/mcpx, else ~/.cache/mcpx (a relative XDG value is ignored)", () => {
    expect(defaultCacheDir({ XDG_CACHE_HOME: "/x/cache" })).toBe("/x/cache/mcpx");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "rel" })).toMatch(/\.cache\/mcpx$/);
  });
});

describe("CatalogCache", () => {
  it("writes entries mode 0600 in a 0700 folder, atomically, and reads them back", async () => {
    const dir = tempDir();
    const cache = cacheIn(dir);
    cache.save("k1", "s", catalog(["echo", "add"]));
    await cache.flush();
    const file = cache.file("k1");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    // No temp file is left: the entry appeared by rename.
    expect(readdirSync(path.dirname(file))).toEqual(["k1.json"]);
    expect(cache.load("k1", "s")?.tools.map((t) => t.name)).toEqual(["echo", "add"]);
    expect(cache.load("k2", "s")).toBeUndefined();
  });

  it("creates its folder and the parent, no further up (a removed folder is not brought back)", async () => {
    const root = tempDir();
    const fresh = cacheIn(path.join(root, "cache", "mcpx"));
    fresh.save("k1", "s", catalog(["echo"]));
    await fresh.flush();
    expect(fresh.load("k1", "s")?.tools).toHaveLength(1);
    const lines: string[] = [];
    const orphan = cacheIn(path.join(root, "gone", "cache", "mcpx"), lines);
    orphan.save("k1", "s", catalog(["echo"]));
    await orphan.flush();
    expect(readdirSync(root)).toEqual(["cache"]);
    expect(lines.join("\n")).toMatch(/catalog cache not written/);
  });

  it("never writes a catalog that holds a secret value (and drops the old entry)", async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const cache = cacheIn(dir, lines);
    cache.save("k1", "s", catalog(["echo"]));
    await cache.flush();
    cache.save("k1", "s", catalog(["echo"], `uses ${SECRET}`));
    await cache.flush();
    expect(cache.load("k1", "s")).toBeUndefined();
    expect(lines.join("\n")).toMatch(/catalog not cached: it contains a value/);
    expect(lines.join("\n")).not.toContain(SECRET);
  });

  it("ignores a corrupt entry with one log line, removes it, and a later save rebuilds it", async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const cache = cacheIn(dir, lines);
    cache.save("k1", "s", catalog(["echo"]));
    await cache.flush();
    for (const garbage of [
      '{"format":1,"key":"k1","savedAt":1,"catalog":{"tools":7}}',
      "{not json",
    ]) {
      writeFileSync(cache.file("k1"), garbage);
      lines.length = 0;
      expect(cache.load("k1", "s")).toBeUndefined();
      expect(lines.filter((l) => l.includes("corrupt"))).toHaveLength(1);
      expect(readdirSync(path.dirname(cache.file("k1")))).toEqual([]);
    }
    cache.save("k1", "s", catalog(["echo"]));
    await cache.flush();
    expect(cache.load("k1", "s")?.tools).toHaveLength(1);
  });

  it("keeps a look's finding with the catalog; one it cannot read costs the finding only", async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const cache = cacheIn(dir, lines);
    const cached = catalog(["echo", "sample"]);
    const look = {
      of: lookedAt(cached.identity, cached.tools),
      needs: { sample: ["sampling" as const] },
    };
    cache.save("k1", "s", { ...cached, look });
    await cache.flush();
    expect(cache.load("k1", "s")?.look).toEqual(look);
    // Written before looks were kept: read as it was.
    const entry = JSON.parse(readFileSync(cache.file("k1"), "utf8")) as {
      catalog: Record<string, unknown>;
    };
    delete entry.catalog.look;
    writeFileSync(cache.file("k1"), JSON.stringify(entry));
    expect(cache.load("k1", "s")?.tools).toHaveLength(2);
    expect(cache.load("k1", "s")?.look).toBeUndefined();
    // A need this version does not know (a newer mcpx wrote it): the catalog stays.
    entry.catalog.look = { of: look.of, needs: { sample: ["tasks"] } };
    writeFileSync(cache.file("k1"), JSON.stringify(entry));
    lines.length = 0;
    expect(cache.load("k1", "s")?.tools).toHaveLength(2);
    expect(cache.load("k1", "s")?.look).toBeUndefined();
    expect(lines.filter((l) => l.includes("corrupt"))).toEqual([]);
  });

  it("a server starts with the cached finding only when it was made on the cached tools", () => {
    const states = new ServerStates(quietLogger(), Date.now);
    const cached = catalog(["echo", "sample", "toString"]);
    const needs = { sample: ["sampling" as const] };
    states.add(server({ command: "node" }, "a"), {
      ...cached,
      look: { of: lookedAt(cached.identity, cached.tools), needs },
    });
    states.add(server({ command: "node" }, "b"), {
      ...cached,
      look: { of: lookedAt(cached.identity, [cached.tools[0]!]), needs },
    });
    const a = states.get("a")!;
    expect(a.needs).toEqual(needs);
    expect(states.get("b")!.needs).toBeUndefined();
    expect("look" in a).toBe(false);
    // A tool named after an Object method needs nothing (not Object.prototype's function).
    const abilities = { sampling: false, elicitForm: false, elicitUrl: false, roots: false };
    expect(lacks(a, a.tools[2]!, abilities)).toEqual([]);
    expect(lacks(a, a.tools[1]!, abilities)).toEqual(["sampling"]);
  });

  it("keeps the total under its bound by evicting the oldest entries, and skips oversized ones", async () => {
    const dir = tempDir();
    const lines: string[] = [];
    const one = Buffer.byteLength(JSON.stringify(catalog(["a"]))) + 100;
    const cache = cacheIn(dir, lines, { total: one * 2.5, entry: one * 2 });
    for (const [i, key] of ["k1", "k2"].entries()) {
      cache.save(key, "s", catalog(["a"]));
      await cache.flush();
      // Distinct ages, oldest first, whatever the file system's timestamp resolution.
      utimesSync(cache.file(key), 1_000 + i, 1_000 + i);
    }
    cache.save("k3", "s", catalog(["a"]));
    await cache.flush();
    expect(readdirSync(path.dirname(cache.file("k1"))).sort()).toEqual(["k2.json", "k3.json"]);

    cache.save("big", "s", catalog(Array.from({ length: 200 }, (_, i) => `tool_${i}`)));
    await cache.flush();
    expect(cache.load("big", "s")).toBeUndefined();
    expect(lines.join("\n")).toMatch(/over the \d+-byte entry limit/);
    expect((JSON.parse(readFileSync(cache.file("k3"), "utf8")) as { format: number }).format).toBe(
      1,
    );
  });
});

describe("config keys", () => {
  const servers = { mcpServers: { s: { command: "node" } } };
  const problems = (raw: unknown, untrusted = false) => {
    try {
      parseConfig(raw, "/cfg/mcpx.json", {}, { untrusted });
      return "";
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems.join("\n");
    }
  };

  it('reads "start" and "catalogCache", and names a wrong value', () => {
    const lazy = parseConfig(
      { mcpServers: { s: { command: "node", start: "lazy" } }, catalogCache: "~/c" },
      "/cfg/mcpx.json",
      {},
    );
    expect(lazy.servers[0]?.start).toBe("lazy");
    expect(lazy.catalogCache).toBe(path.join(os.homedir(), "c"));
    expect(
      parseConfig({ ...servers, catalogCache: "cache" }, "/cfg/mcpx.json", {}).catalogCache,
    ).toBe("/cfg/cache");
    expect(
      parseConfig({ ...servers, catalogCache: false }, "/cfg/mcpx.json", {}).catalogCache,
    ).toBe(false);
    expect(parseConfig(servers, "/cfg/mcpx.json", {}).servers[0]?.start).toBeUndefined();
    expect(problems({ mcpServers: { s: { command: "node", start: "later" } } })).toMatch(
      /mcpServers\.s\.start/,
    );
    expect(problems({ ...servers, catalogCache: 3 })).toMatch(/catalogCache: must be false/);
  });

  it("refuses a cache folder chosen by an untrusted config", () => {
    const remote = { mcpServers: { s: { url: "https://example.com/mcp" } } };
    expect(problems({ ...remote, catalogCache: "/tmp/x" }, true)).toMatch(/catalogCache: refused/);
    expect(problems({ ...remote, catalogCache: false }, true)).toBe("");
  });
});
