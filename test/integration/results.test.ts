/**
 * Token economy v2 through the built `mcpx` over HTTP: a 20,000-row result within the budget,
 * paging back the exact rows, handles private to their caller, select, media untouched, and
 * the call shapes models write. Real upstreams: the replay fixture and server-everything.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { StreamableHTTPClientTransport, type Client } from "@modelcontextprotocol/client";
import { decode as decodeToon } from "@toon-format/toon";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS } from "../../src/config/load.js";
import {
  fixtureServer,
  newClient,
  npmServer,
  startHttp,
  tempDir,
  text,
  writeConfig,
  type RunningHttp,
} from "../helpers/proxy.js";

/** The rows replay.mjs's uniform_rows answers. */
function makeRows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `item-${i + 1}`,
    state: i % 3 === 0 ? "closed" : "open",
    created_at: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString(),
    score: (i * 37) % 100,
  }));
}

const dir = tempDir();
const empty = path.join(dir, "no-recorded-tools");
mkdirSync(empty);
const config = writeConfig(
  {
    mcpServers: {
      // Only uniform_rows (no recorded tools), at the default budget.
      replay: fixtureServer("replay.mjs", { REPLAY_EXTRA: "1", REPLAY_DIR: empty }),
      // The same tool with a budget of its own (PAGE_SIZE only makes it a distinct upstream).
      small: {
        ...fixtureServer("replay.mjs", { REPLAY_EXTRA: "1", REPLAY_DIR: empty, PAGE_SIZE: "10" }),
        resultBudget: 1_000,
      },
      everything: {
        ...npmServer("@modelcontextprotocol/server-everything", "stdio"),
        resultBudget: 100,
      },
    },
  },
  dir,
);

let proxy: RunningHttp;
let other: Client;

beforeAll(async () => {
  proxy = await startHttp(config, [], { "X-MCPX-Caller": "alice" });
  other = newClient("modern", "other");
  await other.connect(
    new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: { "X-MCPX-Caller": "bob" } },
    }),
  );
});
afterAll(async () => {
  await other?.close();
  await proxy?.close();
});

type Result = Awaited<ReturnType<Client["callTool"]>>;
const call = (args: Record<string, unknown>, client: Client = proxy.client) =>
  client.callTool({ name: "call", arguments: args });
const page = (args: Record<string, unknown>, client: Client = proxy.client) =>
  client.callTool({ name: "resources", arguments: args });
const blocks = (r: Result) =>
  r.content as { type: string; text?: string; data?: string; mimeType?: string }[];
const texts = (r: Result) =>
  blocks(r)
    .filter((b) => b.type === "text")
    .map((b) => b.text!);
const next = (notice: string) => {
  const m = /resources\(\{ uri: "([^"]+)", offset: (\d+) \}\)/.exec(notice);
  return m ? { uri: m[1]!, offset: Number(m[2]) } : undefined;
};

describe("the result budget", () => {
  it("sends 20,000 rows as the head that fits the default budget, with the total and a handle", async () => {
    const r = await call({ method: "replay.uniform_rows", arguments: { count: 20_000 } });
    const [notice, head] = texts(r);
    const shown = (decodeToon(head!) as unknown[]).length;
    expect(notice).toMatch(
      new RegExp(
        `^Result cut to fit the ${DEFAULTS.resultBudget}-token budget \\(≈\\d+ tokens in all\\): ${shown} of 20000 elements shown; next: resources\\(\\{ uri: "mcpx://results/[\\w-]+", offset: ${shown} \\}\\)`,
      ),
    );
    expect(decodeToon(head!)).toEqual(makeRows(shown));
    expect(countTokens(text(r))).toBeLessThanOrEqual(DEFAULTS.resultBudget);
    expect(r.structuredContent).toBeUndefined();
    // A page of it is within the budget too.
    const p = await page(next(notice!)!);
    expect(countTokens(text(p))).toBeLessThanOrEqual(DEFAULTS.resultBudget);
  });

  it("pages a cut result to the end, reassembling exactly the rows the tool returned", async () => {
    const first = await call({ method: "small.uniform_rows", arguments: { count: 1_500 } });
    const [notice, head] = texts(first);
    const got = [...(decodeToon(head!) as unknown[])];
    let at = next(notice!);
    let pages = 0;
    while (at) {
      const p = await page(at);
      const [heading, data] = texts(p);
      expect(countTokens(text(p))).toBeLessThanOrEqual(1_000);
      got.push(...(decodeToon(data!) as unknown[]));
      at = next(heading!);
      pages++;
    }
    expect(pages).toBeGreaterThan(10);
    expect(got).toEqual(makeRows(1_500));
  });

  it("keeps a handle private to its caller: to another it is like one that never existed", async () => {
    const r = await call({ method: "small.uniform_rows", arguments: { count: 500 } });
    const at = next(texts(r)[0]!)!;
    const mine = await page(at);
    expect(mine.isError).toBeFalsy();
    const theirs = await page(at, other);
    const missing = await page({ uri: "mcpx://results/AAAAAAAAAAAA" }, other);
    expect(theirs.isError).toBe(true);
    expect(text(theirs).replace(at.uri, "U")).toBe(
      text(missing).replace("mcpx://results/AAAAAAAAAAAA", "U"),
    );
  });

  it("passes images and resource links through untouched and uncounted", async () => {
    // everything's budget is 100 tokens: far less than the image's base64 text.
    const image = await call({ method: "everything.get-tiny-image" });
    const img = blocks(image).find((b) => b.type === "image");
    expect(img?.mimeType).toBe("image/png");
    expect(img?.data?.length).toBeGreaterThan(400);
    expect(text(image)).not.toContain("Result cut");
    const links = await call({ method: "everything.get-resource-links", arguments: { count: 10 } });
    expect(blocks(links).filter((b) => b.type === "resource_link")).toHaveLength(10);
    expect(text(links)).not.toContain("Result cut");
  });
});

describe("select", () => {
  it("projects the structured result before it is encoded", async () => {
    const r = await call({
      method: "replay.uniform_rows",
      arguments: { count: 20_000 },
      select: "rows[?state=='closed'].id | [:5]",
    });
    expect(texts(r)).toEqual(["[1,4,7,10,13]"]);
  });

  it("answers a bad expression with the error and the result's top-level shape", async () => {
    const r = await call({
      method: "replay.uniform_rows",
      arguments: { count: 40 },
      select: "rows[?state==",
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(
      /^select "rows\[\?state==" failed: .+\. The result's top-level shape: \{rows: array\(40\)\}\./,
    );
  });
});

describe("calls that succeed the first time", () => {
  it("runs server__tool with the arguments at the top level, noting it in _meta", async () => {
    const r = await call({ method: "everything__echo", message: "hi" });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe("Echo: hi");
    // A 2026-07-28 answer also carries the SDK's server identity; mcpx's note is its own key.
    expect(r._meta?.["mcpx/normalized"]).toEqual([
      "arguments from top level",
      'method "everything__echo" read as "everything.echo"',
    ]);
  });

  it("names an unknown property with the closest valid one, the signature and required keys", async () => {
    const r = await call({ method: "everything.echo", arguments: { msg: "hi" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('- "msg" is not a parameter; did you mean "message"?');
    expect(text(r)).toContain("Signature: everything.echo(message: string)");
    expect(text(r)).toContain("Required: message");
  });
});
