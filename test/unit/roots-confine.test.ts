/** confineRoots: an HTTP caller's roots held within the server's configured roots. */
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { confineRoots } from "../../src/upstream/roots.js";
import { tempDir } from "../helpers/temp.js";

const uri = (p: string) => pathToFileURL(p).href;

describe("confineRoots", () => {
  const dir = realpathSync(tempDir());
  const allowed = path.join(dir, "allowed");
  const sub = path.join(allowed, "sub");
  const other = path.join(dir, "other");
  mkdirSync(sub, { recursive: true });
  mkdirSync(other);
  const configured = [{ uri: uri(allowed) }];

  it("keeps a root inside, with its name; narrows one that contains the configured root", async () => {
    expect(await confineRoots([{ uri: uri(sub), name: "sub" }], configured)).toEqual([
      { uri: uri(sub), name: "sub" },
    ]);
    expect(await confineRoots([{ uri: "file:///" }], configured)).toEqual(configured);
    expect(await confineRoots([{ uri: uri(dir) }], configured)).toEqual(configured);
  });

  it("drops other folders, non-file URIs, remote hosts and traversal; none left: the configured", async () => {
    const outside = [
      { uri: uri(other) },
      { uri: "https://example.com/allowed" },
      { uri: `file://evil.example${allowed}` },
      { uri: `${uri(allowed)}/../other` },
      { uri: `${uri(allowed)}/%2e%2e/other` },
      { uri: "not a uri" },
    ];
    expect(await confineRoots(outside, configured)).toEqual(configured);
    expect(await confineRoots([...outside, { uri: uri(sub) }], configured)).toEqual([
      { uri: uri(sub) },
    ]);
  });

  it("follows symlinks: a link inside the allowed folder that points outside is dropped", async () => {
    const link = path.join(allowed, "link");
    symlinkSync(other, link);
    expect(await confineRoots([{ uri: uri(link) }], configured)).toEqual(configured);
    const back = path.join(other, "back");
    symlinkSync(sub, back);
    expect(await confineRoots([{ uri: uri(back) }], configured)).toEqual([{ uri: uri(sub) }]);
  });

  it("without configured roots, nothing is kept", async () => {
    expect(await confineRoots([{ uri: "file:///" }, { uri: uri(sub) }], [])).toEqual([]);
  });
});
