/**
 * Issue #24, item 3: an HTTP caller's roots stay inside what the operator allowed. server-
 * filesystem takes its client's roots instead of the folder it was started with, so a caller
 * answering roots/list with `file:///` could read any file, the mcpx config (every token)
 * included. Over HTTP the client's roots are held within the server's configured `roots`: kept
 * inside, narrowed when they contain one, dropped otherwise; a server without configured roots
 * gets none of them. A profile with `clientRoots: true` opts back in. Through the built `mcpx`,
 * with tokens and profiles, against the real server-filesystem.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool, connectHttp } from "../helpers/asking.js";
import {
  ERAS,
  npmServer,
  startHttp,
  tempDir,
  text,
  untilStarted,
  writeConfig,
  type Era,
  type RunningHttp,
} from "../helpers/proxy.js";

const dir = realpathSync(tempDir());
const allowed = path.join(dir, "allowed");
const inside = path.join(allowed, "inside");
mkdirSync(inside, { recursive: true });
writeFileSync(path.join(inside, "note.txt"), "inside the allowed folder");
const secret = path.join(dir, "secret.txt");
writeFileSync(secret, "outside the allowed folder");

const READER = "reader-token-0123456789abcdef";
const OPENER = "opener-token-0123456789abcdef";
const filesystem = npmServer("@modelcontextprotocol/server-filesystem", allowed);
const file = writeConfig(
  {
    mcpServers: {
      files: { ...filesystem, roots: ["allowed"] },
      bare: filesystem,
    },
    auth: { tokens: { [READER]: "reader", [OPENER]: "opener" } },
    profiles: {
      default: { servers: [] },
      reader: { servers: ["*"], readOnly: true },
      opener: { servers: ["*"], readOnly: true, clientRoots: true },
    },
    callers: { reader: "reader", opener: "opener" },
  },
  dir,
);

let http: RunningHttp;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  http = await startHttp(file, [], { authorization: `Bearer ${READER}` });
});
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  await http?.close();
});

/** An HTTP client of `era` with `token`, answering roots/list with `roots`. */
async function connect(era: Era, token: string, roots: string[]) {
  const { client } = askingClient(era, `${era}-${roots.join(",")}`, {
    abilities: ["roots"],
    roots: () => roots.map((uri) => ({ uri })),
  });
  await connectHttp(client, http.url, { authorization: `Bearer ${token}` });
  closers.push(() => client.close());
  await untilStarted(client);
  return client;
}

async function allowedDirs(client: Awaited<ReturnType<typeof connect>>, server: string) {
  const result = await callTool(client, `${server}.list_allowed_directories`);
  expect(result.isError, text(result)).toBeFalsy();
  return text(result).replace("Allowed directories:", "").trim().split("\n");
}

describe.each(ERAS)("a %s client over HTTP", (era) => {
  it("answering roots/list with file:/// cannot read outside the configured folder", async () => {
    const client = await connect(era, READER, ["file:///"]);
    for (const server of ["files", "bare"]) {
      expect(await allowedDirs(client, server)).toEqual([allowed]);
      for (const target of [secret, file]) {
        const result = await callTool(client, `${server}.read_text_file`, { path: target });
        expect(result.isError, `${server} read ${target}`).toBe(true);
        expect(text(result)).not.toContain("outside the allowed folder");
        expect(text(result)).not.toContain(READER);
      }
    }
    const ok = await callTool(client, "files.read_text_file", {
      path: path.join(inside, "note.txt"),
    });
    expect(text(ok)).toContain("inside the allowed folder");
  });
});

describe("roots held within the configured ones", () => {
  it("a root inside is kept; one containing the configured root is narrowed to it", async () => {
    const narrower = await connect("legacy", READER, [pathToFileURL(inside).href]);
    expect(await allowedDirs(narrower, "files")).toEqual([inside]);
    const wider = await connect("legacy", READER, [pathToFileURL(dir).href]);
    expect(await allowedDirs(wider, "files")).toEqual([allowed]);
  });

  it("a profile with clientRoots: true gives its caller's roots as they are", async () => {
    const client = await connect("legacy", OPENER, [pathToFileURL(dir).href]);
    expect(await allowedDirs(client, "files")).toEqual([dir]);
  });
});
