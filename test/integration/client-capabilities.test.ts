/**
 * Tools a client cannot use (issue #23): server-everything lists its sampling, elicitation and
 * roots tools only to a client that declared those capabilities, and mcpx declares them all
 * upstream. describe marks, for the asking client, the tools that need a capability it did not
 * declare; a client that declared it sees the tool unmarked. Real server-everything, the built
 * mcpx over stdio and HTTP, SDK clients of both eras.
 */
import { Client } from "@modelcontextprotocol/client";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  eventually,
  newCacheHome,
  npmServer,
  startHttp,
  startStdio,
  text,
  writeConfig,
  type Era,
  type Running,
} from "../helpers/proxy.js";
import { MODERN_VERSION } from "../helpers/clients.js";
import { lookedAt } from "../../src/registry/capability-tools.js";
import type { CachedCatalog } from "../../src/registry/catalog-cache.js";

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

const config = () =>
  writeConfig({
    mcpServers: { everything: npmServer("@modelcontextprotocol/server-everything", "stdio") },
  });

/** A client of `era` declaring `capabilities` (none: a client that can answer nothing). */
function clientWith(era: Era, capabilities: Record<string, unknown>): Client {
  return new Client(
    { name: "caps-test", version: "1.0.0" },
    {
      capabilities,
      ...(era === "modern" && { versionNegotiation: { mode: { pin: MODERN_VERSION } } }),
    },
  );
}

const describeText = async (r: Running, method?: string) =>
  text(
    await r.client.callTool({
      name: "describe",
      arguments: method === undefined ? {} : { method },
    }),
  );

/** Once mcpx has looked which tools need client capabilities (in the background). */
const looked = (r: Running) =>
  eventually(
    () => /everything: \d+ tools? needs? client capabilities/.test(r.stderr()),
    60_000,
    "the look for tools' needs",
  );

const SAMPLING = "trigger-sampling-request";
const ELICITATION = "trigger-elicitation-request";
const ROOTS = "get-roots-list";

function line(about: string, tool: string): string {
  return about.split("\n").find((l) => l.startsWith(`everything.${tool}(`)) ?? "";
}

describe.each([
  { transport: "stdio", era: "legacy" },
  { transport: "http", era: "modern" },
] as const)("over $transport ($era client)", ({ transport, era }) => {
  const start = async (capabilities: Record<string, unknown>) => {
    const options = { era, client: clientWith(era, capabilities) };
    const r =
      transport === "stdio"
        ? await startStdio(config(), [], options)
        : await startHttp(config(), [], {}, options);
    running.push(r);
    await looked(r);
    return r;
  };

  it(
    "a client that declared nothing sees the tools that need sampling, elicitation and roots marked",
    {
      timeout: 120_000,
    },
    async () => {
      const r = await start({});
      const about = await describeText(r, "everything");
      expect(line(about, SAMPLING)).toContain(
        "[needs sampling, which this client did not declare]",
      );
      expect(line(about, ELICITATION)).toContain(
        "[needs elicitation, which this client did not declare]",
      );
      expect(line(about, ROOTS)).toContain("[needs roots, which this client did not declare]");
      expect(line(about, "echo")).not.toContain("did not declare");
      expect(about.match(/which this client did not declare/g)?.length).toBe(4);
      // The whole catalog and the tool's own declaration say it too.
      expect(await describeText(r)).toMatch(
        new RegExp(
          `everything\\.${SAMPLING} \\[needs sampling, which this client did not declare\\]`,
        ),
      );
      expect(await describeText(r, `everything.${SAMPLING}`)).toContain(
        "Note: this tool needs sampling, which this client did not declare; the server lists it only to clients that do, and calls to it fail here.",
      );
    },
  );

  it(
    "a client that declared sampling and roots sees only the elicitation tools marked",
    {
      timeout: 120_000,
    },
    async () => {
      const r = await start({ sampling: {}, roots: { listChanged: true } });
      const about = await describeText(r, "everything");
      expect(line(about, SAMPLING)).not.toContain("did not declare");
      expect(line(about, ROOTS)).not.toContain("did not declare");
      expect(line(about, ELICITATION)).toContain(
        "[needs elicitation, which this client did not declare]",
      );
      expect(await describeText(r, `everything.${SAMPLING}`)).not.toContain("did not declare");
    },
  );
});

describe("the look's finding, kept in the catalog cache", () => {
  /** The one cache entry's catalog (server-everything's), once written. */
  const entry = (cacheHome: string) => {
    const folder = path.join(cacheHome, "mcpx", "catalogs");
    const files = existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith(".json")) : [];
    if (files.length !== 1) return undefined;
    return (
      JSON.parse(readFileSync(path.join(folder, files[0]!), "utf8")) as { catalog: CachedCatalog }
    ).catalog;
  };

  it(
    "a second start on the same cache knows which tools need what without looking again",
    { timeout: 120_000 },
    async () => {
      const file = config();
      const cacheHome = newCacheHome();
      const options = { era: "legacy" as const, client: clientWith("legacy", {}), cacheHome };
      const first = await startStdio(file, [], options);
      running.push(first);
      // server-everything lists more tools once it knows its client (list_changed right after
      // initialize): the entry holds the finding made on the list it settled on.
      await eventually(
        () => {
          const catalog = entry(cacheHome);
          return catalog?.look?.of === lookedAt(catalog?.identity, catalog?.tools ?? []);
        },
        60_000,
        "the finding on the catalog's own tools in the cache entry",
      );
      // Its log line may still be in the pipe when the entry is on disk.
      await eventually(
        () =>
          /everything: 4 tools need client capabilities \(looked in \d+ ms, 4 sessions\)/.test(
            first.stderr(),
          ),
        10_000,
        "the look's log line",
      );
      expect(entry(cacheHome)?.look?.needs).toEqual({
        [SAMPLING]: ["sampling"],
        [ELICITATION]: ["elicitation"],
        "trigger-url-elicitation": ["elicitation"],
        [ROOTS]: ["roots"],
      });
      await first.close();
      running.splice(running.indexOf(first), 1);

      const second = await startStdio(file, [], { ...options, client: clientWith("legacy", {}) });
      running.push(second);
      // Marked from the first answer on: the cached catalog holds the finding.
      const about = await describeText(second, "everything");
      expect(line(about, SAMPLING)).toContain(
        "[needs sampling, which this client did not declare]",
      );
      expect(line(about, ROOTS)).toContain("[needs roots, which this client did not declare]");
      await eventually(
        () =>
          /everything: 4 tools need client capabilities \(as looked before, on the same tools\)/.test(
            second.stderr(),
          ),
        60_000,
        "the discovery's reuse of the finding",
      );
      expect(second.stderr()).not.toMatch(/looked in \d+ ms/);
      expect(
        (await describeText(second, "everything")).match(/which this client did not declare/g)
          ?.length,
      ).toBe(4);
    },
  );
});
