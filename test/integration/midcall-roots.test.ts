/**
 * Roots through the built `mcpx`, against server-filesystem: started with folder A, it takes the
 * roots of its client instead when the client has some (it reads them at initialize and on
 * `notifications/roots/list_changed`). A call from a client with roots [B] must see B; one from
 * a client without roots sees A, or the server's configured `roots`; a `shared` session never
 * takes a client's roots.
 */
import { mkdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askingClient, callTool, connectHttp } from "../helpers/asking.js";
import {
  ERAS,
  npmServer,
  startHttp,
  startStdio,
  tempDir,
  text,
  untilStarted,
  writeConfig,
  type Era,
  type RunningHttp,
} from "../helpers/proxy.js";

const dir = realpathSync(tempDir());
const [A, B, C] = ["A", "B", "C"].map((name) => {
  const folder = path.join(dir, name);
  mkdirSync(folder);
  return folder;
}) as [string, string, string];

const filesystem = npmServer("@modelcontextprotocol/server-filesystem", A);
/** fs: the default policy; configured: roots C when the client has none; shared: never the client's. */
const file = writeConfig(
  {
    mcpServers: {
      fs: filesystem,
      configured: { ...filesystem, roots: ["C"] },
      shared: { ...filesystem, session: "shared", roots: [C] },
    },
  },
  dir,
);

/** The folders server-filesystem allows, as list_allowed_directories says. */
async function allowed(client: Awaited<ReturnType<typeof connect>>, server: string) {
  const result = await callTool(client, `${server}.list_allowed_directories`);
  expect(result.isError, text(result)).toBeFalsy();
  return text(result).replace("Allowed directories:", "").trim().split("\n");
}

let http: RunningHttp;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  http = await startHttp(file);
});
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  await http?.close();
});

/** A client of `era`, with roots [B] or none, over stdio (its own mcpx) or HTTP. */
async function connect(transport: "stdio" | "http", era: Era, roots: boolean) {
  const name = `${transport}-${era}-${roots ? "roots" : "none"}`;
  const { client } = askingClient(era, name, {
    abilities: roots ? ["roots"] : [],
    roots: () => [{ uri: pathToFileURL(B).href, name: "B" }],
  });
  if (transport === "stdio") {
    const running = await startStdio(file, [], { era, client });
    closers.push(() => running.close());
  } else {
    await connectHttp(client, http.url);
    closers.push(() => client.close());
    await untilStarted(client);
  }
  return client;
}

describe.each(["stdio", "http"] as const)("over %s", (transport) => {
  describe.each(ERAS)("a %s client", (era) => {
    // Over HTTP a caller's roots are held within the configured ones (roots-boundary.test.ts):
    // B is in neither, so "fs" keeps its folder and "configured" gets C.
    const withB = transport === "stdio" ? { fs: B, configured: B } : { fs: A, configured: C };
    it(`with roots [B]: server-filesystem allows ${transport === "stdio" ? "B" : "A, or C"}, call after call`, async () => {
      const client = await connect(transport, era, true);
      // Isolated sessions: each call is a fresh server (a spare first, then new ones).
      for (let i = 0; i < 3; i++) expect(await allowed(client, "fs")).toEqual([withB.fs]);
      expect(await allowed(client, "configured")).toEqual([withB.configured]);
    });

    it("without roots: the folder it was started with, or the configured roots", async () => {
      const client = await connect(transport, era, false);
      for (let i = 0; i < 2; i++) expect(await allowed(client, "fs")).toEqual([A]);
      expect(await allowed(client, "configured")).toEqual([C]);
    });
  });
});

describe("a shared session", () => {
  it("keeps the configured roots whatever the caller's client has", async () => {
    const client = await connect("stdio", "legacy", true);
    expect(await allowed(client, "shared")).toEqual([C]);
    expect(await allowed(client, "shared")).toEqual([C]);
  });
});
